"""The parts of replay.py: transcript.py reads transcripts and matches messages against them, server.py
runs and frames the server. replay.py replays and records with them."""

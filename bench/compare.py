#!/usr/bin/env python3
"""Compares cloudnotes binaries in the same minutes: typing into a 1 KB and a 100 KB memo, and pipelined
updates, with the benchmark's own driver and data; or imports.

    bench/compare.py old=/tmp/old/cloudnotes new=.build/release/cloudnotes            # wall time
    bench/compare.py --callgrind old=/tmp/old/cloudnotes new=.build/release/cloudnotes  # instructions
    bench/compare.py --import 100000 old=/tmp/old/cloudnotes new=.build/release/cloudnotes

With --import N the binaries take turns importing the benchmark's N memos (its seed) into a fresh store:
each import's time, what it wrote for storage (`write_bytes` of /proc/PID/io) and the server's peak RSS;
each binary runs from a copy written just before, as with --startup.

With --typing-while-indexing N each binary in turn imports the benchmark's N memos, then types into a
1 KB memo while its background indexer indexes them: one `memo/update` after each pause of 0.35 s (longer
than the indexer's quiet period, so that each keystroke finds a chunk under way), timed one at a time.

With --typing-while-importing N each binary in turn serves a fresh store and types into a 1 KB memo while
it imports the benchmark's N memos: one `memo/update` every 0.05 s, timed one at a time, until the import
is answered.

With --typing-while-syncing N the remote is made as for --first-sync; then each binary in turn serves a
fresh store and types into a 1 KB memo while the server's first sync pulls the N memos: one `memo/update`
every 0.1 s, timed one at a time, until `sync/now` is answered.

With --startup N the first binary imports the benchmark's N memos into a store once; then the binaries
take turns starting a server on it, as `bench/run` times start-up: from the process's start to the
`initialize` response and to the first `detail/didShow` (20 starts a round, after 2 unrecorded ones),
each from a copy of its binary written just before.

With --first-sync N each binary publishes the benchmark's N memos to a folder remote of its own once
(through the shell: `cloudnotes import`, `cloudnotes sync`; binaries may write different sync formats);
then each binary in turn serves a fresh store and syncs it with its remote (`sync/configure`, which
starts a sync, then `sync/now`): the time until `sync/now` is answered, and what the server wrote for
storage meanwhile.

With --encryption N each binary in turn syncs the benchmark's N memos with a plain folder remote and an
encrypted one: a store's first sync pushing them, a fresh store's first sync pulling them, and one-edit
syncs through the server; the encrypted figures as ratios to the plain ones of the same rounds.

With --reads N the first binary imports the benchmark's N memos into a store once and waits for their
indexing; then the binaries take turns serving it: `memo/list` of the first page, `memo/select` of the
100 KB memos and of 1 KB ones, each request timed one at a time (with --callgrind: counted).

Wall time: the binaries take turns, round after round (the order rotates), on one store, so that the
machine's drift (its speed moves severalfold within an hour here) reaches them alike; it prints each
binary's median over the rounds and its ratio to the first binary.

With --callgrind each binary runs once under valgrind's callgrind: after the warm-up its counters are
zeroed, and the instructions of the timed requests are counted: the same count for the same binary and
input whatever the machine is doing. SQLite's share (`sqlite3_step`, inclusive) is printed apart, since
at valgrind's pace the background indexer finds the client quiet between requests and adds its work
there. Valgrind 3.19 cannot read the DWARF 5 of a Swift build: each binary is copied without its debug
sections (`strip --strip-debug`; its symbols stay).
"""

import argparse
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import compare_bulk, compare_encryption, compare_requests, compare_typing  # noqa: E402
from benchlib.data import generate_memos, memo_text  # noqa: E402
from benchlib.driver import BenchError  # noqa: E402

# The modes besides typing, in the order they are looked for: (option, its count's name, help, the mode).
MODES = (
    ("--import", "import_count", "time imports of the benchmark's N memos instead of typing", compare_bulk.imports),
    ("--startup", "startup_count", "time start-ups on a store of N imported memos", compare_bulk.startups),
    ("--typing-while-indexing", "indexing_count",
     "time keystrokes while the background indexer indexes N imported memos", compare_typing.typing_while_indexing),
    ("--typing-while-importing", "importing_count", "time keystrokes while the server imports N memos",
     compare_typing.typing_while_importing),
    ("--first-sync", "sync_count", "time a fresh store's first sync with a remote of N memos", compare_bulk.first_sync),
    ("--typing-while-syncing", "syncing_count",
     "time keystrokes during a fresh store's first sync with a remote of N memos", compare_typing.typing_while_syncing),
    ("--reads", "reads_count", "time list pages and selects on a store of N imported memos", compare_requests.reads),
    ("--encryption", "encryption_count", "time syncs of N memos with a plain and an encrypted remote",
     compare_encryption.encryption_cost),
)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binaries", nargs="+", metavar="NAME=PATH", help="the first is the baseline of the ratios")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--ops", type=int, default=300, help="timed 100 KB updates per run (1 KB: three times as many)")
    parser.add_argument("--pipelined", type=int, default=3000, help="pipelined updates per run; 0 leaves them out")
    parser.add_argument("--callgrind", action="store_true", help="count instructions instead of timing")
    for option, dest, help_text, _ in MODES:
        parser.add_argument(option, dest=dest, type=int, metavar="N", help=help_text)
    args = parser.parse_args()
    binaries = {}
    for item in args.binaries:
        name, sep, path = item.partition("=")
        if not sep or not os.access(path, os.X_OK):
            sys.exit(f"compare: expected NAME=PATH of an executable, got {item!r}")
        binaries[name] = os.path.abspath(path)
    if args.callgrind:
        args.ops = min(args.ops, 100)
    for _, dest, _, mode in MODES:
        if getattr(args, dest):
            with tempfile.TemporaryDirectory(prefix="compare-") as folder:
                mode(binaries, folder, args)
            return
    memos, _ = generate_memos(1000, 20240521, "xylophone")
    texts = {"100 KB": memo_text(memos[-2]), "1 KB": memo_text(memos[-1])}
    with tempfile.TemporaryDirectory(prefix="compare-store-") as folder:
        store = os.path.join(folder, "store.sqlite")
        (compare_requests.callgrind if args.callgrind else compare_requests.wall_time)(binaries, store, texts, args)


if __name__ == "__main__":
    try:
        main()
    except BenchError as error:
        sys.exit(f"compare: {error}")

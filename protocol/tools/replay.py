#!/usr/bin/env python3
"""Replays CloudNotes conversation transcripts against the built server.

Usage:
    python3 protocol/tools/replay.py [--bin PATH] [--timeout SECONDS] [--framing lines|content-length] FILE...
    python3 protocol/tools/replay.py --record FILE      # print what the server actually answers

Each FILE is a transcript (see protocol/README.md, "Example transcripts"):

    # a comment                   ignored; "# exit: N" sets the expected exit code (the last one wins)
    > {"jsonrpc":"2.0",...}       a line the client sends, verbatim ("<$name>" strings are substituted)
    >raw some text                sends "some text" verbatim (bad-input demos); nothing is substituted
    >bytes {"a":1}\\r             sends the text after decoding \\xHH \\r \\n \\t \\0 \\\\ escapes (invalid UTF-8, NUL, CR)
    < {"jsonrpc":"2.0",...}       a line the server must answer next

Blank lines are ignored. In expected lines the string "<any>" matches any value, and "<$name>" binds a
variable on first use (to any value) and must be equal at every later use; inside a longer string
("No memo with id <$n>") an already bound string variable is substituted. Objects must have exactly the
expected keys; arrays exactly the expected length; numbers, strings, booleans and null must be equal (and
of the same JSON type).

Every transcript runs against a fresh `cloudnotes serve` on a fresh temporary store, in that temporary
folder (so relative paths in requests land there). Steps run in file order: a client line is written as soon
as it is reached; an expected line waits (up to the timeout) for the next line the server writes. stdin is
closed right after the last client line, so the server must still answer what it was sent at end of input;
after the last expected line it must write nothing more, close stdout and exit with the expected code
(default 0).

With --framing content-length the session speaks the LSP base protocol instead of JSON lines: each line
a client step sends goes as one body after its `Content-Length` header, exactly as the JSON-lines server
would read it (without its `\\n`, and without a `\\r` before it). Blank lines, which JSON lines ignore,
are not sent: that framing has no such thing. Each body the server writes must come after exactly
`Content-Length: N\\r\\n\\r\\n`, and is matched as a line would be. The expected lines are the same in
both framings.

The binary is --bin, else $CLOUDNOTES_BIN, else <repo>/.build/debug/cloudnotes. Exit code 0 only when every
transcript passes.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

# The parts live in replaylib/ beside this file; it is found from here also when this file is loaded
# by path (as Tests/EndToEnd/test_transcripts.py does) rather than run.
_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)

from replaylib.server import (  # noqa: E402  (re-exported: replay.framed, replay.FRAMINGS, ...)
    FRAMINGS, SERVER_HEADER, BadFrame, ServerProcess, describe_message, framed, visible)
from replaylib.transcript import (  # noqa: E402  (re-exported: replay.match, replay.substitute, ...)
    ANY, CLIENT_VARIABLE, EMBEDDED_VARIABLE, EXIT_COMMENT, VARIABLE, Step, Transcript, TranscriptError,
    decode_escapes, kind_of, match, parse_transcript, short, substitute)

REPO = Path(__file__).resolve().parents[2]
DEFAULT_BIN = REPO / ".build" / "debug" / "cloudnotes"
DEFAULT_TIMEOUT = 10.0


def default_binary() -> str:
    return os.environ.get("CLOUDNOTES_BIN") or str(DEFAULT_BIN)


# --------------------------------------------------------------------------------------------------
# Replaying


@dataclass
class Result:
    path: Path
    ok: bool
    report: str = ""
    # Every message exchanged, in order: ("client", parsed JSON, or None for a line that is not JSON) or
    # ("server", parsed JSON).
    exchanged: List[Tuple[str, Any]] = field(default_factory=list)
    exit_code: Optional[int] = None


def replay(path: Path, binary: Optional[str] = None, timeout: float = DEFAULT_TIMEOUT,
           framing: str = "lines") -> Result:
    """Runs one transcript against a fresh server, in `framing`; the result says OK or shows the first
    difference."""
    binary = binary or default_binary()
    try:
        transcript = parse_transcript(path)
    except (TranscriptError, UnicodeDecodeError) as error:
        return Result(path, False, f"bad transcript: {error}")
    if not os.access(binary, os.X_OK):
        return Result(path, False, f"no executable server at {binary} (build it, or pass --bin / set CLOUDNOTES_BIN)")

    workdir = Path(tempfile.mkdtemp(prefix="cloudnotes-replay-"))
    server = ServerProcess(binary, workdir, framing)
    result = Result(path, False)
    variables: Dict[str, Any] = {}
    history: List[str] = []

    def fail(lineno: Optional[int], message: str) -> Result:
        where = f"{path}:{lineno}" if lineno else str(path)
        context = "\n".join("    " + line for line in history[-6:])
        result.report = f"{where}: {message}"
        if context:
            result.report += f"\n  last lines exchanged:\n{context}"
        tail = server.stderr_tail()
        if tail:
            result.report += "\n  server stderr (tail):\n" + "\n".join("    " + line for line in tail.splitlines())
        return result

    # End of input comes right after the last client line: the server must still answer everything it
    # was sent (issue: "end of stdin: finish what is in flight, flush, exit 0").
    last_send = max((i for i, step in enumerate(transcript.steps) if step.kind != "expect"), default=-1)
    if last_send < 0:
        server.close_input()

    try:
        for position, step in enumerate(transcript.steps):
            if step.kind in ("send", "raw"):
                if step.kind == "send":
                    try:
                        text = substitute(step.text, variables, step.lineno)
                    except TranscriptError as error:
                        return fail(step.lineno, str(error))
                    data = (text + "\n").encode("utf-8")
                    try:
                        result.exchanged.append(("client", json.loads(text)))
                    except json.JSONDecodeError:
                        result.exchanged.append(("client", None))
                    history.append("> " + text)
                else:
                    data = step.payload
                    try:  # a raw line may still be a message (e.g. one ending in \r\n)
                        result.exchanged.append(("client", json.loads(data.decode("utf-8"))))
                    except (UnicodeDecodeError, json.JSONDecodeError):
                        result.exchanged.append(("client", None))
                    shown = visible(data[:-1])
                    history.append(">raw " + (shown if len(shown) <= 200 else shown[:200] + "…"))
                problem = server.send(data)
                if problem:
                    return fail(step.lineno, f"could not send the client line: {problem}")
                if position == last_send:
                    server.close_input()
                continue

            status, raw = server.next_message(timeout)
            if status == "timeout":
                return fail(step.lineno, f"timed out after {timeout:g} s waiting for\n  expected: {step.text}")
            if status == "eof":
                code = server.process.wait(timeout=timeout)
                return fail(step.lineno, f"the server closed stdout (exit code {code}) instead of\n  expected: {step.text}")
            if status == "bad-frame":
                return fail(step.lineno, f"the server wrote {raw}\n  expected: {step.text}")
            assert raw is not None
            actual, shown = describe_message(raw)
            if actual is None:
                return fail(step.lineno, f"the server wrote a line that is not UTF-8 JSON\n  expected: {step.text}\n  actual:   {shown}")
            result.exchanged.append(("server", actual))
            problem = match(step.payload, actual, variables)
            if problem:
                return fail(step.lineno, f"mismatch at {problem}\n  expected: {step.text}\n  actual:   {shown}")
            history.append("< " + shown)

        # The transcript is over and the input ended: the server must say nothing more, then exit as expected.
        status, raw = server.next_message(timeout)
        if status == "message":
            assert raw is not None
            _, shown = describe_message(raw)
            return fail(None, f"after the last transcript line the server wrote an unexpected line\n  actual:   {shown}")
        if status == "bad-frame":
            return fail(None, f"after the last transcript line the server wrote {raw}")
        if status == "timeout":
            return fail(None, f"the server did not close stdout within {timeout:g} s after end of input")
        try:
            code = server.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return fail(None, f"the server did not exit within {timeout:g} s after end of input")
        result.exit_code = code
        if code != transcript.exit_code:
            return fail(None, f"exit code {code}, expected {transcript.exit_code}")
        result.ok = True
        result.report = "OK"
        return result
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


# --------------------------------------------------------------------------------------------------
# Recording (a help for writing transcripts)


def record(path: Path, binary: str, quiet: float = 0.5, framing: str = "lines") -> int:
    """Sends the client lines of `path` in `framing` and prints every line with what the server really
    answered."""
    transcript = parse_transcript(path)
    workdir = Path(tempfile.mkdtemp(prefix="cloudnotes-record-"))
    server = ServerProcess(binary, workdir, framing)
    variables: Dict[str, Any] = {}
    steps = transcript.steps
    try:
        for position, step in enumerate(steps):
            if step.kind == "expect":
                continue
            if step.kind == "send":
                text = substitute(step.text, variables, step.lineno)
                print("> " + step.text)
                data = (text + "\n").encode("utf-8")
                try:
                    request_id = json.loads(text).get("id")
                except (json.JSONDecodeError, AttributeError):
                    request_id = None
            else:
                print((">raw " if step.payload == (step.text + "\n").encode() else ">bytes ") + step.text)
                data, request_id = step.payload, None
            if server.send(data):
                print("# (the server stopped reading)")
                break
            deadline = time.monotonic() + DEFAULT_TIMEOUT
            answered: List[Any] = []
            while True:
                wait = quiet if request_id is None else max(0.0, deadline - time.monotonic())
                status, raw = server.next_message(wait)
                if status == "bad-frame":
                    print(f"# (the server wrote {raw})")
                if status != "message" or raw is None:
                    break
                actual, shown = describe_message(raw)
                answered.append(actual)
                print("< " + shown)
                if isinstance(actual, dict) and "id" in actual and "method" not in actual and actual["id"] == request_id:
                    break
            # Bind the variables of the expected lines that follow, against the first answer each matches.
            for later in steps[position + 1 :]:
                if later.kind != "expect":
                    break
                for actual in answered:
                    trial = dict(variables)
                    if match(later.payload, actual, trial) is None:
                        variables.update(trial)
                        break
        server.close_input()
        while True:
            status, raw = server.next_message(DEFAULT_TIMEOUT)
            if status == "bad-frame":
                print(f"# (the server wrote {raw})")
            if status != "message" or raw is None:
                break
            print("< " + describe_message(raw)[1])
        code = server.process.wait(timeout=DEFAULT_TIMEOUT)
        print(f"# exit: {code}")
        return 0
    finally:
        server.stop()
        shutil.rmtree(workdir, ignore_errors=True)


# --------------------------------------------------------------------------------------------------


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description="Replay CloudNotes transcripts against the server.")
    parser.add_argument("files", nargs="+", type=Path, metavar="FILE")
    parser.add_argument("--bin", default=None, help=f"the cloudnotes binary (default: $CLOUDNOTES_BIN, else {DEFAULT_BIN})")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds to wait for each server line")
    parser.add_argument("--record", action="store_true",
                        help="print the client lines with what the server actually answers, instead of checking")
    parser.add_argument("--framing", choices=FRAMINGS, default="lines",
                        help="send each client line as a JSON line (default) or as a Content-Length body")
    args = parser.parse_args(argv)
    binary = os.path.abspath(args.bin) if args.bin else default_binary()

    if args.record:
        for path in args.files:
            record(path, binary, framing=args.framing)
        return 0

    failures = 0
    for path in args.files:
        started = time.monotonic()
        result = replay(path, binary, args.timeout, args.framing)
        elapsed = time.monotonic() - started
        if result.ok:
            print(f"OK    {path} ({elapsed:.1f} s)")
        else:
            failures += 1
            print(f"FAIL  {path}\n  {result.report}\n")
    print(f"{len(args.files) - failures} of {len(args.files)} transcripts passed")
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())

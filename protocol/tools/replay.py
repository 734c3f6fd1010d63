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
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

REPO = Path(__file__).resolve().parents[2]
DEFAULT_BIN = REPO / ".build" / "debug" / "cloudnotes"
DEFAULT_TIMEOUT = 10.0
FRAMINGS = ("lines", "content-length")

ANY = "<any>"
VARIABLE = re.compile(r"^<\$([A-Za-z_][A-Za-z0-9_]*)>$")
EMBEDDED_VARIABLE = re.compile(r"<\$([A-Za-z_][A-Za-z0-9_]*)>")
CLIENT_VARIABLE = re.compile(r'"<\$([A-Za-z_][A-Za-z0-9_]*)>"')
EXIT_COMMENT = re.compile(r"^#\s*exit:\s*(-?\d+)\s*$")


def default_binary() -> str:
    return os.environ.get("CLOUDNOTES_BIN") or str(DEFAULT_BIN)


# --------------------------------------------------------------------------------------------------
# Transcripts


class TranscriptError(Exception):
    """The transcript itself is malformed."""


@dataclass
class Step:
    kind: str  # "send" (JSON with substitution), "raw" (bytes, verbatim) or "expect"
    lineno: int
    text: str  # as written in the transcript, after the prefix
    payload: Any = None  # raw: the bytes to send; expect: the parsed JSON


@dataclass
class Transcript:
    path: Path
    steps: List[Step]
    exit_code: int = 0


def decode_escapes(text: str, lineno: int) -> bytes:
    """The bytes a `>bytes` line stands for: UTF-8 text with \\xHH, \\r, \\n, \\t, \\0 and \\\\ escapes."""
    out = bytearray()
    i = 0
    simple = {"r": b"\r", "n": b"\n", "t": b"\t", "0": b"\0", "\\": b"\\"}
    while i < len(text):
        ch = text[i]
        if ch != "\\":
            out += ch.encode("utf-8")
            i += 1
            continue
        nxt = text[i + 1 : i + 2]
        if nxt in simple:
            out += simple[nxt]
            i += 2
        elif nxt == "x" and re.fullmatch(r"[0-9A-Fa-f]{2}", text[i + 2 : i + 4] or ""):
            out.append(int(text[i + 2 : i + 4], 16))
            i += 4
        else:
            raise TranscriptError(f"line {lineno}: unknown escape {text[i:i + 4]!r} in a >bytes line")
    return bytes(out)


def parse_transcript(path: Path) -> Transcript:
    steps: List[Step] = []
    exit_code = 0
    with open(path, "rb") as handle:
        lines = handle.read().decode("utf-8").split("\n")
    for lineno, line in enumerate(lines, start=1):
        if line.endswith("\r"):
            line = line[:-1]
        if not line.strip():
            continue
        if line.startswith("#"):
            match = EXIT_COMMENT.match(line)
            if match:
                exit_code = int(match.group(1))
            continue
        if line.startswith(">raw "):
            steps.append(Step("raw", lineno, line[5:], (line[5:] + "\n").encode("utf-8")))
        elif line.startswith(">bytes "):
            steps.append(Step("raw", lineno, line[7:], decode_escapes(line[7:], lineno) + b"\n"))
        elif line.startswith("> "):
            steps.append(Step("send", lineno, line[2:].strip()))
        elif line.startswith("< "):
            text = line[2:].strip()
            try:
                expected = json.loads(text)
            except json.JSONDecodeError as error:
                raise TranscriptError(f"{path}:{lineno}: expected line is not JSON: {error}") from None
            steps.append(Step("expect", lineno, text, expected))
        else:
            raise TranscriptError(f"{path}:{lineno}: a line starts with '> ', '>raw ', '>bytes ', '< ' or '#': {line[:60]!r}")
    return Transcript(path, steps, exit_code)


# --------------------------------------------------------------------------------------------------
# Matching


def kind_of(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def short(value: Any, limit: int = 120) -> str:
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def match(expected: Any, actual: Any, variables: Dict[str, Any], path: str = "$") -> Optional[str]:
    """None when `actual` matches `expected`, else where and how they differ. Binds new variables."""
    if isinstance(expected, str):
        if expected == ANY:
            return None
        variable = VARIABLE.match(expected)
        if variable:
            name = variable.group(1)
            if name not in variables:
                variables[name] = actual
                return None
            if kind_of(variables[name]) == kind_of(actual) and variables[name] == actual:
                return None
            return f"{path}: expected <${name}> = {short(variables[name])}, got {short(actual)}"
        if EMBEDDED_VARIABLE.search(expected):
            # "No memo with id <$n>": bound string variables are substituted inside a longer string.
            unbound = [name for name in EMBEDDED_VARIABLE.findall(expected)
                       if not isinstance(variables.get(name), str)]
            if unbound:
                return f"{path}: <${unbound[0]}> is used inside a string before it is bound to a string"
            expected = EMBEDDED_VARIABLE.sub(lambda found: variables[found.group(1)], expected)
    if kind_of(expected) != kind_of(actual):
        return f"{path}: expected {kind_of(expected)} {short(expected)}, got {kind_of(actual)} {short(actual)}"
    if isinstance(expected, dict):
        missing = sorted(set(expected) - set(actual))
        extra = sorted(set(actual) - set(expected))
        if missing or extra:
            parts = []
            if missing:
                parts.append("missing keys " + ", ".join(missing))
            if extra:
                parts.append("unexpected keys " + ", ".join(extra))
            return f"{path}: " + "; ".join(parts)
        for key in expected:
            problem = match(expected[key], actual[key], variables, f"{path}.{key}")
            if problem:
                return problem
        return None
    if isinstance(expected, list):
        if len(expected) != len(actual):
            return f"{path}: expected {len(expected)} elements, got {len(actual)}"
        for index, (want, got) in enumerate(zip(expected, actual)):
            problem = match(want, got, variables, f"{path}[{index}]")
            if problem:
                return problem
        return None
    if expected != actual:
        if short(expected) == short(actual):  # differences invisible on screen (U+202F, NBSP, ...)
            return f"{path}: expected {json.dumps(expected)}, got {json.dumps(actual)}"
        return f"{path}: expected {short(expected)}, got {short(actual)}"
    return None


def substitute(text: str, variables: Dict[str, Any], lineno: int) -> str:
    """A client line with every "<$name>" string replaced by the JSON of the bound value."""

    def replace(found: "re.Match[str]") -> str:
        name = found.group(1)
        if name not in variables:
            raise TranscriptError(f"line {lineno}: <${name}> is used before the server's answers bound it")
        return json.dumps(variables[name], ensure_ascii=False)

    return CLIENT_VARIABLE.sub(replace, text)


# --------------------------------------------------------------------------------------------------
# Framing

# Exactly the header line the server writes before each body (a blank line follows), and no other.
SERVER_HEADER = re.compile(rb"Content-Length: (0|[1-9][0-9]*)\r\n")


def framed(data: bytes, framing: str) -> bytes:
    """The bytes a client step sends in `framing`: as they are in JSON lines; in Content-Length framing,
    each of their lines as one body after its header, as the JSON-lines server would read that line
    (without its line end). Blank lines are left out: JSON lines ignore them, and a body cannot be blank."""
    if framing == "lines":
        return data
    lines = data.split(b"\n")
    if lines[-1] == b"":
        lines.pop()  # the end of the last line, not a line
    out = bytearray()
    for line in lines:
        body = line[:-1] if line.endswith(b"\r") else line
        if body.strip(b" \t"):
            out += b"Content-Length: %d\r\n\r\n" % len(body) + body
    return bytes(out)


@dataclass
class BadFrame:
    """Server output that is not `Content-Length: N\\r\\n\\r\\n` and N bytes: what it was."""

    problem: str


# --------------------------------------------------------------------------------------------------
# The server process


class ServerProcess:
    """A `cloudnotes serve` on a fresh store, spoken to in `framing`, with stdout read message by message
    on a thread of its own."""

    def __init__(self, binary: str, workdir: Path, framing: str = "lines"):
        self.workdir = workdir
        self.framing = framing
        self.stderr_path = workdir / "stderr.log"
        self._stderr = open(self.stderr_path, "wb")
        env = dict(os.environ)
        env.pop("CLOUDNOTES_STORE", None)
        self.process = subprocess.Popen(
            [binary, "serve", "--store", str(workdir / "store" / "notes.sqlite")],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._stderr, cwd=workdir, env=env)
        # Each message the server wrote (a line, or a body), then None at the end of output; a BadFrame
        # instead when its framing broke.
        self.messages: "queue.Queue[Any]" = queue.Queue()
        self._reader = threading.Thread(target=self._read_lines if framing == "lines" else self._read_bodies,
                                        daemon=True)
        self._reader.start()

    def _read_lines(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.messages.put(line)
        self.messages.put(None)  # end of output

    def _read_bodies(self) -> None:
        stream = self.process.stdout
        assert stream is not None
        while True:
            header = stream.readline(64)  # longer than any header line the server writes
            if not header:
                break
            found = SERVER_HEADER.fullmatch(header)
            blank = stream.read(2) if found else b""
            if not found or blank != b"\r\n":
                problem = f"a header that is not exactly 'Content-Length: N\\r\\n\\r\\n': {visible(header + blank)}"
            else:
                length = int(found.group(1))
                body = stream.read(length)
                if len(body) == length:
                    self.messages.put(body)
                    continue
                problem = f"output that ended after {len(body)} of the {length} bytes of a body"
            self.messages.put(BadFrame(problem))
            # Where the next body would start cannot be known: the rest is drained unread, so that the
            # server never blocks on a full pipe.
            while stream.read(1 << 16):
                pass
            break
        self.messages.put(None)  # end of output

    def send(self, data: bytes) -> Optional[str]:
        """Writes a client step's bytes in the session's framing; an error string when the server no
        longer reads."""
        try:
            assert self.process.stdin is not None
            self.process.stdin.write(framed(data, self.framing))
            self.process.stdin.flush()
            return None
        except (BrokenPipeError, OSError) as error:
            return f"the server stopped reading ({error.__class__.__name__})"

    def close_input(self) -> None:
        try:
            assert self.process.stdin is not None
            self.process.stdin.close()
        except (BrokenPipeError, OSError):
            pass

    def next_message(self, timeout: float) -> Tuple[str, Any]:
        """("message", bytes), ("bad-frame", what it was), ("eof", None) or ("timeout", None)."""
        try:
            message = self.messages.get(timeout=timeout)
        except queue.Empty:
            return "timeout", None
        if message is None:
            self.messages.put(None)  # stays at end of output
            return "eof", None
        if isinstance(message, BadFrame):
            return "bad-frame", message.problem
        return "message", message

    def stderr_tail(self, count: int = 15) -> str:
        try:
            self._stderr.flush()
            text = self.stderr_path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-count:])

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self._stderr.close()


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


def visible(data: bytes) -> str:
    """Bytes as text for reports: invalid UTF-8 and control characters as \\xHH escapes."""
    text = data.decode("utf-8", errors="backslashreplace")
    return "".join(f"\\x{ord(ch):02x}" if ord(ch) < 0x20 or ord(ch) == 0x7F else ch for ch in text)


def describe_message(raw: bytes) -> Tuple[Optional[Any], str]:
    """The parsed JSON of a server message, a line or a body (or None), and its text for reports."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None, repr(raw[:200])
    stripped = text[:-1] if text.endswith("\n") else text
    try:
        return json.loads(stripped), stripped
    except json.JSONDecodeError:
        return None, stripped


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

"""The server side of a replay: a `cloudnotes serve` on a fresh store, the framing of what is sent to it,
and how its messages read in reports."""

from __future__ import annotations

import json
import os
import queue
import re
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional, Tuple

FRAMINGS = ("lines", "content-length")


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

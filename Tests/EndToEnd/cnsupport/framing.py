"""The protocol's two framings (protocol/README.md, "Framing"), as bytes on the wire.

Reading is strict: the server must write exactly what the README promises, and a client must find each
message without guessing. What is not that is a `ProtocolViolation`, or `CutShort` where the output ended
inside a message."""

from __future__ import annotations

import io
import re

LINES = "lines"
CONTENT_LENGTH = "content-length"
FRAMINGS = (LINES, CONTENT_LENGTH)

# Exactly the header line the server writes before each body (then a blank line): no other header, no
# leading zero, no other spacing.
_SERVER_HEADER = re.compile(rb"Content-Length: (0|[1-9][0-9]*)\r\n")
_HEADER_LIMIT = 64  # longer than any header line the server writes; a longer one is not read in full


class ProtocolViolation(AssertionError):
    """The server wrote what is not a valid protocol message."""


class CutShort(Exception):
    """The server's output ended inside a message: a protocol violation, unless the test killed it."""


def check_framing(framing: str) -> str:
    if framing not in FRAMINGS:
        raise ValueError(f"no framing {framing!r}; one of {FRAMINGS}")
    return framing


def frame(payload: bytes, framing: str, newline: bytes | None = None) -> bytes:
    """`payload` as one message on the wire, sent as it is.

    `newline` is the line end of the framing itself: the end of the line in JSON lines (default "\\n";
    "\\r\\n" is accepted too, and b"" leaves a last line unterminated), the end of each header line in
    Content-Length framing (default "\\r\\n"; a bare "\\n" is accepted too)."""
    if check_framing(framing) == LINES:
        return payload + (b"\n" if newline is None else newline)
    end = b"\r\n" if newline is None else newline
    if end not in (b"\r\n", b"\n"):
        raise ValueError(f"a header line ends in \\r\\n or \\n, not {end!r}")
    return b"Content-Length: %d%s%s" % (len(payload), end, end) + payload


def read_line(stream: io.BufferedReader) -> bytes | None:
    """The next line the server wrote, without its newline; None at the end of its output."""
    line = stream.readline()
    if not line:
        return None
    if not line.endswith(b"\n"):
        raise CutShort(f"stdout line not terminated by a newline: {line[:300]!r}")
    return line[:-1]


def read_body(stream: io.BufferedReader) -> bytes | None:
    """The next Content-Length body the server wrote; None at the end of its output.

    Strict: exactly `Content-Length: N\\r\\n\\r\\n`, then N bytes. Anything else is a ProtocolViolation:
    the README promises that header and no other, and a client must find each body without guessing."""
    header = stream.readline(_HEADER_LIMIT)
    if not header:
        return None
    found = _SERVER_HEADER.fullmatch(header)
    if found is None:
        if not header.endswith(b"\n") and len(header) < _HEADER_LIMIT:
            raise CutShort(f"stdout ended inside a header: {header!r}")
        raise ProtocolViolation(f"stdout frame does not start with exactly 'Content-Length: N\\r\\n': {header!r}")
    blank = stream.read(2)
    if blank != b"\r\n":
        if b"\r\n".startswith(blank):  # read() returns short only at the end of the output
            raise CutShort(f"stdout ended inside a header: {header + blank!r}")
        raise ProtocolViolation(f"stdout header not followed by exactly one blank line: {header + blank!r}")
    length = int(found.group(1))
    body = stream.read(length)
    if len(body) < length:
        raise CutShort(f"stdout ended after {len(body)} of the {length} bytes of a body")
    return body


# How to read each framing's messages from the server's stdout.
READERS = {LINES: read_line, CONTENT_LENGTH: read_body}

"""Transcripts: a transcript file read into steps, and the server's messages matched against the
expected lines (the format is in replay.py's docstring)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Dict, List, Optional

ANY = "<any>"
VARIABLE = re.compile(r"^<\$([A-Za-z_][A-Za-z0-9_]*)>$")
EMBEDDED_VARIABLE = re.compile(r"<\$([A-Za-z_][A-Za-z0-9_]*)>")
CLIENT_VARIABLE = re.compile(r'"<\$([A-Za-z_][A-Za-z0-9_]*)>"')
EXIT_COMMENT = re.compile(r"^#\s*exit:\s*(-?\d+)\s*$")


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

"""End-to-end harness for the `cloudnotes` server.

Spawns the built binary with pipes, speaks JSON-RPC 2.0 over JSON lines or Content-Length framing (the
`framing` fixture), and checks EVERY message the server writes to stdout: framed exactly as documented,
valid UTF-8, a JSON object, `"jsonrpc": "2.0"`, and valid against `protocol/protocol.schema.json` (results
against `methods[m].result`, notifications' params against `methods[m].params`, error codes among
`errors`).  A message that is not that fails the test.

`Mirror` applies the list / selection / detail notifications the way a front end would, so tests can
assert that after each request the mirror holds exactly what `memo/list` returns (split-view rule 7).
"""

from __future__ import annotations

import io
import json
import os
import queue
import re
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import jsonschema
import pytest

REPO = Path(__file__).resolve().parents[2]

try:  # Hypothesis' example database, kept between runs, under the git-ignored .build/: not in $TMPDIR,
    # which the tests must leave as they found it (scripts/test checks)
    from hypothesis.configuration import set_hypothesis_home_dir
    set_hypothesis_home_dir(REPO / ".build" / "hypothesis" / "end-to-end")
except ImportError:  # pragma: no cover - older Hypothesis
    pass

BINARY = os.environ.get("CLOUDNOTES_BIN", str(REPO / ".build" / "debug" / "cloudnotes"))
SCHEMA_PATH = REPO / "protocol" / "protocol.schema.json"
SCHEMA: dict = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
SAMPLE_JSON = Path(os.environ.get("CLOUDNOTES_SAMPLE", str(REPO.parent / "shared" / "samples" / "sample.json")))



def sample_path() -> Path:
    """The original app's sample import file: beside the repository, or on this workplace's shared disk."""
    for candidate in (SAMPLE_JSON, Path("/work/shared/samples/sample.json")):
        if candidate.exists():
            return candidate
    pytest.fail(f"the sample import file is missing: {SAMPLE_JSON}")


DEFAULT_TIMEOUT = 10.0
ERROR_CODES = {entry["code"] for entry in SCHEMA["errors"]}
REQUEST_METHODS = {m for m, d in SCHEMA["methods"].items() if d["kind"] == "request"}
CLIENT_NOTIFICATIONS = {
    m for m, d in SCHEMA["methods"].items() if d["kind"] == "notification" and d["direction"].startswith("client")
}
SERVER_NOTIFICATIONS = {
    m for m, d in SCHEMA["methods"].items() if d["kind"] == "notification" and d["direction"].startswith("server")
}
ISO_MS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
UUID_LOWER = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")

# Error codes by name, from the schema's `errors` list.
CODE = {entry["name"]: entry["code"] for entry in SCHEMA["errors"]}
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
SERVER_NOT_INITIALIZED = -32002
REQUEST_CANCELLED = -32800
MEMO_NOT_FOUND = CODE.get("MemoNotFound", -33001)
VERSION_CONFLICT = CODE.get("VersionConflict", -33002)
IMPORT_INVALID = CODE.get("ImportInvalid", -33003)
EXPORT_FAILED = CODE.get("ExportFailed", -33004)


# ---------------------------------------------------------------------------------------------------
# Schema validation
# ---------------------------------------------------------------------------------------------------

_validators: dict[str, jsonschema.Draft202012Validator] = {}


def _pointer_escape(name: str) -> str:
    return name.replace("~", "~0").replace("/", "~1")


def validator_for(method: str, part: str) -> jsonschema.Draft202012Validator:
    """A validator for `methods[method][part]`, resolving `$ref`s against the whole schema document."""
    key = f"{method}#{part}"
    if key not in _validators:
        root = dict(SCHEMA)
        root["$ref"] = f"#/methods/{_pointer_escape(method)}/{part}"
        _validators[key] = jsonschema.Draft202012Validator(root, format_checker=jsonschema.FormatChecker())
    return _validators[key]


def _schema_problems(method: str, part: str, value: Any) -> list[str]:
    errors = sorted(validator_for(method, part).iter_errors(value), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(map(str, e.absolute_path)) or '$'}: {e.message}" for e in errors]


def _timestamp_problems(value: Any, path: str = "$") -> list[str]:
    """Every createdAt / modifiedAt must be an ISO 8601 UTC string with milliseconds; every id a lower-case UUID."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, member in value.items():
            if key in ("createdAt", "modifiedAt") and isinstance(member, str) and not ISO_MS.match(member):
                found.append(f"{path}.{key}: {member!r} is not an ISO 8601 timestamp with milliseconds")
            found += _timestamp_problems(member, f"{path}.{key}")
    elif isinstance(value, list):
        for index, member in enumerate(value):
            found += _timestamp_problems(member, f"{path}[{index}]")
    return found


class ProtocolViolation(AssertionError):
    pass


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def id_key(value: Any) -> tuple | None:
    """A hashable key for a JSON-RPC id (1 and "1" are different ids)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return ("n", value)
    if isinstance(value, float) and value.is_integer():
        return ("n", int(value))
    if isinstance(value, str):
        return ("s", value)
    return None


def wait_for_progress_report(srv, token, minimum=1, timeout=60):
    """Reads until a `report` of `token` at `minimum` percent or more: the work (an import, an export) is
    then under way."""
    deadline = time.monotonic() + timeout
    while True:
        message = srv.next_message(max(0.1, deadline - time.monotonic()))
        if message.get("method") == "$/progress" and message["params"]["token"] == token:
            value = message["params"]["value"]
            assert value["kind"] != "end", "the work ended before it could be overtaken"
            if value["kind"] == "report" and value.get("percentage", 0) >= minimum:
                return
        elif "method" not in message:
            srv.stray[id_key(message["id"])] = message
        else:
            srv.stray_notes.append(message)


# ---------------------------------------------------------------------------------------------------
# Framing (protocol/README.md, "Framing")
# ---------------------------------------------------------------------------------------------------

LINES = "lines"
CONTENT_LENGTH = "content-length"
FRAMINGS = (LINES, CONTENT_LENGTH)

# Exactly the header line the server writes before each body (then a blank line): no other header, no
# leading zero, no other spacing.
_SERVER_HEADER = re.compile(rb"Content-Length: (0|[1-9][0-9]*)\r\n")
_HEADER_LIMIT = 64  # longer than any header line the server writes; a longer one is not read in full


class CutShort(Exception):
    """The server's output ended inside a message: a protocol violation, unless the test killed it."""


def frame(payload: bytes, framing: str, newline: bytes | None = None) -> bytes:
    """`payload` as one message on the wire, sent as it is.

    `newline` is the line end of the framing itself: the end of the line in JSON lines (default "\\n";
    "\\r\\n" is accepted too, and b"" leaves a last line unterminated), the end of each header line in
    Content-Length framing (default "\\r\\n"; a bare "\\n" is accepted too)."""
    if framing == LINES:
        return payload + (b"\n" if newline is None else newline)
    if framing != CONTENT_LENGTH:
        raise ValueError(f"no framing {framing!r}; one of {FRAMINGS}")
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


# ---------------------------------------------------------------------------------------------------
# Server process
# ---------------------------------------------------------------------------------------------------

_EOF = object()


class RpcError(AssertionError):
    def __init__(self, method: str, error: dict):
        super().__init__(f"{method} failed: {json.dumps(error, ensure_ascii=False)[:2000]}")
        self.error = error
        self.code = error.get("code")


class Server:
    """One `cloudnotes` process on pipes, spoken to in `framing` (LINES or CONTENT_LENGTH).  Every
    message on stdout is checked by a reader thread."""

    def __init__(self, store: Path | str | None, *, args: list[str] | None = None, env: dict | None = None,
                 cwd: str | None = None, use_serve: bool = True, framing: str = LINES):
        if framing not in FRAMINGS:
            raise ValueError(f"no framing {framing!r}; one of {FRAMINGS}")
        self.framing = framing
        self.store = Path(store) if store is not None else None
        command = [BINARY]
        if use_serve:
            command.append("serve")
        if store is not None:
            command += ["--store", str(store)]
        command += args or []
        environment = dict(os.environ)
        if env:
            environment.update(env)
        self.command = command
        self.proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=environment,
            cwd=cwd, bufsize=0)
        self.lines: queue.Queue = queue.Queue()
        self.violations: list[str] = []
        self.received: list[dict] = []          # every valid message, in order
        self.pending: dict[tuple, str] = {}     # id key -> method, for requests not answered yet
        self.answered: set[tuple] = set()
        self.sent_ids: set[tuple] = set()
        self.stray: dict[tuple, dict] = {}      # responses read while waiting for another one
        self.stray_notes: list[dict] = []       # notifications read while waiting for another response
        self.stderr_chunks: list[bytes] = []
        self.mirror: Mirror | None = None
        self._lock = threading.Lock()
        self._next_id = 1
        self.stdin_closed = False
        self.killed = False  # set by kill(): a last message cut short is then expected
        self._stdout_thread = threading.Thread(target=self._read_stdout, daemon=True)
        self._stderr_thread = threading.Thread(target=self._read_stderr, daemon=True)
        self._stdout_thread.start()
        self._stderr_thread.start()

    # -- reading ------------------------------------------------------------------------------------

    def _read_stdout(self) -> None:
        # stdin stays unbuffered (each request leaves at once); stdout is read through a buffer, since
        # readline() on a raw pipe reads one byte per system call, which takes minutes for a 20 MB line.
        stream = io.BufferedReader(self.proc.stdout, buffer_size=1 << 16)
        read_message = READERS[self.framing]
        while True:
            try:
                payload = read_message(stream)
            except CutShort as cut:
                if not self.killed:  # after SIGKILL a write cut short is what the test asked for
                    self._report(ProtocolViolation(str(cut)))
                break
            except ProtocolViolation as violation:
                # Where the next message starts cannot be known: the rest is drained unread, so that
                # the server never blocks on a full pipe.
                self._report(violation)
                while stream.read(1 << 16):
                    pass
                break
            except (OSError, ValueError):
                break
            if payload is None:
                break
            try:
                message = self._check_message(payload)
            except ProtocolViolation as violation:
                self._report(violation)
                continue
            self.lines.put(message)
        self.lines.put(_EOF)

    def _report(self, violation: ProtocolViolation) -> None:
        """Records a violation, and hands it to the reader of the next message, whose test fails."""
        with self._lock:
            self.violations.append(str(violation))
        self.lines.put(violation)

    def _read_stderr(self) -> None:
        while True:
            try:
                chunk = self.proc.stderr.read(65536)
            except (OSError, ValueError):
                break
            if not chunk:
                break
            self.stderr_chunks.append(chunk)

    @property
    def stderr(self) -> str:
        return b"".join(self.stderr_chunks).decode("utf-8", "replace")

    def _check_message(self, payload: bytes) -> dict:
        """Checks one stdout message (a line without its newline, or a body) and returns it; raises
        ProtocolViolation."""
        shown = payload[:300]
        if b"\n" in payload:  # never in a line; in a body too, which is compact JSON as a line is
            raise ProtocolViolation(f"stdout message holds a line break: {shown!r}")
        try:
            text = payload.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ProtocolViolation(f"stdout message is not UTF-8 ({error}): {shown!r}")
        try:
            message = json.loads(text, parse_constant=_reject_constant)
        except (json.JSONDecodeError, ValueError) as error:
            raise ProtocolViolation(f"stdout message is not JSON ({error}): {shown!r}")
        if not isinstance(message, dict):
            raise ProtocolViolation(f"stdout message is not a JSON object: {shown!r}")
        if message.get("jsonrpc") != "2.0":
            raise ProtocolViolation(f"stdout message without jsonrpc 2.0: {shown!r}")
        problems: list[str] = []
        if "method" in message:
            method = message["method"]
            if "id" in message:
                problems.append("the server sent a request (it sends only notifications)")
            if set(message) - {"jsonrpc", "method", "params"}:
                problems.append(f"unexpected members {sorted(set(message) - {'jsonrpc', 'method', 'params'})}")
            if method not in SERVER_NOTIFICATIONS:
                problems.append(f"unknown server notification {method!r}")
            else:
                problems += _schema_problems(method, "params", message.get("params", {}))
        else:
            if "id" not in message:
                problems.append("a response without an id")
            has_result, has_error = "result" in message, "error" in message
            if has_result == has_error:
                problems.append("a response must have exactly one of result and error")
            if set(message) - {"jsonrpc", "id", "result", "error"}:
                problems.append(f"unexpected members {sorted(set(message) - {'jsonrpc', 'id', 'result', 'error'})}")
            raw_id = message.get("id")
            key = id_key(raw_id)
            if raw_id is not None and (key is None or isinstance(raw_id, float)):
                problems.append(f"response id {raw_id!r} is not an integer, a string or null")
            with self._lock:
                method = self.pending.pop(key, None) if key is not None else None
                if key is not None:
                    if key in self.answered:
                        problems.append(f"a second response to id {raw_id!r}")
                    elif key not in self.sent_ids:
                        problems.append(f"a response to id {raw_id!r}, which was never sent")
                    self.answered.add(key)
            if has_result and not has_error:
                if method is None:
                    problems.append(f"a result for id {raw_id!r} that matches no request sent")
                elif method in REQUEST_METHODS:
                    problems += _schema_problems(method, "result", message["result"])
                else:
                    problems.append(f"a result for {method!r}, which is not a request method")
            if has_error and not has_result:
                error = message["error"]
                if not isinstance(error, dict):
                    problems.append("error is not an object")
                else:
                    if error.get("code") not in ERROR_CODES:
                        problems.append(f"error code {error.get('code')!r} is not among the documented codes")
                    if not isinstance(error.get("message"), str):
                        problems.append("error.message is not a string")
                    if "data" in error and not isinstance(error["data"], dict):
                        problems.append("error.data is not an object")
                    if set(error) - {"code", "message", "data"}:
                        problems.append(f"error has unexpected members {sorted(set(error) - {'code', 'message', 'data'})}")
        problems += _timestamp_problems(message)
        if problems:
            raise ProtocolViolation("; ".join(problems) + f" in: {shown!r}")
        with self._lock:
            self.received.append(message)
        return message

    def next_message(self, timeout: float = DEFAULT_TIMEOUT) -> dict:
        """The next message on stdout; fails on a protocol violation, end of output or timeout."""
        try:
            item = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no message from the server within {timeout} s (hung?); stderr:\n{self.stderr[-3000:]}")
        if item is _EOF:
            self.lines.put(_EOF)  # stay at end of input for later readers
            raise EOFError(f"the server closed stdout (exit code {self.proc.poll()}); stderr:\n{self.stderr[-3000:]}")
        if isinstance(item, ProtocolViolation):
            raise item
        return item

    def read_until_eof(self, timeout: float = DEFAULT_TIMEOUT) -> list[dict]:
        messages = []
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError("stdout was not closed in time")
            try:
                messages.append(self.next_message(remaining))
            except EOFError:
                return messages

    # -- writing ------------------------------------------------------------------------------------

    def new_id(self) -> int:
        with self._lock:
            value = self._next_id
            self._next_id += 1
            return value

    def send_bytes(self, data: bytes, timeout: float = 60.0, write_size: int | None = None) -> None:
        """Writes raw bytes; a server that stops reading is killed after `timeout` so the test fails, not hangs.

        With `write_size`, the bytes go that many at a time, each its own write, with a pause between
        them so that the server's reads return them apart (a pipe hands a reader whatever has arrived)."""
        watchdog = threading.Timer(timeout, self.kill)
        watchdog.start()
        try:
            pieces = [data] if write_size is None else [
                data[start:start + write_size] for start in range(0, len(data), write_size)]
            for number, piece in enumerate(pieces):
                if number:
                    time.sleep(0.001)
                self.proc.stdin.write(piece)
                self.proc.stdin.flush()
        finally:
            watchdog.cancel()

    def _register(self, raw_id: Any, method: Any) -> None:
        key = id_key(raw_id)
        if key is None:
            return
        with self._lock:
            self.sent_ids.add(key)
            self.answered.discard(key)
            self.pending[key] = method if isinstance(method, str) else ""

    def send_raw(self, line: bytes | str, newline: bytes | None = None, *, write_size: int | None = None) -> None:
        """Sends one raw message in this server's framing: the line with its newline, or the body after
        its header (`newline` as for `frame`, `write_size` as for `send_bytes`). Registers its id, when it
        has one, for response checks."""
        if isinstance(line, str):
            line = line.encode("utf-8")
        self.expect_reply(line)
        self.send_bytes(frame(line, self.framing, newline), write_size=write_size)

    def expect_reply(self, line: bytes) -> None:
        """Registers the id of a raw message, when it has one, so that a response to it is expected and
        checked (one sent by `send_bytes` has none expected, and any response to it is a violation)."""
        try:
            parsed = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError, ValueError):
            parsed = None
        if isinstance(parsed, dict) and "id" in parsed and "method" in parsed:
            self._register(parsed["id"], parsed["method"])
        elif isinstance(parsed, dict) and "id" in parsed:
            self._register(parsed["id"], None)
        elif parsed is None and len(line) < 1_000_000:
            # Not JSON to Python: a lenient server may still read an id and a method from it, and the
            # test (not the line checker) must be the one to say that the line should have been refused.
            found_id = re.search(rb'"id"\s*:\s*(-?\d+|"[^"\\]*")', line)
            found_method = re.search(rb'"method"\s*:\s*"([^"\\]*)"', line)
            if found_id:
                raw_id = json.loads(found_id.group(1).decode("utf-8", "replace"))
                method = found_method.group(1).decode("utf-8", "replace") if found_method else None
                self._register(raw_id, method)

    def send(self, message: dict) -> None:
        if "id" in message and "method" in message:
            self._register(message["id"], message["method"])
        self.send_bytes(frame(json.dumps(message, ensure_ascii=False).encode("utf-8"), self.framing))

    def notify(self, method: str, params: dict | None = None) -> None:
        message: dict = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def send_request(self, method: str, params: dict | None = None, id: Any = None) -> Any:
        """Sends a request without waiting; returns its id."""
        request_id = self.new_id() if id is None else id
        message: dict = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return request_id

    def wait_response(self, request_id: Any, timeout: float = DEFAULT_TIMEOUT) -> tuple[list[dict], dict]:
        """Reads until the response to `request_id`; returns (notifications before it, response).

        Other responses read meanwhile are kept in `stray` for a later `wait_response`."""
        key = id_key(request_id)
        if key in self.stray:
            notes, self.stray_notes = self.stray_notes, []
            return notes, self.stray.pop(key)
        notes: list[dict] = self.stray_notes
        self.stray_notes = []
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no response to id {request_id!r} within {timeout} s; stderr:\n{self.stderr[-3000:]}")
            message = self.next_message(remaining)
            if "method" in message:
                notes.append(message)
                continue
            response_key = id_key(message.get("id"))
            if response_key == key:
                return notes, message
            if response_key is None:
                # An error for a line whose id could not be read: not ours to wait for.
                self.stray.setdefault(("null", len(self.stray)), message)
                continue
            self.stray[response_key] = message

    def request(self, method: str, params: dict | None = None, *, id: Any = None,
                timeout: float = DEFAULT_TIMEOUT) -> tuple[list[dict], dict]:
        """Sends a request and returns (notifications before its response, response)."""
        request_id = self.send_request(method, params, id=id)
        notes, response = self.wait_response(request_id, timeout=timeout)
        if self.mirror is not None and not self.mirror.busy:
            self.mirror.apply(notes)
            self.mirror.after_response(method, params, response)
        return notes, response

    def call(self, method: str, params: dict | None = None, **kwargs) -> Any:
        """The result of a request; raises RpcError for an error response."""
        _, response = self.request(method, params, **kwargs)
        if "error" in response:
            raise RpcError(method, response["error"])
        return response["result"]

    def call_notes(self, method: str, params: dict | None = None, **kwargs) -> tuple[list[dict], Any]:
        notes, response = self.request(method, params, **kwargs)
        if "error" in response:
            raise RpcError(method, response["error"])
        return notes, response["result"]

    def error_of(self, method: str, params: dict | None = None, **kwargs) -> dict:
        """The error of a request that must fail."""
        _, response = self.request(method, params, **kwargs)
        assert "error" in response, f"{method} {params!r} should fail, got {json.dumps(response)[:1000]}"
        return response["error"]

    # -- lifecycle ------------------------------------------------------------------------------------

    def initialize(self, locale: str | None = "en-US", time_zone: str | None = "UTC", *, initialized: bool = True,
                   mirror: bool = False, **extra) -> tuple[dict, list[dict]]:
        """`initialize` (+ `initialized`); returns (initialize result, notifications sent after `initialized`)."""
        params: dict = {"clientInfo": {"name": "e2e-tests", "version": "1"}, "capabilities": {}}
        if locale is not None:
            params["locale"] = locale
        if time_zone is not None:
            params["timeZone"] = time_zone
        params.update(extra)
        result = self.call("initialize", params)
        start_notes: list[dict] = []
        if initialized:
            self.notify("initialized", {})
            # The notifications of `initialized` come before the reply to the next request.
            start_notes, _ = self.request("memo/list", {"limit": 1})
            if mirror:
                self.mirror = Mirror(self)
                self.mirror.apply(start_notes)
        return result, start_notes

    def shutdown_and_exit(self, timeout: float = 30.0) -> int:
        result = self.call("shutdown", timeout=timeout)
        assert result is None
        self.notify("exit")
        return self.wait(timeout)

    def close_stdin(self) -> None:
        if not self.stdin_closed:
            self.stdin_closed = True
            try:
                self.proc.stdin.close()
            except OSError:
                pass

    def wait(self, timeout: float = DEFAULT_TIMEOUT) -> int:
        try:
            return self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the server did not exit within {timeout} s")

    def kill(self) -> None:
        self.killed = True
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGKILL)
            except ProcessLookupError:
                pass

    def stop(self) -> None:
        """Ends the process however it can, and checks every line it wrote."""
        if self.proc.poll() is None:
            try:
                self.close_stdin()
                self.proc.wait(timeout=15)
            except Exception:
                self.kill()
                self.proc.wait(timeout=10)
        self._stdout_thread.join(timeout=10)
        self._stderr_thread.join(timeout=5)
        for pipe in (self.proc.stdout, self.proc.stderr):
            try:
                pipe.close()
            except OSError:
                pass

    # -- convenience ---------------------------------------------------------------------------------

    def list_all(self) -> dict:
        """The whole current list, page by page: {total, rows}."""
        rows: list[dict] = []
        total = None
        offset = 0
        while True:
            page = self.call("memo/list", {"offset": offset, "limit": 1000})
            if total is None:
                total = page["total"]
            assert page["total"] == total, "the list changed while it was read"
            rows += page["rows"]
            offset += len(page["rows"])
            if not page["rows"] or offset >= total:
                break
        assert len(rows) == total, f"memo/list total {total} but {len(rows)} rows"
        return {"total": total, "rows": rows}

    def create(self, text: str = "") -> dict:
        return self.call("memo/create", {"text": text})["memo"]

    def memo_text(self, memo_id: str) -> str:
        return self.call("memo/share", {"id": memo_id, "format": "text"})["text"]

    def snapshot(self) -> list[tuple]:
        """Every memo in the current list with its exact text; reading it changes nothing."""
        listing = self.list_all()
        result = []
        for row in listing["rows"]:
            shared = json.loads(self.call("memo/share", {"id": row["id"], "format": "json"})["text"])
            result.append((row["id"], row["modifiedAt"], shared["text"], shared["createdAt"]))
        return result


# ---------------------------------------------------------------------------------------------------
# Mirror of the split view
# ---------------------------------------------------------------------------------------------------

class Mirror:
    """What a front end holds: the list rows, the selection and the detail pane, kept by notifications."""

    def __init__(self, server: Server):
        self.server = server
        self.rows: list[dict] | None = None
        self.reset_total: int | None = None
        self.selection: dict = {"id": None, "index": None}
        self.detail: dict | None = None     # the memo shown, or None when cleared
        self.detail_cleared = False
        self.log: list[str] = []
        self.busy = False   # true while the mirror itself talks to the server

    def apply(self, notes: list[dict]) -> None:
        for note in notes:
            self.apply_one(note)
        if self.rows is None:
            self.refetch()

    def apply_one(self, note: dict) -> None:
        method, params = note["method"], note.get("params", {})
        self.log.append(f"{method} {json.dumps(params, ensure_ascii=False)[:200]}")
        if method == "list/didInsert":
            if self.rows is not None:
                index, row = params["index"], params["row"]
                assert 0 <= index <= len(self.rows), f"didInsert at {index} in a list of {len(self.rows)}"
                assert row["id"] not in {r["id"] for r in self.rows}, f"didInsert of {row['id']}, already listed"
                self.rows.insert(index, row)
                self.reset_total = None
            elif self.reset_total is not None:  # after a reset, before the list is read again
                self.reset_total += 1
        elif method == "list/didUpdate":
            if self.rows is not None:
                source, target, row = params["fromIndex"], params["toIndex"], params["row"]
                assert 0 <= source < len(self.rows), f"didUpdate from {source} in a list of {len(self.rows)}"
                assert self.rows[source]["id"] == row["id"], (
                    f"didUpdate from {source}: the row there is {self.rows[source]['id']}, not {row['id']}")
                self.rows.pop(source)
                assert 0 <= target <= len(self.rows), f"didUpdate to {target} in a list of {len(self.rows) + 1}"
                self.rows.insert(target, row)
                self.reset_total = None
        elif method == "list/didRemove":
            if self.rows is not None:
                index = params["index"]
                assert 0 <= index < len(self.rows), f"didRemove at {index} in a list of {len(self.rows)}"
                assert self.rows[index]["id"] == params["id"], (
                    f"didRemove at {index}: the row there is {self.rows[index]['id']}, not {params['id']}")
                self.rows.pop(index)
                self.reset_total = None
            elif self.reset_total is not None:
                self.reset_total -= 1
        elif method == "list/didReset":
            self.rows = None
            self.reset_total = params["total"]
        elif method == "selection/didChange":
            self.selection = {"id": params["id"], "index": params["index"]}
        elif method == "detail/didShow":
            assert params["editable"] is True, "detail/didShow must be editable"
            self.detail = params["memo"]
            self.detail_cleared = False
        elif method == "detail/didClear":
            assert params["editable"] is False, "detail/didClear must be non-editable"
            self.detail = None
            self.detail_cleared = True
        elif method == "$/progress":
            pass
        else:
            raise AssertionError(f"unexpected notification {method}")

    def after_response(self, method: str, params: dict | None, response: dict) -> None:
        if self.rows is None:
            self.refetch()
        result = response.get("result")
        # The client's own update is answered, not echoed: the detail shows the memo the reply carries.
        if method == "memo/update" and isinstance(result, dict) and self.detail is not None:
            if result["memo"]["id"] == self.detail["id"]:
                self.detail = result["memo"]
        # An edit's reply carries no text: the detail applies the edits it sent, as an editor's buffer has.
        if method == "memo/edit" and isinstance(result, dict) and self.detail is not None:
            if result["id"] == self.detail["id"] and self.detail["version"] == params["baseVersion"] != result["version"]:
                text = apply_edits(self.detail["text"], params["edits"])
                assert len(text.encode()) == result["length"], "the edited text's length differs from the server's"
                # The body is derived by the server and not in the reply: the mirror does not guess it.
                self.detail = {**self.detail, "text": text, "version": result["version"], "title": result["title"],
                               "body": None, "modifiedAt": result["modifiedAt"], "displayDate": result["displayDate"]}

    def refetch(self) -> None:
        """Reads the whole list after a `list/didReset`.

        Another process may change the store meanwhile: the server then catches up first, and the
        `memo/list` reply comes after a new `list/didReset` (and any selection and detail updates),
        which this applies before reading the list again."""
        for _ in range(20):
            expected_total = self.reset_total
            self.busy = True
            try:
                notes, listing = self._read_list()
            finally:
                self.busy = False
            changed = False
            for note in notes:
                if note["method"] == "list/didReset":
                    self.reset_total = note["params"]["total"]
                    changed = True
                else:
                    self.apply_one(note)
            if changed:
                continue
            if expected_total is not None:
                assert listing["total"] == expected_total, (
                    f"list/didReset said {expected_total} rows, memo/list says {listing['total']}")
            self.rows = listing["rows"]
            self.reset_total = None
            return
        raise AssertionError(f"the list kept changing while the mirror read it: {notes}")

    def _read_list(self) -> tuple[list[dict], dict]:
        """(notifications on the way, the whole list)."""
        notes: list[dict] = []
        rows: list[dict] = []
        total = None
        while True:
            page_notes, response = self.server.request("memo/list", {"offset": len(rows), "limit": 1000})
            notes += page_notes
            if "error" in response:
                raise RpcError("memo/list", response["error"])
            page = response["result"]
            if page_notes:  # the store changed: the caller reads the list again
                return notes, page
            if total is None:
                total = page["total"]
            rows += page["rows"]
            if not page["rows"] or len(rows) >= total:
                return notes, {"total": total, "rows": rows}

    @property
    def ids(self) -> list[str]:
        assert self.rows is not None
        return [row["id"] for row in self.rows]

    def check(self) -> dict:
        """Rule 7: the mirror equals memo/list; the selection index is the selected memo's place in it;
        the detail pane shows the selected memo as the store holds it."""
        self.busy = True
        try:
            return self._check()
        finally:
            self.busy = False

    def _check(self) -> dict:
        listing = self.server.list_all()
        assert self.rows is not None
        assert [r["id"] for r in self.rows] == [r["id"] for r in listing["rows"]], (
            "mirror order differs from memo/list:\n mirror: %s\n list:   %s\n notifications: %s" % (
                [r["title"] for r in self.rows], [r["title"] for r in listing["rows"]], self.log[-12:]))
        assert self.rows == listing["rows"], "mirror rows differ from memo/list rows"
        selected = self.selection["id"]
        if selected is None:
            assert self.selection["index"] is None, "nothing selected but an index"
            assert self.detail is None, "nothing selected but the detail shows a memo"
        else:
            ids = [r["id"] for r in listing["rows"]]
            expected_index = ids.index(selected) if selected in ids else None
            assert self.selection["index"] == expected_index, (
                f"selection index {self.selection['index']} but the selected memo is at {expected_index}; "
                f"notifications: {self.log[-12:]}")
            assert self.detail is not None and self.detail["id"] == selected, (
                f"the detail shows {self.detail and self.detail['id']} but {selected} is selected")
            shared = json.loads(self.server.call("memo/share", {"id": selected, "format": "json"})["text"])
            assert self.detail["text"] == shared["text"], "the detail pane's text is stale"
            assert self.detail["modifiedAt"] == shared["modifiedAt"], "the detail pane's memo is stale"
        return listing


# ---------------------------------------------------------------------------------------------------
# Fixtures
# ---------------------------------------------------------------------------------------------------

class ServerFactory:
    """Starts servers for one test (in `framing`, unless told otherwise) and stops (and checks) them all
    at the end."""

    def __init__(self, root: Path, framing: str = LINES):
        self.root = root
        self.framing = framing
        self.servers: list[Server] = []
        self.store = root / "store" / "notes.sqlite"

    def start(self, store: Path | str | None = "default", **kwargs) -> Server:
        if store == "default":
            store = self.store
        kwargs.setdefault("framing", self.framing)
        server = Server(store, **kwargs)
        self.servers.append(server)
        return server

    def close(self) -> list[str]:
        violations: list[str] = []
        for server in self.servers:
            server.stop()
            violations += server.violations
        return violations


@pytest.fixture
def tmp_root():
    path = Path(tempfile.mkdtemp(prefix="cloudnotes-e2e-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def framing() -> str:
    """The framing `servers` start servers in: JSON lines.

    A module whose every test must hold in both framings sets `framing = each_framing`, which runs each
    of its tests once per framing; a single test names its own with
    `@pytest.mark.parametrize("framing", [...])`. The rest of the suite stays in one framing: what
    does not depend on framing need not run twice."""
    return LINES


@pytest.fixture(params=FRAMINGS)
def each_framing(request) -> str:
    """Each framing in turn: see `framing`."""
    return request.param


@pytest.fixture
def servers(tmp_root, framing):
    """A factory of servers on a fresh temporary store; every stdout message of every server is checked."""
    factory = ServerFactory(tmp_root, framing)
    yield factory
    violations = factory.close()
    assert not violations, "the server wrote to stdout what is not a valid protocol message:\n" + "\n".join(
        violations[:10])


@pytest.fixture
def server(servers) -> Server:
    """A started, not yet initialized server on a fresh store."""
    return servers.start()


@pytest.fixture
def client(servers) -> Server:
    """An initialized server (en-US, UTC) with a Mirror attached, on a fresh store."""
    srv = servers.start()
    srv.initialize(mirror=True)
    return srv


def next_response(client: Server, timeout: float = 30.0) -> tuple[list[dict], dict]:
    """(notifications before it, the next response on stdout), whatever its id: for a message whose
    id cannot be read, answered with `"id": null` (messages are answered in order)."""
    notes = []
    while True:
        message = client.next_message(timeout)
        if "method" in message:
            notes.append(message)
        else:
            return notes, message


def still_fine(client: Server, before: list[tuple]) -> None:
    """The server answers a following request, and nothing stored changed since `client.snapshot()`
    returned `before`; the client's mirror still equals the list."""
    listing = client.call("memo/list", {})
    assert listing["total"] == len(before)
    assert client.snapshot() == before, "a stored memo changed"
    client.mirror.check()


def apply_edits(text: str, edits: list[dict]) -> str:
    """`text` with `memo/edit`'s edits applied in order (UTF-8 byte offsets), as a front end does."""
    data = text.encode()
    for change in edits:
        data = data[:change["start"]] + change["text"].encode() + data[change["end"]:]
    return data.decode()


def methods_of(notes: list[dict], include_progress: bool = False) -> list[str]:
    return [n["method"] for n in notes if include_progress or n["method"] != "$/progress"]


def params_of(notes: list[dict], method: str) -> list[dict]:
    return [n["params"] for n in notes if n["method"] == method]


def make_entries(count: int, prefix: str = "generated", last_modified: int = 1_600_000_000) -> list[dict]:
    return [{"title": f"{prefix} {i}", "body": f"body of {prefix} number {i}\nsecond line", "last_modified": last_modified}
            for i in range(count)]


@pytest.fixture(scope="session")
def big_import_file(tmp_path_factory) -> Path:
    """A file of 100,000 generated memos in the original app's import format."""
    path = tmp_path_factory.mktemp("big") / "memos-100k.json"
    path.write_text(json.dumps(make_entries(100_000, "bulk", 1_500_000_000)), encoding="utf-8")
    return path

from webdav import apache_dav, dav_collection, fault_proxy_factory, nginx_dav  # noqa: E402,F401  (WebDAV fixtures)

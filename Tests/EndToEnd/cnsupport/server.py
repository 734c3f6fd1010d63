"""`Server`: one `cloudnotes` process on pipes, spoken to in either framing, every byte it writes checked.

A reader thread reads stdout strictly in the session's framing (`framing`) and checks each message
(`schema.MessageChecker`); a message that is not a valid protocol message fails the test that reads it
next, and every violation is kept for the `servers` fixture, which fails the test at the end. Requests go
out as the test writes them: raw bytes (bad ones too, in any pieces) or JSON-RPC messages.

With a front end attached (`initialize(mirror=True)`), the notifications each request brings are applied
to the Python client's `Mirror` (see `front_end.FrontEnd`).
"""

from __future__ import annotations

import io
import json
import os
import queue
import signal
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from .framing import CONTENT_LENGTH, LINES, READERS, CutShort, ProtocolViolation, check_framing, frame
from .front_end import FrontEnd
from .paths import BINARY
from .schema import MessageChecker, id_key, parse_message

DEFAULT_TIMEOUT = 10.0

_EOF = object()


def _left(deadline: float, failure) -> float:
    """The seconds left before `deadline`; AssertionError(`failure`, or what it returns) once none are."""
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        raise AssertionError(failure() if callable(failure) else failure)
    return remaining


class RpcError(AssertionError):
    def __init__(self, method: str, error: dict):
        super().__init__(f"{method} failed: {json.dumps(error, ensure_ascii=False)[:2000]}")
        self.error = error
        self.code = error.get("code")


class Server(FrontEnd):
    """One `cloudnotes` process on pipes, spoken to in `framing` (LINES or CONTENT_LENGTH).  Every
    message on stdout is checked by a reader thread."""

    def __init__(self, store: Path | str | None, *, args: list[str] | None = None, env: dict | None = None,
                 cwd: str | None = None, use_serve: bool = True, framing: str = LINES):
        super().__init__()
        self.framing = check_framing(framing)
        self.store = Path(store) if store is not None else None
        command = [BINARY]
        if use_serve:
            command.append("serve")
        if store is not None:
            command += ["--store", str(store)]
        command += args or []
        self.command = command
        self.proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})}, cwd=cwd, bufsize=0)
        self.lines: queue.Queue = queue.Queue()
        self.checker = MessageChecker()
        self.violations: list[str] = []
        self.received: list[dict] = []          # every valid message, in order
        self.stray: dict[tuple, dict] = {}      # responses read while waiting for another one
        self.stray_notes: list[dict] = []       # notifications read while waiting for another response
        self.stderr_chunks: list[bytes] = []
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
                message = parse_message(payload)
                self.checker.check(message)
            except ProtocolViolation as violation:
                self._report(violation)
                continue
            with self._lock:
                self.received.append(message)
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

    def next_message(self, timeout: float = DEFAULT_TIMEOUT) -> dict:
        """The next message on stdout; fails on a protocol violation, end of output or timeout."""
        try:
            item = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(
                f"no message from the server within {timeout} s (hung?); stderr:\n{self.stderr[-3000:]}")
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
            try:
                messages.append(self.next_message(_left(deadline, "stdout was not closed in time")))
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
        self.checker.register_raw(line)

    def send(self, message: dict) -> None:
        if "id" in message and "method" in message:
            self.checker.register(message["id"], message["method"])
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
            message = self.next_message(_left(deadline, lambda: (
                f"no response to id {request_id!r} within {timeout} s; stderr:\n{self.stderr[-3000:]}")))
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
        """Sends a request and returns (notifications before its response, response); a front end
        attached takes both in."""
        request_id = self.send_request(method, params, id=id)
        notes, response = self.wait_response(request_id, timeout=timeout)
        self.take_response(notes, method, params, response)
        return notes, response

    def call(self, method: str, params: dict | None = None, **kwargs) -> Any:
        """The result of a request; raises RpcError for an error response."""
        return self.call_notes(method, params, **kwargs)[1]

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
                self.attach_mirror(start_notes)
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
        while True:
            page = self.call("memo/list", {"offset": len(rows), "limit": 1000})
            if total is None:
                total = page["total"]
            assert page["total"] == total, "the list changed while it was read"
            rows += page["rows"]
            if not page["rows"] or len(rows) >= total:
                break
        assert len(rows) == total, f"memo/list total {total} but {len(rows)} rows"
        return {"total": total, "rows": rows}

    def create(self, text: str = "") -> dict:
        return self.call("memo/create", {"text": text})["memo"]

    def search_total(self, query: str) -> int:
        """How many memos `memo/search` finds for `query` (the filter stays set)."""
        return self.call("memo/search", {"query": query})["total"]

    def search_totals(self, queries) -> dict[str, int]:
        """How many memos `memo/search` finds for each of `queries` (the last one's filter stays set)."""
        return {query: self.search_total(query) for query in queries}

    def memo_text(self, memo_id: str) -> str:
        return self.call("memo/share", {"id": memo_id, "format": "text"})["text"]

    def shared(self, memo_id: str) -> dict:
        """The memo as `memo/share` in JSON renders it: exactly as stored; reading it changes nothing."""
        return json.loads(self.call("memo/share", {"id": memo_id, "format": "json"})["text"])

    def snapshot(self) -> list[tuple]:
        """Every memo in the current list with its exact text; reading it changes nothing."""
        result = []
        for row in self.list_all()["rows"]:
            shared = self.shared(row["id"])
            result.append((row["id"], row["modifiedAt"], shared["text"], shared["createdAt"]))
        return result


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

    def session(self, store: Path | str | None = "default", *, mirror: bool = False, **kwargs) -> Server:
        """A started and initialized server (en-US, UTC), with a front end's mirror if asked."""
        server = self.start(store, **kwargs)
        server.initialize(mirror=mirror)
        return server

    def adopt(self, server: Server) -> Server:
        """A server started elsewhere, stopped and checked with the others."""
        self.servers.append(server)
        return server

    def close(self) -> list[str]:
        violations: list[str] = []
        for server in self.servers:
            server.stop()
            violations += server.violations
        return violations


__all__ = ["CONTENT_LENGTH", "DEFAULT_TIMEOUT", "LINES", "RpcError", "Server", "ServerFactory"]

"""`cloudnotes mcp` spoken to two ways: through the official MCP Python SDK (`mcp` from PyPI:
`stdio_client` and `ClientSession`), the judge of whether the server speaks MCP; and as raw lines, for
the bad input an SDK would never send. Every line the raw client reads is checked to be one JSON-RPC
2.0 message, so nothing else may reach stdout."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import queue
import subprocess
import threading
from pathlib import Path
from typing import Any, AsyncIterator

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from .paths import BINARY

TIMEOUT = 10.0


def mcp_command(store: Path, *args: str) -> list[str]:
    return ["mcp", "--store", str(store), *args]


class Heard:
    """The notifications a `ClientSession` received, in order, for a test to wait on."""

    def __init__(self) -> None:
        self.messages: list[Any] = []
        self._changed = asyncio.Event()

    async def handler(self, message: Any) -> None:
        if isinstance(message, Exception):
            raise message
        self.messages.append(message)
        self._changed.set()

    def methods(self) -> list[str]:
        return [getattr(message, "method", "") for message in self.messages]

    def updated_uris(self) -> list[str]:
        return [m.params.uri for m in self.messages if getattr(m, "method", "") == "notifications/resources/updated"]

    async def wait_for(self, method: str, *, count: int = 1, timeout: float = TIMEOUT) -> None:
        """Until `count` notifications of `method` were heard; fails after `timeout` seconds."""
        async def heard() -> None:
            while self.methods().count(method) < count:
                self._changed.clear()
                await self._changed.wait()
        try:
            await asyncio.wait_for(heard(), timeout)
        except asyncio.TimeoutError:
            raise AssertionError(f"no {method} within {timeout} s; heard {self.methods()}") from None


@contextlib.asynccontextmanager
async def mcp_session(store: Path, *args: str, command: str = BINARY, arguments: list[str] | None = None,
                      env: dict[str, str] | None = None) -> AsyncIterator[tuple[ClientSession, Heard]]:
    """An initialized SDK session with `cloudnotes mcp` on `store` (or `command arguments` as given),
    and what it hears."""
    heard = Heard()
    params = StdioServerParameters(command=command, args=arguments if arguments is not None else mcp_command(store, *args),
                                   env={**os.environ, **(env or {})})
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write):
            async with ClientSession(read, write, message_handler=heard.handler) as session:
                await session.initialize()
                yield session, heard


def run(coroutine) -> Any:
    """Runs a test's coroutine to the end (the tests are plain functions: no asyncio plugin needed)."""
    return asyncio.run(asyncio.wait_for(coroutine, 120))


class RawMcp:
    """`cloudnotes mcp` on pipes, written raw lines; every line it writes must be a JSON-RPC 2.0 message."""

    def __init__(self, store: Path, *args: str) -> None:
        self.proc = subprocess.Popen([BINARY, *mcp_command(store, *args)], stdin=subprocess.PIPE,
                                     stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, bufsize=0)
        self.lines: queue.Queue = queue.Queue()
        self.violations: list[str] = []
        self._next_id = 1000
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for raw in self.proc.stdout:
            try:
                message = json.loads(raw.decode("utf-8"))
                problem = self.envelope_problem(message)
            except (UnicodeDecodeError, json.JSONDecodeError) as error:
                message, problem = None, f"not JSON: {error}"
            if problem:
                self.violations.append(f"{problem}: {raw[:300]!r}")
            self.lines.put(message)
        self.lines.put(EOFError)

    @staticmethod
    def envelope_problem(message: Any) -> str | None:
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return "not a JSON-RPC 2.0 object"
        if "method" in message:
            return None if isinstance(message["method"], str) and "result" not in message else "a bad notification"
        if ("result" in message) == ("error" in message) or "id" not in message:
            return "a response needs an id and one of result and error"
        if "error" in message and not (isinstance(message["error"].get("code"), int) and isinstance(message["error"].get("message"), str)):
            return "a bad error object"
        return None

    def send(self, line: str | bytes) -> None:
        self.proc.stdin.write((line.encode() if isinstance(line, str) else line) + b"\n")

    def next_message(self, timeout: float = TIMEOUT) -> dict:
        try:
            message = self.lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"no message within {timeout} s") from None
        if message is EOFError:
            raise EOFError("the server closed stdout")
        return message

    def request(self, method: str, params: dict | None = None) -> dict:
        """Sends a request and returns its response (notifications read meanwhile are dropped)."""
        self._next_id += 1
        request_id = self._next_id
        self.send(json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method,
                              **({"params": params} if params is not None else {})}))
        return self.response_to(request_id)

    def response_to(self, request_id: Any) -> dict:
        while True:
            message = self.next_message()
            if "method" not in message and message.get("id") == request_id:
                return message

    def initialize(self, version: str = "2025-06-18") -> dict:
        result = self.request("initialize", {"protocolVersion": version, "capabilities": {},
                                             "clientInfo": {"name": "raw", "version": "1"}})
        self.send('{"jsonrpc":"2.0","method":"notifications/initialized"}')
        return result

    def close(self) -> list[str]:
        """Ends the session; returns the lines that were not protocol messages."""
        with contextlib.suppress(BrokenPipeError):
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            self.violations.append("the server did not exit when stdin closed")
        return self.violations

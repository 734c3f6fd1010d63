"""protocol/protocol.schema.json, and the checks of every message the server writes.

`MessageChecker` holds what a client sent (the ids of its requests and their methods) and checks each
message the server writes against it and the schema: a JSON-RPC 2.0 object; a notification the server
may send, with exactly `jsonrpc`, `method` and `params`, its params valid against `methods[m].params`; a
response with exactly one of `result` and `error`, to a request that was sent and not answered yet, its
result valid against `methods[m].result`, its error code among `errors`; every createdAt / modifiedAt an
ISO 8601 UTC timestamp with milliseconds. `Server` runs it on every message it reads; the transcript
tests run it on every message a replay exchanged.
"""

from __future__ import annotations

import json
import re
import threading
from typing import Any, Iterable

import jsonschema

from cloudnotes_client.errors import (  # the codes, for the tests (see __all__)
    EXPORT_FAILED, IMPORT_INVALID, INVALID_PARAMS, INVALID_REQUEST, MEMO_NOT_FOUND, METHOD_NOT_FOUND, PARSE_ERROR,
    REQUEST_CANCELLED, SERVER_NOT_INITIALIZED, VERSION_CONFLICT, VERSION_NOT_FOUND,
)

from .framing import ProtocolViolation
from .paths import REPO

__all__ = [
    "CLIENT_NOTIFICATIONS", "CODE", "ERROR_CODES", "EXPORT_FAILED", "IMPORT_INVALID", "INVALID_PARAMS",
    "INVALID_REQUEST", "ISO_MS", "MEMO_NOT_FOUND", "METHODS", "METHOD_NOT_FOUND", "MessageChecker", "PARSE_ERROR",
    "REQUEST_CANCELLED", "REQUEST_METHODS", "SCHEMA", "SERVER_NOTIFICATIONS", "SERVER_NOT_INITIALIZED", "UUID_LOWER",
    "VERSION_CONFLICT", "VERSION_NOT_FOUND", "exchange_problems", "id_key", "parse_message", "schema_problems", "timestamp_problems",
    "validator_for",
]

SCHEMA_PATH = REPO / "protocol" / "protocol.schema.json"
SCHEMA: dict = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
METHODS: dict = SCHEMA["methods"]
ERROR_CODES = {entry["code"] for entry in SCHEMA["errors"]}
# Error codes by name, from the schema's `errors` list.
CODE = {entry["name"]: entry["code"] for entry in SCHEMA["errors"]}
REQUEST_METHODS = {m for m, d in METHODS.items() if d["kind"] == "request"}


def _notifications(direction: str) -> set[str]:
    return {m for m, d in METHODS.items() if d["kind"] == "notification" and d["direction"].startswith(direction)}


CLIENT_NOTIFICATIONS = _notifications("client")
SERVER_NOTIFICATIONS = _notifications("server")
ISO_MS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
UUID_LOWER = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")

FORMATS = jsonschema.FormatChecker()


@FORMATS.checks("date-time")
def _is_timestamp(value: object) -> bool:
    # The protocol's timestamps: ISO 8601, UTC, exactly millisecond precision.
    return not isinstance(value, str) or bool(ISO_MS.match(value))


@FORMATS.checks("uuid")
def _is_memo_id(value: object) -> bool:
    # Memo ids go out in lower case.
    return not isinstance(value, str) or bool(UUID_LOWER.match(value))


_validators: dict[str, jsonschema.Draft202012Validator] = {}


def validator_for(method: str, part: str) -> jsonschema.Draft202012Validator:
    """A validator for `methods[method][part]`, resolving `$ref`s against the whole schema document."""
    key = f"{method}#{part}"
    if key not in _validators:
        root = dict(SCHEMA)
        root["$ref"] = "#/methods/" + method.replace("~", "~0").replace("/", "~1") + "/" + part
        _validators[key] = jsonschema.Draft202012Validator(root, format_checker=FORMATS)
    return _validators[key]


def schema_problems(method: str, part: str, value: Any) -> list[str]:
    errors = sorted(validator_for(method, part).iter_errors(value), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(map(str, e.absolute_path)) or '$'}: {e.message}" for e in errors]


def timestamp_problems(value: Any, path: str = "$") -> list[str]:
    """Every createdAt / modifiedAt must be an ISO 8601 UTC string with milliseconds."""
    found: list[str] = []
    if isinstance(value, dict):
        for key, member in value.items():
            if key in ("createdAt", "modifiedAt") and isinstance(member, str) and not ISO_MS.match(member):
                found.append(f"{path}.{key}: {member!r} is not an ISO 8601 timestamp with milliseconds")
            found += timestamp_problems(member, f"{path}.{key}")
    elif isinstance(value, list):
        for index, member in enumerate(value):
            found += timestamp_problems(member, f"{path}[{index}]")
    return found


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


def _reject_constant(name: str):
    raise ValueError(f"{name} is not JSON")


def parse_message(payload: bytes) -> dict:
    """One message the server wrote (a line without its newline, or a body), parsed; ProtocolViolation if it
    is not a compact JSON object of JSON-RPC 2.0 in UTF-8."""
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
    return message


class MessageChecker:
    """The requests a client sent, and the check of every message the server writes against them."""

    def __init__(self) -> None:
        self.pending: dict[tuple, str] = {}     # id key -> method, for requests not answered yet
        self.answered: set[tuple] = set()
        self.sent_ids: set[tuple] = set()
        self._lock = threading.Lock()

    def register(self, raw_id: Any, method: Any) -> None:
        """A request (or a message with an id) was sent: a response to it is expected."""
        key = id_key(raw_id)
        if key is None:
            return
        with self._lock:
            self.sent_ids.add(key)
            self.answered.discard(key)
            self.pending[key] = method if isinstance(method, str) else ""

    def register_raw(self, line: bytes) -> None:
        """Registers the id of a raw message, when it has one, so that a response to it is expected and
        checked."""
        try:
            parsed = json.loads(line.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError, RecursionError, ValueError):
            parsed = None
        if isinstance(parsed, dict) and "id" in parsed:
            self.register(parsed["id"], parsed.get("method"))
        elif parsed is None and len(line) < 1_000_000:
            # Not JSON to Python: a lenient server may still read an id and a method from it, and the
            # test (not the message checker) must be the one to say that the line should have been refused.
            found_id = re.search(rb'"id"\s*:\s*(-?\d+|"[^"\\]*")', line)
            found_method = re.search(rb'"method"\s*:\s*"([^"\\]*)"', line)
            if found_id:
                raw_id = json.loads(found_id.group(1).decode("utf-8", "replace"))
                method = found_method.group(1).decode("utf-8", "replace") if found_method else None
                self.register(raw_id, method)

    def check(self, message: Any) -> None:
        """Raises ProtocolViolation naming every problem of one message the server wrote."""
        problems = self.problems(message)
        if problems:
            shown = json.dumps(message, ensure_ascii=False)[:300]
            raise ProtocolViolation("; ".join(problems) + f" in: {shown}")

    def problems(self, message: Any) -> list[str]:
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return ["not a JSON-RPC 2.0 object"]
        problems = self._notification_problems(message) if "method" in message else self._response_problems(message)
        return problems + timestamp_problems(message)

    def _notification_problems(self, message: dict) -> list[str]:
        method = message["method"]
        problems = []
        if "id" in message:
            problems.append("the server sent a request (it sends only notifications)")
        if set(message) != {"jsonrpc", "method", "params"}:
            problems.append(f"a notification has exactly jsonrpc, method and params, not {sorted(message)}")
        if method not in SERVER_NOTIFICATIONS:
            problems.append(f"unknown server notification {method!r}")
        else:
            problems += schema_problems(method, "params", message.get("params", {}))
        return problems

    def _response_problems(self, message: dict) -> list[str]:
        problems = []
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
                problems += schema_problems(method, "result", message["result"])
            else:
                problems.append(f"a result for {method!r}, which is not a request method")
        if has_error and not has_result:
            problems += _error_problems(message["error"])
        return problems


def _error_problems(error: Any) -> list[str]:
    if not isinstance(error, dict):
        return ["error is not an object"]
    problems = []
    if error.get("code") not in ERROR_CODES:
        problems.append(f"error code {error.get('code')!r} is not among the documented codes")
    if not isinstance(error.get("message"), str) or not error["message"]:
        problems.append("error.message is not a non-empty string")
    if "data" in error and not isinstance(error["data"], dict):
        problems.append("error.data is not an object")
    if set(error) - {"code", "message", "data"}:
        problems.append(f"error has unexpected members {sorted(set(error) - {'code', 'message', 'data'})}")
    return problems


def exchange_problems(exchanged: Iterable[tuple[str, Any]]) -> list[str]:
    """Every problem of the server's messages in a conversation of ("client" | "server", message) pairs,
    the client's messages being what the server answers."""
    checker = MessageChecker()
    problems: list[str] = []
    for index, (side, message) in enumerate(exchanged):
        if side == "client":
            if isinstance(message, dict) and "id" in message:
                checker.register(message["id"], message.get("method"))
            continue
        where = f"server message {index}: {json.dumps(message, ensure_ascii=False)[:160]}"
        problems += [f"{where}: {problem}" for problem in checker.problems(message)]
    return problems

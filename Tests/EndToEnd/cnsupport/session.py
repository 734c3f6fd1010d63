"""Small helpers over a `Server` session: notifications by method, unprompted notifications, progress,
and memos in the original app's import format."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Callable

from .schema import id_key
from .server import Server

# A bound on waiting for what the server sends on its own (a change by another process, a sync's end): a
# guard against a hang, not a measure of speed.
UNPROMPTED_TIMEOUT = 60.0


def methods_of(notes: list[dict], include_progress: bool = False) -> list[str]:
    return [n["method"] for n in notes if include_progress or n["method"] != "$/progress"]


def params_of(notes: list[dict], method: str) -> list[dict]:
    return [n["params"] for n in notes if n["method"] == method]


def progress_kinds(notes: list[dict], token=None) -> list[str]:
    """The kinds of the `$/progress` notifications among `notes` (of `token`'s only, when given)."""
    return [n["params"]["value"]["kind"] for n in notes
            if n.get("method") == "$/progress" and (token is None or n["params"]["token"] == token)]


def sync_states(messages: list[dict]) -> list[str]:
    """The states of the sync/didChange statuses among `messages`, in order."""
    return [m["params"]["status"]["state"] for m in messages if m.get("method") == "sync/didChange"]


def a_sync_ended(states: list[str]) -> bool:
    """Whether these states tell of a sync that started and ended."""
    return "syncing" in states and states[-1] != "syncing"


def make_entries(count: int, prefix: str = "generated", last_modified: int = 1_600_000_000, *, apart: bool = False,
                 big: int = 0) -> list[dict]:
    """`count` memos "prefix i" of two short lines in the original app's import format, dated `last_modified`
    (each a second after the one before, with `apart`), then `big` memos of about 100 KB."""
    memos = [{"title": f"{prefix} {i}", "body": f"body of {prefix} number {i}\nsecond line",
              "last_modified": last_modified + (i if apart else 0)} for i in range(count)]
    return memos + [{"title": f"{prefix} big {i}", "body": (f"{prefix} big {i} " + "x" * 90 + "\n") * 1000,
                     "last_modified": last_modified} for i in range(big)]


def write_entries(path: Path, entries: list[dict]) -> Path:
    """An import file: `entries` in the original app's format, as JSON in UTF-8."""
    path.write_text(json.dumps(entries, ensure_ascii=False), encoding="utf-8")
    return path


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
    client.check_mirror()


def wait_for_progress(srv: Server, token, kinds=("report",), minimum: int = 0, timeout: float = 60) -> dict:
    """Reads until a `$/progress` of `token` of one of `kinds` (a report at `minimum` percent or more): the
    work (an import, an export, a sync) is then under way. The other messages read meanwhile are kept for
    the next `wait_response`."""
    deadline = time.monotonic() + timeout
    while True:
        message = srv.next_message(max(0.1, deadline - time.monotonic()))
        if message.get("method") == "$/progress" and message["params"]["token"] == token:
            value = message["params"]["value"]
            assert value["kind"] != "end", "the work ended before it could be overtaken"
            if value["kind"] in kinds and value.get("percentage", 0) >= minimum:
                return value
        elif "method" not in message:
            srv.stray[id_key(message["id"])] = message
        else:
            srv.stray_notes.append(message)


def wait_for_progress_report(srv: Server, token, minimum: int = 1, timeout: float = 60) -> None:
    """Reads until a `report` of `token` at `minimum` percent or more: the work is then under way."""
    wait_for_progress(srv, token, ("report",), minimum, timeout)


def quiet(server: Server, seconds: float) -> list[dict]:
    """Whatever the server sends unprompted within `seconds` (a check that nothing comes: a slow machine
    can only make it pass more easily, never fail)."""
    notes: list[dict] = []
    deadline = time.monotonic() + seconds
    while (remaining := deadline - time.monotonic()) > 0:
        try:
            notes.append(server.next_message(remaining))
        except AssertionError:
            break
    return notes


def barrier(server: Server) -> list[dict]:
    """The notifications of every change the server has yet to tell its client of.

    A request that arrives after another process changed the store first takes that change (protocol
    rule C5): its notifications come before its response, which marks the point where
    everything up to the request has been told. A front end attached takes them in."""
    notes, response = server.request("memo/list", {"limit": 1})
    assert "result" in response, response
    return notes


def read_unprompted(server: Server, done: Callable[[list[dict]], bool], *, timeout: float = UNPROMPTED_TIMEOUT,
                    settle: float = 0.0) -> list[dict]:
    """Reads what the server sends without being asked until `done(notes so far)` holds, then whatever comes
    within `settle` s (for a check that nothing more comes). Each notification goes to the front end, if
    one is attached, which reads the list again after a reset, as a front end would."""
    notes: list[dict] = []

    def take(message: dict) -> None:
        assert "method" in message, f"an unprompted response: {message}"
        notes.append(message)
        if server.mirror is not None:
            server.feed([message], refetch=False)

    deadline = time.monotonic() + timeout
    while True:
        if server.mirror is not None and server.mirror.stale and server.lines.empty():
            server.feed([])
        if done(notes):
            break
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"gave up after {timeout} s; heard {methods_of(notes, True)[-15:]}"
        take(server.next_message(remaining))
    for message in quiet(server, settle):
        take(message)
    if server.mirror is not None:
        server.feed([])
    return notes

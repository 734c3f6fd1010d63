"""Text changes sent without waiting (an editor typing faster than each change commits) are committed a
run at a time, and still announced and answered exactly as when sent one at a time."""

from __future__ import annotations

import json
import shutil

from cnsupport.server import Server

# Differ between two runs of the same requests: the clock's, not the protocol's.
CLOCK_FIELDS = {"modifiedAt", "displayDate"}


def without_clock(value):
    if isinstance(value, dict):
        return {key: without_clock(item) for key, item in value.items() if key not in CLOCK_FIELDS}
    if isinstance(value, list):
        return [without_clock(item) for item in value]
    return value


def copies_of_a_store(servers, count: int) -> tuple[list, list[str]]:
    """`count` copies of one store holding a few memos (same ids and versions), and the memos' ids, newest first."""
    first = servers.session()
    ids = [first.create(f"memo {n}\nline two of memo {n}")["id"] for n in range(4)]
    assert first.shutdown_and_exit() == 0
    copies = []
    for n in range(count):
        folder = servers.root / f"copy-{n}"
        folder.mkdir()
        for part in servers.store.parent.iterdir():
            if part.name.startswith(servers.store.name):
                shutil.copy(part, folder / part.name)
        copies.append(folder / servers.store.name)
    return copies, ids[::-1]


def typing_requests(ids: list[str]) -> list[tuple[str, dict]]:
    """A session's worth of text changes, with every way one of them can be refused mid-run."""
    typed, other = ids[1], ids[3]
    requests: list[tuple[str, dict]] = [("memo/select", {"id": typed})]
    text, version = "memo 2\nline two of memo 2", 1
    for n in range(30):
        text += "한글 and ascii"[n % 12]
        requests.append(("memo/update", {"id": typed, "text": text, "baseVersion": version}))
        version += 1
    requests += [
        ("memo/update", {"id": typed, "text": "stale", "baseVersion": 1}),        # a conflict
        ("memo/update", {"id": typed}),                                             # no text
        ("memo/update", {"id": typed, "text": text}),                               # the same text
        ("memo/edit", {"id": typed, "baseVersion": version, "edits": [{"start": 0, "end": 0, "text": "\n"}]}),
        ("memo/edit", {"id": typed, "baseVersion": version + 1, "edits": [{"start": 9999, "end": 9999, "text": "x"}]}),
        ("memo/update", {"id": other, "text": "another memo, not selected"}),     # moves the list under the selection
        ("memo/update", {"id": "0" * 8 + "-0000-4000-8000-" + "0" * 12, "text": "nobody"}),  # not found
    ]
    version += 1
    text = "\n" + text
    for n in range(20):
        text += "typed"[n % 5]
        requests.append(("memo/update", {"id": typed, "text": text}))
    for n in range(20):
        requests.append(("memo/edit", {"id": typed, "baseVersion": version + 20 + n,
                                       "edits": [{"start": 0, "end": 0, "text": "é"}]}))
    requests.append(("memo/update", {"id": typed, "text": "", "baseVersion": version + 40}))  # blank
    requests.append(("memo/update", {"id": typed, "text": "back", "baseVersion": version + 41}))
    return requests


def transcript(server: Server, first_id: int, last_id: int) -> list[dict]:
    """What the server wrote for requests `first_id`..`last_id`: their notifications and responses, in order."""
    messages = server.received
    is_response = lambda m, rid: "method" not in m and m.get("id") == rid  # noqa: E731
    start = next(n for n, m in enumerate(messages) if is_response(m, first_id - 1)) + 1
    end = next(n for n, m in enumerate(messages) if is_response(m, last_id)) + 1
    return [without_clock(m) for m in messages[start:end]]


def test_changes_sent_together_are_answered_as_when_sent_one_at_a_time(servers):
    (together_store, alone_store), ids = copies_of_a_store(servers, 2)
    requests = typing_requests(ids)

    together = servers.session(together_store, args=["--log-level", "debug"])
    first_id = 1000
    last_id = first_id + len(requests) - 1
    together.call("memo/list", id=first_id - 1)  # where the transcript starts
    lines = b"".join(
        json.dumps({"jsonrpc": "2.0", "id": first_id + n, "method": method, "params": params},
                   ensure_ascii=False).encode() + b"\n"
        for n, (method, params) in enumerate(requests))
    for n, (method, _) in enumerate(requests):
        together.checker.register(first_id + n, method)  # for the response checks, as `send_request` does
    together.send_bytes(lines)  # one write: the server finds them all waiting
    together.wait_response(last_id)

    alone = servers.session(alone_store)
    alone.call("memo/list", id=first_id - 1)
    for n, (method, params) in enumerate(requests):
        alone.request(method, params, id=first_id + n)

    expected = transcript(alone, first_id, last_id)
    got = transcript(together, first_id, last_id)
    assert len(got) == len(expected)
    for n, (message, wanted) in enumerate(zip(got, expected)):
        assert message == wanted, f"message {n} differs from the one-at-a-time run"
    assert "text changes arrived together" in together.stderr, "no burst formed: the test tested nothing"
    answers = [m for m in got if "method" not in m]
    assert [m["id"] - first_id for m in answers if "error" in m] == [31, 32, 35, 37]

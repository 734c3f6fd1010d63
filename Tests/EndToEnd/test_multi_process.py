"""Several processes on one store: servers for two or more editors, and the shell. A change made
through one reaches every other server's front end as ordinary `list/*`, `selection/*` and `detail/*`
notifications, within a second, and no front end overwrites what another wrote."""

from __future__ import annotations

import json
import random
import subprocess
import time

from conftest import BINARY, Server, make_entries

CATCH_UP = 1.0  # the longest a change may take to reach another process's front end


def wait_for(server: Server, method: str, timeout: float = CATCH_UP) -> list[dict]:
    """The notifications the server sends unprompted, up to and including the first `method` and the
    notifications that follow it at once; applied to the server's mirror, if it has one."""
    deadline = time.monotonic() + timeout
    notes: list[dict] = []
    while not any(note["method"] == method for note in notes):
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"no {method} within {timeout} s; got {[n['method'] for n in notes]}"
        message = server.next_message(remaining)
        assert "method" in message, f"an unprompted response: {message}"
        notes.append(message)
    notes += quiet(server, 0.3)  # the rest of the same catch-up step
    if server.mirror is not None:
        server.mirror.apply(notes)
    return notes


def quiet(server: Server, seconds: float = CATCH_UP) -> list[dict]:
    """Whatever the server sends unprompted within `seconds`."""
    notes: list[dict] = []
    deadline = time.monotonic() + seconds
    while (remaining := deadline - time.monotonic()) > 0:
        try:
            notes.append(server.next_message(remaining))
        except AssertionError:
            break
    return notes


def shell(store, *args: str, input: str | None = None) -> str:
    result = subprocess.run([BINARY, *args, "--store", str(store)], input=(input or "").encode(), capture_output=True,
                            timeout=30)
    assert result.returncode == 0, result.stderr.decode()
    return result.stdout.decode()


def test_a_memo_created_in_the_shell_appears_in_the_editor(servers):
    editor = servers.start()
    editor.initialize(mirror=True)
    assert editor.mirror.detail is None
    memo_id = shell(servers.store, "new", "From the shell").strip()
    notes = wait_for(editor, "detail/didShow")
    # Memo by memo (protocol 1.1): the front end's list need not be read again.
    assert [n["method"] for n in notes] == ["list/didInsert", "selection/didChange", "detail/didShow"]
    assert notes[0]["params"]["index"] == 0 and notes[0]["params"]["row"]["id"] == memo_id
    assert editor.mirror.detail["id"] == memo_id  # nothing was selected: the newest is shown (rule 1)
    editor.mirror.check()


def test_own_changes_are_not_announced_twice(client):
    client.call("memo/create", {"text": "Mine"})
    assert quiet(client) == []


def test_an_edit_elsewhere_updates_the_detail_and_a_stale_update_is_refused(servers):
    first = servers.start()
    first.initialize(mirror=True)
    memo = first.call("memo/create", {"text": "Shared\nversion one"})["memo"]
    second = servers.start()
    second.initialize(mirror=True)
    second_view = second.mirror.detail
    assert second_view["id"] == memo["id"]
    edited = second.call("memo/update", {"id": memo["id"], "text": "Shared\nedited in the second editor",
                                         "baseVersion": second_view["version"]})["memo"]
    notes = wait_for(first, "detail/didShow")
    assert notes[0]["method"] == "list/didUpdate" and notes[0]["params"]["row"]["id"] == memo["id"]
    assert first.mirror.detail["text"] == edited["text"] and first.mirror.detail["version"] == edited["version"]
    first.mirror.check()
    # The first editor's buffer was based on version one: its update is refused with the current memo.
    error = first.error_of("memo/update", {"id": memo["id"], "text": "Shared\nstale typing",
                                           "baseVersion": memo["version"]})
    assert error["code"] == -33002
    assert error["data"]["memo"]["text"] == edited["text"]
    assert json.loads(second.call("memo/share", {"id": memo["id"], "format": "json"})["text"])["text"] == edited["text"]


def test_a_delete_elsewhere_moves_the_selection_as_rule_4_says(servers):
    first = servers.start()
    first.initialize(mirror=True)
    ids = [first.call("memo/create", {"text": f"memo {index}"})["memo"]["id"] for index in range(3)]
    first.call("memo/select", {"id": ids[1]})  # the middle one, at index 1
    assert first.mirror.selection == {"id": ids[1], "index": 1}
    shell(servers.store, "rm", ids[1])
    wait_for(first, "detail/didShow")
    assert first.mirror.selection == {"id": ids[0], "index": 1}  # the memo now at the same index
    first.mirror.check()
    shell(servers.store, "rm", ids[0])
    shell(servers.store, "rm", ids[2])
    wait_for(first, "detail/didClear")
    assert first.mirror.selection == {"id": None, "index": None}
    first.mirror.check()


def test_four_processes_under_a_mixed_load_agree_with_the_store(servers):
    rng = random.Random(20261121)
    editors = []
    for _ in range(4):
        editor = servers.start()
        editor.initialize(mirror=True)
        editors.append(editor)
    for step in range(160):
        editor = rng.choice(editors)
        rows = editor.mirror.rows or []
        action = rng.random()
        if action < 0.35 or not rows:
            editor.call("memo/create", {"text": f"memo {step}\nfrom editor {editors.index(editor)}"})
        elif action < 0.7:
            target = rng.choice(rows)["id"]
            # No baseVersion: last writer wins for this load; the conflict path has its own test.
            _, response = editor.request("memo/update", {"id": target, "text": f"edited at {step}"})
            assert "result" in response or response["error"]["code"] == -33001, response
        elif action < 0.85:
            _, response = editor.request("memo/delete", {"id": rng.choice(rows)["id"]})
            assert "result" in response or response["error"]["code"] == -33001, response
        else:
            _, response = editor.request("memo/select", {"id": rng.choice(rows)["id"]})
            assert "result" in response or response["error"]["code"] == -33001, response
        if step % 40 == 39:
            shell(servers.store, "new", f"shell memo {step}")
    time.sleep(CATCH_UP + 0.5)
    truth = json.loads(shell(servers.store, "list", "--json"))
    for editor in editors:
        for message in quiet(editor, 0.3):
            assert "method" in message
            editor.mirror.apply_one(message)
        editor.mirror.apply([])
        assert editor.mirror.ids == [row["id"] for row in truth]
        editor.mirror.check()
        assert "database is locked" not in editor.stderr


def test_editors_started_at_once_on_a_new_store_all_open_it(servers, tmp_root):
    for attempt in range(5):
        store = tmp_root / f"fresh-{attempt}" / "notes.sqlite"
        started = [Server(store) for _ in range(4)]
        servers.servers.extend(started)
        for server in started:
            server.initialize()
        for server in started:
            assert server.call("memo/list", {})["total"] == 0
            assert server.shutdown_and_exit() == 0


def test_commits_that_change_nothing_visible_reach_no_front_end(servers):
    first = servers.start()
    first.initialize()
    second = servers.start()
    second.initialize(mirror=True)
    # An import commits its memos a chunk at a time, hidden until the last one: other front ends see
    # the import once, not a reset per chunk.
    request_id = first.send_request("memo/import", {"memos": make_entries(20_000, "bulk")})
    seen: list[dict] = []
    while True:
        try:
            _, response = first.wait_response(request_id, timeout=0.1)
            break
        except AssertionError:
            seen += quiet(second, 0.05)
    assert response["result"] == {"imported": 20_000}
    seen += quiet(second, CATCH_UP + 0.5)
    assert [note["method"] for note in seen].count("list/didReset") == 1, [note["method"] for note in seen]
    # The exit's checkpoint changes nothing visible either.
    assert first.shutdown_and_exit() == 0
    first.wait()
    assert quiet(second, CATCH_UP + 0.5) == []
    second.mirror.apply(seen)
    second.mirror.check()

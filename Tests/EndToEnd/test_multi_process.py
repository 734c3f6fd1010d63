"""Several processes on one store: servers for two or more editors, and the shell. A change made
through one reaches every other server's front end as ordinary `list/*`, `selection/*` and `detail/*`
notifications, even while that front end is idle, and no front end overwrites what another wrote.

Protocol rule C5 says when: the server notices other processes' changes on its own, and a
request that arrives after such a change first takes it, its notifications before its response
(`barrier`). The tests wait for those conditions, never for a time."""

from __future__ import annotations

import random

from cloudnotes_client import Selection

from cnsupport.cli import Cli
from cnsupport.server import Server
from cnsupport.session import barrier, make_entries, methods_of, quiet, read_unprompted

# How long the tests watch for what must not come: a slow machine can only make these checks easier to pass.
QUIET = 1.5


def wait_for(server: Server, method: str) -> list[dict]:
    """The notifications the server sends unprompted, up to and including the first `method`, and the
    rest of the same step (which comes before the response to a request sent next); a front end attached
    takes them in."""
    notes = read_unprompted(server, lambda heard: method in methods_of(heard, include_progress=True))
    return notes + barrier(server)


def shell(store, *args: str) -> str:
    return Cli(store).ok(*args).out


def test_a_memo_created_in_the_shell_appears_in_the_editor(servers):
    editor = servers.session(mirror=True)
    assert editor.mirror.detail is None
    memo_id = shell(servers.store, "new", "From the shell").strip()
    notes = wait_for(editor, "detail/didShow")
    # Memo by memo (protocol 1.1): the front end's list need not be read again.
    assert [n["method"] for n in notes] == ["list/didInsert", "selection/didChange", "detail/didShow"]
    assert notes[0]["params"]["index"] == 0 and notes[0]["params"]["row"]["id"] == memo_id
    assert editor.mirror.detail.id == memo_id  # nothing was selected: the newest is shown (rule S1)
    editor.check_mirror()


def test_own_changes_are_not_announced_twice(client):
    client.call("memo/create", {"text": "Mine"})
    assert quiet(client, QUIET) == []
    assert barrier(client) == []


def test_an_edit_elsewhere_updates_the_detail_and_a_stale_update_is_refused(servers):
    first = servers.session(mirror=True)
    memo = first.call("memo/create", {"text": "Shared\nversion one"})["memo"]
    second = servers.session(mirror=True)
    second_view = second.mirror.detail
    assert second_view.id == memo["id"]
    edited = second.call("memo/update", {"id": memo["id"], "text": "Shared\nedited in the second editor",
                                         "baseVersion": second_view.version})["memo"]
    notes = wait_for(first, "detail/didShow")
    assert notes[0]["method"] == "list/didUpdate" and notes[0]["params"]["row"]["id"] == memo["id"]
    assert first.mirror.detail.text == edited["text"] and first.mirror.detail.version == edited["version"]
    first.check_mirror()
    # The first editor's buffer was based on version one: its update is refused with the current memo.
    error = first.error_of("memo/update", {"id": memo["id"], "text": "Shared\nstale typing",
                                           "baseVersion": memo["version"]})
    assert error["code"] == -33002
    assert error["data"]["memo"]["text"] == edited["text"]
    assert second.shared(memo["id"])["text"] == edited["text"]


def test_a_delete_elsewhere_moves_the_selection_as_rule_s4_says(servers):
    first = servers.session(mirror=True)
    ids = [first.call("memo/create", {"text": f"memo {index}"})["memo"]["id"] for index in range(3)]
    first.call("memo/select", {"id": ids[1]})  # the middle one, at index 1
    assert first.mirror.selection == Selection(ids[1], 1)
    shell(servers.store, "rm", ids[1])
    wait_for(first, "detail/didShow")
    assert first.mirror.selection == Selection(ids[0], 1)  # the memo now at the same index
    first.check_mirror()
    shell(servers.store, "rm", ids[0])
    shell(servers.store, "rm", ids[2])
    wait_for(first, "detail/didClear")
    assert first.mirror.selection == Selection(None, None)
    first.check_mirror()


def test_four_processes_under_a_mixed_load_agree_with_the_store(servers):
    rng = random.Random(20261121)
    editors = []
    for _ in range(4):
        editor = servers.session(mirror=True)
        editors.append(editor)
    for step in range(160):
        editor = rng.choice(editors)
        rows = editor.mirror.rows or []
        action = rng.random()
        if action < 0.35 or not rows:
            editor.call("memo/create", {"text": f"memo {step}\nfrom editor {editors.index(editor)}"})
        elif action < 0.7:
            target = rng.choice(rows).id
            # No baseVersion: last writer wins for this load; the conflict path has its own test.
            _, response = editor.request("memo/update", {"id": target, "text": f"edited at {step}"})
            assert "result" in response or response["error"]["code"] == -33001, response
        elif action < 0.85:
            _, response = editor.request("memo/delete", {"id": rng.choice(rows).id})
            assert "result" in response or response["error"]["code"] == -33001, response
        else:
            _, response = editor.request("memo/select", {"id": rng.choice(rows).id})
            assert "result" in response or response["error"]["code"] == -33001, response
        if step % 40 == 39:
            shell(servers.store, "new", f"shell memo {step}")
    truth = Cli(servers.store).ids()
    for editor in editors:
        barrier(editor)  # every change of the others, told
        assert not editor.stray, f"unprompted responses: {editor.stray}"
        assert list(editor.mirror.ids) == truth
        editor.check_mirror()
        assert "database is locked" not in editor.stderr


def test_editors_started_at_once_on_a_new_store_all_open_it(servers, tmp_root):
    for attempt in range(5):
        store = tmp_root / f"fresh-{attempt}" / "notes.sqlite"
        started = [servers.adopt(Server(store)) for _ in range(4)]
        for server in started:
            server.initialize()
        for server in started:
            assert server.call("memo/list", {})["total"] == 0
            assert server.shutdown_and_exit() == 0


def test_commits_that_change_nothing_visible_reach_no_front_end(servers):
    first = servers.session()
    second = servers.session(mirror=True)
    # An import commits its memos a chunk at a time, hidden until the last one: other front ends see
    # the import once, not a reset per chunk.
    _, response = first.request("memo/import", {"memos": make_entries(20_000, "bulk")}, timeout=120)
    assert response["result"] == {"imported": 20_000}
    seen = barrier(second)
    seen += read_unprompted(second, lambda heard: True, settle=QUIET)
    assert methods_of(seen).count("list/didReset") == 1, methods_of(seen)
    # The exit's checkpoint changes nothing visible either.
    assert first.shutdown_and_exit() == 0
    assert quiet(second, QUIET) == []
    assert barrier(second) == []
    second.check_mirror()

"""Versions and the trash through the protocol (protocol/README.md, "Versions and the trash"): which texts
are kept, `memo/history`, `memo/version` and `memo/restore` (rule S3, and the detail pane), the trash
(`memo/delete`, `trash/list`, `memo/undelete` by rule S2, `trash/empty`), the policies applied at start,
and each change seen by another process. A front end's mirror checks rule S7 after every step."""

from __future__ import annotations

import time

import pytest

from cnsupport.cli import Cli
from cnsupport.schema import INVALID_PARAMS, MEMO_NOT_FOUND, VERSION_CONFLICT, VERSION_NOT_FOUND
from cnsupport.session import methods_of, params_of

EVERY_CHANGE = ["--version-pause", "0"]  # every change keeps the text it replaces


@pytest.fixture
def editor(servers):
    """An initialized server with a mirror, keeping every replaced text as a version."""
    return servers.session(mirror=True, args=EVERY_CHANGE)


def history(server, memo_id: str) -> list[dict]:
    return server.call("memo/history", {"id": memo_id})["versions"]


def update(server, memo_id: str, text: str) -> dict:
    return server.call("memo/update", {"id": memo_id, "text": text})["memo"]


def trash_ids(server) -> list[str]:
    return [row["id"] for row in server.call("trash/list", {})["rows"]]


# -- which texts are kept ------------------------------------------------------------------------------

def test_history_lists_the_replaced_texts_newest_first_and_version_returns_each_exactly(editor):
    texts = ["first\r\nline", "second 😀\u0000nul", "third"]
    memo = editor.create(texts[0])
    for text in texts[1:]:
        update(editor, memo["id"], text)
    result = editor.call("memo/history", {"id": memo["id"]})
    assert result["id"] == memo["id"] and result["total"] == 2
    rows = result["versions"]
    assert [row["version"] for row in rows] == [2, 1]
    assert [row["origin"] for row in rows] == ["edit", "edit"]
    assert [row["size"] for row in rows] == [len(t.encode()) for t in reversed(texts[:2])]
    assert [row["title"] for row in rows] == ["second 😀nul", "first"]
    for row, text in zip(rows, reversed(texts[:2])):
        version = editor.call("memo/version", {"id": memo["id"], "version": row["version"]})
        assert version["text"] == text
        assert {k: version[k] for k in row} == row
    assert editor.call("memo/history", {"id": memo["id"], "offset": 1, "limit": 1})["versions"] == rows[1:]
    editor.check_mirror()


def test_one_session_typing_keeps_no_version_but_another_session_keeps_the_text_it_replaces(servers):
    first = servers.session()
    memo = first.create("Typed fast")
    version = memo["version"]
    for character in "abcdefghij" * 20:
        version = first.call("memo/edit", {"id": memo["id"], "baseVersion": version,
                                           "edits": [{"start": 0, "end": 0, "text": character}]})["version"]
    assert history(first, memo["id"]) == []
    typed = first.memo_text(memo["id"])
    second = servers.session()
    update(second, memo["id"], "Replaced by another editor")
    rows = history(second, memo["id"])
    assert len(rows) == 1 and rows[0]["origin"] == "edit"
    assert second.call("memo/version", {"id": memo["id"], "version": 1})["text"] == typed


# -- restore -----------------------------------------------------------------------------------------------

def test_restore_of_the_selected_memo_moves_its_row_and_shows_the_restored_text(editor):
    memo = editor.create("Draft")
    update(editor, memo["id"], "Final")
    other = editor.create("Another memo")
    editor.call("memo/select", {"id": memo["id"]})
    notes, result = editor.call_notes("memo/restore", {"id": memo["id"], "version": 1, "baseVersion": 2})
    restored = result["memo"]
    assert restored["text"] == "Draft" and restored["version"] == 3
    assert methods_of(notes) == ["list/didUpdate", "selection/didChange", "detail/didShow"]
    assert params_of(notes, "list/didUpdate")[0]["fromIndex"] == 1 and params_of(notes, "list/didUpdate")[0]["toIndex"] == 0
    assert params_of(notes, "detail/didShow") == [{"memo": restored, "editable": True}]
    editor.check_mirror()
    # The text it replaced is a version now: restoring that undoes the restore.
    assert [row["version"] for row in history(editor, memo["id"])] == [2, 1]
    editor.call("memo/restore", {"id": memo["id"], "version": 2})
    assert editor.memo_text(memo["id"]) == "Final"
    # A memo that is not selected moves, and the detail pane stays where it is.
    assert history(editor, other["id"]) == []
    update(editor, other["id"], "Another memo, edited")
    notes, _ = editor.call_notes("memo/restore", {"id": other["id"], "version": 1})
    assert "detail/didShow" not in methods_of(notes)
    editor.check_mirror()


def test_restore_refuses_unknown_versions_stale_bases_deleted_memos_and_bad_params(editor):
    memo = editor.create("One")
    update(editor, memo["id"], "Two")
    error = editor.error_of("memo/restore", {"id": memo["id"], "version": 9})
    assert error["code"] == VERSION_NOT_FOUND and error["data"] == {"id": memo["id"], "version": 9}
    error = editor.error_of("memo/version", {"id": memo["id"], "version": 9})
    assert error["code"] == VERSION_NOT_FOUND
    error = editor.error_of("memo/restore", {"id": memo["id"], "version": 1, "baseVersion": 1})
    assert error["code"] == VERSION_CONFLICT and error["data"]["memo"]["text"] == "Two"
    for params, param in [({"id": memo["id"]}, "version"), ({"id": memo["id"], "version": 0}, "version"),
                          ({"id": memo["id"], "version": 1.5}, "version"), ({"version": 1}, "id")]:
        error = editor.error_of("memo/restore", params)
        assert error["code"] == INVALID_PARAMS and error["data"]["param"] == param, params
    assert editor.memo_text(memo["id"]) == "Two", "nothing refused changed the memo"
    editor.call("memo/delete", {"id": memo["id"]})
    assert editor.error_of("memo/restore", {"id": memo["id"], "version": 1})["code"] == MEMO_NOT_FOUND
    editor.check_mirror()


# -- the trash -----------------------------------------------------------------------------------------------

def test_a_deleted_memo_waits_in_the_trash_unsearched_and_undelete_brings_it_back_by_rule_s2(editor):
    kept = editor.create("needle kept")
    gone = editor.create("needle deleted")
    update(editor, gone["id"], "needle deleted\nwith a second line")
    editor.call("memo/delete", {"id": gone["id"]})
    rows = editor.call("trash/list", {})["rows"]
    assert [row["id"] for row in rows] == [gone["id"]]
    assert rows[0]["title"] == "needle deleted" and rows[0]["preview"] == "with a second line"
    assert editor.search_total("needle") == 1, "search never sees the trash"
    assert editor.error_of("memo/select", {"id": gone["id"]})["code"] == MEMO_NOT_FOUND
    assert len(history(editor, gone["id"])) == 1, "versions stay readable in the trash"
    # Undelete under a filter: the filter goes, as for memo/create.
    editor.call("memo/search", {"query": "kept"})
    editor.check_mirror()
    notes, result = editor.call_notes("memo/undelete", {"id": gone["id"]})
    back = result["memo"]
    assert back["text"] == "needle deleted\nwith a second line"
    assert methods_of(notes) == ["list/didReset", "selection/didChange", "detail/didShow"]
    assert params_of(notes, "selection/didChange") == [{"id": gone["id"], "index": 0}]
    listing = editor.check_mirror()
    assert listing["total"] == 2 and listing["rows"][0]["id"] == gone["id"]
    assert editor.search_total("needle") == 2
    assert trash_ids(editor) == []
    assert len(history(editor, gone["id"])) == 1, "its versions came back with it"
    assert editor.error_of("memo/undelete", {"id": gone["id"]})["code"] == MEMO_NOT_FOUND
    # Without a filter: one list/didInsert at its place.
    editor.call("memo/search", {"query": ""})
    editor.call("memo/delete", {"id": kept["id"]})
    notes, _ = editor.call_notes("memo/undelete", {"id": kept["id"]})
    assert methods_of(notes) == ["list/didInsert", "selection/didChange", "detail/didShow"]
    editor.check_mirror()


def test_emptying_the_trash_purges_texts_and_versions(editor):
    memo = editor.create("Old news")
    update(editor, memo["id"], "Older news")
    editor.call("memo/delete", {"id": memo["id"]})
    blank = editor.create("")
    editor.call("memo/delete", {"id": blank["id"]})
    assert trash_ids(editor) == [memo["id"]], "a blank memo with no versions skips the trash"
    notes, result = editor.call_notes("trash/empty")
    assert result == {"purged": 1} and notes == []
    assert trash_ids(editor) == []
    assert editor.error_of("memo/history", {"id": memo["id"]})["code"] == MEMO_NOT_FOUND
    assert editor.error_of("memo/undelete", {"id": memo["id"]})["code"] == MEMO_NOT_FOUND
    editor.check_mirror()


# -- the policies, applied once a server has shown its first memo -------------------------------------------

def test_the_trash_and_old_versions_are_purged_by_the_policy_at_start(servers):
    first = servers.session(args=EVERY_CHANGE)
    kept = first.create("Kept")
    update(first, kept["id"], "Kept, edited")
    gone = first.create("Gone")
    first.call("memo/delete", {"id": gone["id"]})
    first.shutdown_and_exit()
    second = servers.session(args=["--trash-days", "0", "--keep-history", "0"])
    deadline = time.monotonic() + 10
    while (trash_ids(second) or history(second, kept["id"])) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert trash_ids(second) == [] and history(second, kept["id"]) == []
    assert second.memo_text(kept["id"]) == "Kept, edited", "the policy never touches a live memo's text"


# -- other processes -------------------------------------------------------------------------------------------

def test_a_delete_and_an_undelete_in_the_shell_reach_an_open_editor(servers, tmp_root):
    editor = servers.session(mirror=True)
    memo = editor.create("Shared memo")
    shell = Cli(servers.store, store_flag=True)
    shell.rm(memo["id"])
    deadline = time.monotonic() + 10
    while editor.list_all()["total"] != 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert trash_ids(editor) == [memo["id"]]
    shell.ok("undelete", memo["id"][:8])
    while editor.list_all()["total"] != 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert editor.check_mirror()["rows"][0]["id"] == memo["id"]
    # The shell's edit keeps the editor's text, and says who wrote it.
    shell.edit(memo["id"], "Edited in the shell")
    assert [(row["origin"], row["title"]) for row in history(editor, memo["id"])] == [("edit", "Shared memo")]
    update(editor, memo["id"], "Edited in the editor again")
    assert [row["origin"] for row in history(editor, memo["id"])] == ["shell", "edit"]


# -- a crash while pruning -----------------------------------------------------------------------------------

def test_a_kill_during_pruning_loses_no_memo_and_no_version_the_policy_keeps(servers, tmp_root):
    """10,000 memos, each with one version dated over the last 200 days; servers that prune them are killed
    at random moments, and each time the store holds every memo and every version younger than 90 days."""
    import random
    import sqlite3
    from cnsupport.session import make_entries, write_entries

    count, day = 10_000, 86_400
    now = int(time.time())
    entries = make_entries(count, "aged")
    for index, entry in enumerate(entries):
        entry["last_modified"] = now - (index * 200 * day) // count
    first = servers.session()
    first.call("memo/import", {"path": str(write_entries(tmp_root / "aged.json", entries))}, timeout=300)
    ids = [row["id"] for row in first.list_all()["rows"]]
    for start in range(0, count, 500):  # each edit keeps the imported text as a version, dated by the import
        pending = [first.send_request("memo/update", {"id": memo_id, "text": f"edited {memo_id}"})
                   for memo_id in ids[start:start + 500]]
        for request_id in pending:
            assert "result" in first.wait_response(request_id)[1]
    first.shutdown_and_exit()

    def versions(db) -> dict[str, int]:
        return dict(db.execute("SELECT m.id, v.savedAt FROM memoVersion v JOIN memo m ON m.localID = v.memo"))

    # Every version younger than 90 days (with an hour's margin for the clock) is one the policy keeps.
    required = {memo_id for memo_id, entry in zip(ids, entries) if entry["last_modified"] > now - 90 * day + 3600}

    def check() -> dict[str, int]:
        """The store is sound, holds every memo as edited and every version the policy keeps; its versions."""
        db = sqlite3.connect(f"file:{servers.store}?mode=ro", uri=True)
        try:
            assert db.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            texts = dict(db.execute("SELECT id, CAST(text AS TEXT) FROM memo WHERE deleted = 0"))
            assert texts == {memo_id: f"edited {memo_id}" for memo_id in ids}, "a memo was lost or changed"
            kept = versions(db)
            assert required <= kept.keys(), f"{len(required - kept.keys())} versions the policy keeps are gone"
            return kept
        finally:
            db.close()

    assert len(check()) == count
    rng = random.Random(66)
    for _ in range(4):
        server = servers.session(args=["--keep-history", "90"])  # the policy applies once the first memo is shown
        time.sleep(rng.uniform(0.02, 0.3))  # pruning these takes a good part of a second
        server.kill()
        check()
    servers.session(args=["--keep-history", "90"])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        remaining = check()
        if all(saved >= (now - 91 * day) * 1000 for saved in remaining.values()):
            break
        time.sleep(0.2)
    assert all(saved >= (now - 91 * day) * 1000 for saved in remaining.values()), "the policy did not finish"

"""Sync through the protocol: `sync/configure`, `sync/now`, `sync/status` and `sync/didChange`, with a
folder remote. Memos that sync brings in reach the front end as changes by another process do, and the
server syncs on its own at start and after edits settle."""

from __future__ import annotations

import json
import shutil
import time
from pathlib import Path

import pytest

from cnsupport.cli import Cli
from cnsupport.remote import HEX32, folder_url
from cnsupport.schema import CODE, INVALID_PARAMS, REQUEST_CANCELLED, VERSION_CONFLICT
from cnsupport.server import Server
from cnsupport.session import a_sync_ended, barrier, make_entries, progress_kinds, read_unprompted, wait_for_progress
from cnsupport.syncing import after_a_millisecond, make_store, publish

SYNC_FAILED = CODE.get("SyncFailed", -33006)


def start(servers, *args: str, store: Path | None = None) -> Server:
    """An initialized server (on the test's store, by default) with a front end that also keeps every
    sync/didChange status it hears (`server.sync_statuses`); by default it syncs only when asked or
    configured."""
    options = list(args)
    if "--sync-interval" not in options:
        options += ["--sync-interval", "0"]
    if "--sync-delay" not in options:
        options += ["--sync-delay", "600"]
    server = servers.start(store or servers.store, args=options)
    _, notes = server.initialize()
    server.sync_statuses = []
    server.attach_mirror(notes)
    return server


def wait_for(server: Server, done, *, settle: float | None = None, timeout: float = 60.0) -> list[dict]:
    """Reads unprompted notifications, the front end taking in each, until `done(server)` holds; then the
    rest of the same step (which comes before the response to a request sent next), or with `settle`
    whatever follows within that many seconds (for checks that nothing more comes)."""
    notes = read_unprompted(server, lambda _: done(server), settle=settle or 0.0, timeout=timeout)
    return notes + (barrier(server) if settle is None else [])


def sync_ended(since: int):
    """A sync that started after the front end heard `since` statuses has ended."""
    return lambda server: a_sync_ended([status["state"] for status in server.sync_statuses[since:]])


def sync_started(since: int):
    """A sync started after the front end heard `since` statuses."""
    return lambda server: any(s["state"] == "syncing" for s in server.sync_statuses[since:])


def published_on_its_own(since: int):
    """A sync that started after the front end heard `since` statuses has ended, with nothing left to publish."""
    return lambda server: sync_ended(since)(server) and server.sync_statuses[-1]["pendingChanges"] == 0


def listed(memo_id: str):
    """The front end lists the memo."""
    return lambda server: memo_id in (server.mirror.ids or ())


def configure(server: Server, remote: Path, **params) -> dict:
    """sync/configure, then waits for the sync it starts to end."""
    since = len(server.sync_statuses)
    status = server.call("sync/configure", {"remote": folder_url(remote), **params})
    wait_for(server, sync_ended(since))
    return status


def start_synced(servers, remote: Path, *texts: str) -> tuple[Server, list[dict]]:
    """A server (see `start`) with memos `texts` made there, and then configured to sync with the folder
    remote, its first sync ended; the server and the memos."""
    server = start(servers)
    memos = [server.create(text) for text in texts]
    configure(server, remote)
    return server, memos


def configure_in_the_background(server: Server, remote: Path, settle: float = 0) -> int:
    """sync/configure, which starts the server's own sync; returns once that sync has started (and `settle`
    s more), with the number of statuses heard before it."""
    since = len(server.sync_statuses)
    server.call("sync/configure", {"remote": folder_url(remote)})
    wait_for(server, sync_started(since), settle=settle)
    return since


def assert_no_sync_failed(server: Server, since: int) -> None:
    """The front end was not told that a sync failed (since it heard `since` statuses)."""
    failures = [status for status in server.sync_statuses[since:] if status["state"] == "failed"]
    assert not failures, f"the front end was told a sync failed: {failures[0].get('lastError')}"


def other_store(tmp_root: Path, remote: Path, *texts: str) -> tuple[Cli, list[str]]:
    """Another store on the same folder remote, with memos `texts` made there, synced; the store and their ids."""
    other = make_store(tmp_root, "other")
    return other, publish(other, folder_url(remote), *texts)


def edit_elsewhere(tmp_root: Path, remote: Path, memo_id: str, text: str) -> Cli:
    """Another store on the same folder remote edits the memo, and publishes the edit."""
    other, _ = other_store(tmp_root, remote)
    other.edit(memo_id, text)
    other.sync()
    return other


def sync_now(server: Server, timeout: float = 60.0) -> tuple[list[dict], dict]:
    notes, response = server.request("sync/now", {}, timeout=timeout)
    assert "result" in response, response
    return notes, response["result"]


# -- sync/configure and sync/status ---------------------------------------------------------------------

def test_configure_answers_a_status_and_announces_it(servers, remote):
    server = start(servers)
    server.create("a memo to publish")
    notes, status = server.call_notes("sync/configure", {"remote": folder_url(remote) + "/"})
    assert status["state"] in ("idle", "syncing")
    assert status["remote"] == folder_url(remote)  # normalized: no trailing slash
    assert HEX32.match(status["device"])
    assert status["intervalSeconds"] == 0 and status["conflicts"] == []
    announced = [n["params"]["status"] for n in notes if n["method"] == "sync/didChange"]
    assert announced and announced[0]["remote"] == folder_url(remote) and announced[0]["device"] == status["device"]
    # The server syncs at once.
    wait_for(server, sync_ended(0))
    final = server.sync_statuses[-1]
    assert final["state"] == "idle" and "lastSync" in final and final["pendingChanges"] == 0, final
    assert (remote / "cloudnotes-sync.json").exists()
    assert (remote / "devices" / status["device"] / "head.json").exists()


def test_status_tells_where_sync_stands(servers, remote):
    server = start(servers)
    off = server.call("sync/status")
    assert off["state"] == "off" and "remote" not in off and HEX32.match(off["device"])
    assert off["pendingChanges"] == 0 and off["conflicts"] == [] and "lastSync" not in off
    server.create("one")
    server.create("two")
    configure(server, remote, intervalSeconds=45)
    status = server.call("sync/status")
    assert status["remote"] == folder_url(remote) and status["device"] == off["device"]
    assert status["state"] == "idle" and status["intervalSeconds"] == 45 and "lastSync" in status
    assert status["pendingChanges"] == 0
    server.create("three")
    assert server.call("sync/status")["pendingChanges"] == 1


def test_configure_with_null_stops_syncing(servers, remote):
    server, _ = start_synced(servers, remote)
    status = server.call("sync/configure", {"remote": None})
    assert status["state"] == "off" and "remote" not in status
    error = server.error_of("sync/now", {})
    assert error["code"] == SYNC_FAILED and error["data"]["reason"] == "notConfigured"


@pytest.mark.parametrize("url", ["ftp://x", "not a url", "http://user:secret@host/", "https://:secret@host/dav/",
                                 "file://host/folder", ""])
def test_configure_refuses_a_bad_remote_and_never_repeats_a_secret(servers, url):
    server = start(servers)
    error = server.error_of("sync/configure", {"remote": url})
    assert error["code"] == INVALID_PARAMS, error
    assert "secret" not in json.dumps(error)
    assert server.call("sync/status")["state"] == "off"
    assert server.shutdown_and_exit() == 0
    assert "secret" not in server.stderr


# -- sync/now ---------------------------------------------------------------------------------------------

def test_sync_now_reports_progress_and_returns_a_result(servers, remote):
    server, _ = start_synced(servers, remote)
    server.create("first")
    server.create("second")
    notes, response = server.request("sync/now", {"workDoneToken": "sync-1"}, timeout=30)
    result = response["result"]
    assert result["published"] == 2 and result["changedMemos"] == 0 and result["conflicts"] == 0
    assert result["requests"] > 0
    assert result["status"]["state"] == "idle" and result["status"]["pendingChanges"] == 0
    assert "lastSync" in result["status"] and "lastError" not in result["status"]
    progress = [n["params"] for n in notes if n["method"] == "$/progress"]
    assert all(p["token"] == "sync-1" for p in progress)
    kinds = [p["value"]["kind"] for p in progress]
    assert kinds[0] == "begin" and kinds[-1] == "end" and "report" in kinds, kinds
    assert set(kinds[1:-1]) == {"report"}
    percentages = [p["value"]["percentage"] for p in progress if "percentage" in p["value"]]
    assert all(0 <= value <= 100 for value in percentages)
    states = [n["params"]["status"]["state"] for n in notes if n["method"] == "sync/didChange"]
    assert states[0] == "syncing" and states[-1] == "idle", states


def test_sync_now_without_a_remote_fails_not_configured(servers):
    server = start(servers)
    notes, response = server.request("sync/now", {"workDoneToken": 7})
    error = response["error"]
    assert error["code"] == SYNC_FAILED and error["data"]["reason"] == "notConfigured", error
    kinds = progress_kinds(notes)
    assert kinds == [] or kinds[-1] == "end", kinds  # no spinner left running


def test_sync_now_on_a_vanished_folder_fails_unreachable(servers, tmp_root, remote):
    server, _ = start_synced(servers, remote)
    shutil.rmtree(remote)
    error = server.error_of("sync/now", {})
    assert error["code"] == SYNC_FAILED and error["data"]["reason"] == "unreachable", error
    status = server.call("sync/status")
    assert status["state"] == "failed" and status["lastError"], status
    assert not remote.exists(), "the sync made the missing folder"


def test_a_remote_that_lost_the_history_fails_until_republished(servers, tmp_root, remote):
    server, _ = start_synced(servers, remote, "published once")
    remote.rename(tmp_root / "elsewhere")
    remote.mkdir()
    error = server.error_of("sync/now", {})
    assert error["code"] == SYNC_FAILED and error["data"]["reason"] == "remoteLostHistory", error
    assert list(remote.iterdir()) == []
    assert server.list_all()["total"] == 1
    configure(server, remote, republish=True)
    assert server.call("sync/status")["state"] == "idle"
    other, _ = other_store(tmp_root, remote)
    assert [row["title"] for row in other.rows()] == ["published once"]


# -- what sync brings in reaches the front end -------------------------------------------------------------

def test_a_memo_synced_from_another_store_reaches_the_front_end(servers, tmp_root, remote):
    server, _ = start_synced(servers, remote, "made here")
    _, [memo_id] = other_store(tmp_root, remote, "made on another store\nwith a body")
    _, result = sync_now(server)
    assert result["changedMemos"] == 1
    wait_for(server, listed(memo_id))
    assert any(line.startswith("list/") for line in server.mirror.recent)
    server.check_mirror()
    assert server.memo_text(memo_id) == "made on another store\nwith a body"


def test_the_server_syncs_at_start(servers, tmp_root, remote):
    here = make_store(tmp_root, "here")
    here.sync(folder_url(remote))
    _, [memo_id] = other_store(tmp_root, remote, "waiting on the remote")
    server = start(servers, store=here.store)
    wait_for(server, listed(memo_id))
    server.check_mirror()
    assert server.mirror.detail is not None and server.mirror.detail.id == memo_id


def test_the_selected_memo_changed_by_sync_is_shown_and_a_stale_update_is_refused(servers, tmp_root, remote):
    server = start(servers)
    memo = server.create("Shared\nversion one")
    assert server.mirror.detail.id == memo["id"]
    configure(server, remote)
    other = edit_elsewhere(tmp_root, remote, memo["id"], "Shared\nedited on the other store")
    sync_now(server)
    wait_for(server, lambda server: server.mirror.detail.text == "Shared\nedited on the other store")
    shown = server.mirror.detail
    assert shown.id == memo["id"] and shown.version > memo["version"]
    server.check_mirror()
    error = server.error_of("memo/update", {"id": memo["id"], "text": "Shared\nstale typing", "baseVersion": memo["version"]})
    assert error["code"] == VERSION_CONFLICT
    assert error["data"]["memo"]["text"] == "Shared\nedited on the other store"
    # With the version shown, the update goes through, and reaches the other store.
    server.call("memo/update", {"id": memo["id"], "text": "Shared\nmerged by hand", "baseVersion": shown.version})
    sync_now(server)
    other.sync()
    assert other.text(memo["id"]) == "Shared\nmerged by hand"


def test_an_edit_reaches_another_store_after_the_sync_delay_without_sync_now(servers, tmp_root, remote):
    server = start(servers, "--sync-delay", "0.2")
    configure(server, remote)
    other, _ = other_store(tmp_root, remote)
    since = len(server.sync_statuses)
    memo = server.create("typed in the editor")
    wait_for(server, published_on_its_own(since))
    other.sync()
    assert other.text(memo["id"]) == "typed in the editor", "the edit was not published on its own"
    # An editor's keystrokes (memo/edit) count as edits too (the interval alone is minutes away).
    since = len(server.sync_statuses)
    server.call("memo/edit", {"id": memo["id"], "baseVersion": memo["version"],
                              "edits": [{"start": 0, "end": 5, "text": "edited"}]})
    wait_for(server, published_on_its_own(since))
    other.sync()
    assert other.text(memo["id"]) == "edited in the editor", "the memo/edit was not published on its own"


def test_a_conflict_met_by_the_server_is_listed_in_its_status(servers, tmp_root, remote):
    server, [memo] = start_synced(servers, remote, "Plan\nmonday")
    edit_elsewhere(tmp_root, remote, memo["id"], "Plan\ntuesday")
    after_a_millisecond()
    server.call("memo/update", {"id": memo["id"], "text": "Plan\nwednesday", "baseVersion": memo["version"]})
    _, result = sync_now(server)
    assert result["conflicts"] == 1 and len(result["status"]["conflicts"]) == 1
    conflict = result["status"]["conflicts"][0]
    assert conflict["memo"] == memo["id"]
    wait_for(server, listed(conflict["copy"]))
    assert server.memo_text(memo["id"]) == "Plan\nwednesday"
    assert server.memo_text(conflict["copy"]) == "Conflict copy: Plan\ntuesday"
    server.check_mirror()
    server.call("memo/delete", {"id": conflict["copy"]})
    assert server.call("sync/status")["conflicts"] == []


# -- long syncs ----------------------------------------------------------------------------------------------

MANY = 20_000


def server_with_many_memos(servers, *args: str) -> Server:
    server = start(servers, *args)
    assert server.call("memo/import", {"memos": make_entries(MANY, "many")}, timeout=120) == {"imported": MANY}
    return server


def test_cancelling_a_long_sync_now_answers_cancelled_and_the_next_completes(servers, remote):
    server = server_with_many_memos(servers)
    server.call("sync/configure", {"remote": folder_url(remote)})
    request_id = server.send_request("sync/now", {"workDoneToken": "long"})
    wait_for_progress(server, "long")  # under way
    server.notify("$/cancelRequest", {"id": request_id})
    notes, response = server.wait_response(request_id, timeout=60)
    server.feed(notes)
    assert "error" in response, f"the sync finished before the cancel: {response}"
    assert response["error"]["code"] == REQUEST_CANCELLED, response
    kinds = progress_kinds(notes)
    assert kinds and kinds[-1] == "end"
    # A cancelled sync is no failure (protocol/README.md, `sync/now`).
    status = server.call("sync/status")
    assert status["state"] != "failed" and "lastError" not in status, status
    _, result = sync_now(server, timeout=120)
    assert result["status"]["pendingChanges"] == 0 and result["status"]["state"] == "idle"
    assert "lastError" not in result["status"]


def test_cancelling_a_sync_now_that_waits_behind_the_servers_own_sync(servers, remote):
    # The sync/now waits for its turn behind the sync that sync/configure started; cancelled there, it
    # answers at once, while that sync goes on to its end.
    server = server_with_many_memos(servers)
    since = configure_in_the_background(server, remote)
    request_id = server.send_request("sync/now", {"workDoneToken": "waiting"})
    wait_for_progress(server, "waiting", kinds=("begin",))  # it began, and waits for its turn
    server.notify("$/cancelRequest", {"id": request_id})
    notes, response = server.wait_response(request_id, timeout=60)
    server.feed(notes)
    assert response.get("error", {}).get("code") == REQUEST_CANCELLED, response
    states = [status["state"] for status in server.sync_statuses[since:]]
    assert states[-1] == "syncing", f"answered only after the server's own sync ended: {states}"
    wait_for(server, lambda server: server.sync_statuses[-1]["state"] == "idle", timeout=120)
    final = server.sync_statuses[-1]
    assert final["pendingChanges"] == 0 and "lastError" not in final, final


def test_sync_now_during_the_servers_own_sync_reports_no_failure(servers, remote):
    # The sync/configure starts a sync; a sync/now meanwhile waits for it or takes over, but nothing
    # failed, and the front end must not hear that it did.
    server = server_with_many_memos(servers)
    since = configure_in_the_background(server, remote, settle=0.2)
    _, result = sync_now(server, timeout=120)
    assert result["status"]["state"] == "idle" and result["status"]["pendingChanges"] == 0
    quiet_notes = wait_for(server, lambda server: True, settle=1.0)
    assert quiet_notes is not None
    assert_no_sync_failed(server, since)


def test_a_sync_now_right_after_configure_leaves_no_sync_behind_it(servers, remote):
    # sync/configure asks for a sync; a sync/now that starts before that one does its work, so the
    # client that waited for sync/now is told sync is idle, and no second sync follows it.
    server = start(servers)
    for index in range(12):
        server.create(f"memo {index} before round {index}")
        since = len(server.sync_statuses)
        configure_id = server.send_request("sync/configure", {"remote": folder_url(remote)})
        now_id = server.send_request("sync/now", {})
        notes, configured = server.wait_response(configure_id, timeout=60)
        server.feed(notes)
        assert "result" in configured, configured
        notes, response = server.wait_response(now_id, timeout=60)
        server.feed(notes)
        assert "result" in response, response
        assert response["result"]["status"]["state"] == "idle", (index, response["result"])
        assert response["result"]["status"]["pendingChanges"] == 0, (index, response["result"])
        answered = len(server.sync_statuses)
        wait_for(server, lambda server: True, settle=0.3)
        later = [status["state"] for status in server.sync_statuses[answered:]]
        assert "syncing" not in later, (index, server.sync_statuses[since:])


def test_edits_during_the_servers_own_sync_do_not_make_it_fail(servers, remote):
    # Edits schedule a sync once they settle; one already under way is not a failure, and the front
    # end must not be told that it failed.
    server = server_with_many_memos(servers, "--sync-delay", "0.5")
    memo = server.create("typing while the first sync runs")
    since = configure_in_the_background(server, remote, settle=0.1)
    version = memo["version"]
    for index in range(5):
        version = server.call("memo/update", {"id": memo["id"], "text": f"typing {index}", "baseVersion": version})["memo"]["version"]
        time.sleep(0.1)
    wait_for(server, lambda server: server.sync_statuses[-1]["state"] == "idle"
             and server.sync_statuses[-1]["pendingChanges"] == 0 and "lastSync" in server.sync_statuses[-1])
    assert_no_sync_failed(server, since)

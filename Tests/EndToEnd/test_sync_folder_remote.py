"""A folder remote as protocol/sync.md describes it: nothing is deleted because a file is missing (a
remote emptied, restored from an older copy, unmounted, damaged), and the remote holds only the files the
layout describes, in the documented format."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from cnsupport.cli import Cli
from cnsupport.remote import (CONFLICT_PREFIX, conflict_copy_id, folder_url, read_remote, remote_files,
                              undocumented_files)
from cnsupport.syncing import (PACKING_LIST as BASE, assert_identical, edit_apart, make_store, publish, replace_line,
                               settle)


# -- nothing is deleted because a file is missing -------------------------------------------------------

def test_a_store_pointed_at_an_emptied_remote_stops_and_changes_nothing(tmp_root, remote):
    a = make_store(tmp_root, "a")
    for index in range(3):
        a.new(f"memo {index}")
    a.sync(folder_url(remote))
    before = a.snapshot()
    remote.rename(tmp_root / "remote-elsewhere")  # the share is unmounted: an empty folder in its place
    remote.mkdir()
    for _ in range(2):
        failed = a.fails("sync")
        assert re.search(r"does not hold|lost", failed.err), failed.err
        assert "--republish" in failed.err
        assert list(remote.iterdir()) == [], "the sync wrote into the empty folder"
        assert a.snapshot() == before
    status = a.status()
    assert status["state"] == "failed" and "does not hold" in status["lastError"]


def test_a_remote_restored_from_an_older_copy_is_refused(tmp_root, remote):
    a = make_store(tmp_root, "a")
    publish(a, folder_url(remote), "first")
    shutil.copytree(remote, tmp_root / "backup")
    a.new("second")
    a.sync()
    before = a.snapshot()
    shutil.rmtree(remote)
    shutil.copytree(tmp_root / "backup", remote)  # the remote went back in time
    files = remote_files(remote)
    a.fails("sync")
    assert remote_files(remote) == files
    assert a.snapshot() == before


def test_another_devices_folder_going_missing_deletes_nothing(two_stores, tmp_root, remote):
    # A shared folder still catching up may lack a device's folder for a while.
    a, b = two_stores
    [from_b] = publish(b, folder_url(remote), "from B\nline two")
    a.sync(folder_url(remote))
    device = b.status()["device"]
    (remote / "devices" / device).rename(tmp_root / "b-folder-in-transit")
    a.sync()
    assert a.text(from_b) == "from B\nline two"
    a.edit(from_b, "from B\nedited on A")
    a.sync()
    (tmp_root / "b-folder-in-transit").rename(remote / "devices" / device)
    settle([a, b])
    assert b.text(from_b) == "from B\nedited on A"
    assert_identical([a, b])


def test_a_missing_remote_folder_fails_and_creates_nothing(tmp_root):
    if Path("/does").exists():
        pytest.skip("/does exists on this machine")
    a = make_store(tmp_root, "a")
    a.new("a memo")
    failed = a.fails("sync", "--remote", "file:///does/not/exist")
    assert "/does/not/exist" in failed.err and "does not exist" in failed.err, failed.err
    assert not Path("/does").exists()
    missing = tmp_root / "unmounted" / "share"
    a.fails("sync", "--remote", folder_url(missing))
    assert not (tmp_root / "unmounted").exists()
    assert [row["title"] for row in a.rows()] == ["a memo"]


def test_a_failed_switch_to_a_missing_folder_keeps_the_working_remote(tmp_root, remote):
    # The folder of a mistyped or unmounted remote does not exist: the command fails, and the store
    # must go on syncing with the remote it had, with what it published there (not take a new device
    # id and publish its whole history there a second time).
    a = make_store(tmp_root, "a")
    publish(a, folder_url(remote), "first memo")
    a.new("second memo")
    a.sync()
    before = a.status()
    a.fails("sync", "--remote", folder_url(tmp_root / "typo"))
    assert not (tmp_root / "typo").exists()
    after = a.status()
    assert (after["remote"], after["pendingChanges"], after.get("lastSync")) == (
        before["remote"], before["pendingChanges"], before.get("lastSync")), after
    result = a.sync(folder_url(remote))
    assert result["published"] == 0 and result["status"]["device"] == before["device"], result
    assert os.listdir(remote / "devices") == [before["device"]], "the store published anew under another device id"


def test_a_sync_that_cannot_reach_its_folder_is_reported_by_status(tmp_root, remote):
    # `--status` tells "failed: why" when the last sync failed; an unmounted share is the commonest why.
    a = make_store(tmp_root, "a")
    publish(a, folder_url(remote), "a memo")
    remote.rename(tmp_root / "unmounted")
    failed = a.fails("sync")
    assert "does not exist" in failed.err
    status = a.status()
    assert status["state"] == "failed" and "does not exist" in status.get("lastError", ""), status
    assert "failed:" in a.ok("sync", "--status").out


def test_a_damaged_segment_is_not_applied_and_the_next_sync_applies_it_once_whole(two_stores, remote):
    a, b = two_stores
    [kept] = publish(b, folder_url(remote), "B's own memo")
    publish(a, folder_url(remote), "from A, one", "from A, two")
    device = a.status()["device"]
    segment = remote / "devices" / device / "segments" / "000000000001.jsonl"
    whole = segment.read_bytes()
    segment.write_bytes(whole[: len(whole) // 2])  # a copy the shared folder has not finished
    failed = b.fails("sync")
    assert "unreadable" in failed.err or "cut short" in failed.err, failed.err
    assert b.ids() == [kept]
    assert b.status()["state"] == "failed"
    segment.write_bytes(whole)
    result = b.sync()
    assert result["changedMemos"] == 2 and result["status"]["state"] == "idle"
    settle([a, b])
    assert_identical([a, b])


def test_republish_publishes_anew_and_another_store_gets_everything(two_stores, tmp_root, remote):
    a, b = two_stores
    for index in range(4):
        a.new(f"memo {index}\nbody {index}")
    [gone] = publish(a, folder_url(remote), "deleted before the remote was lost")
    a.rm(gone)
    remote.rename(tmp_root / "remote-elsewhere")
    remote.mkdir()
    a.fails("sync")
    result = a.sync(None, "--republish")
    assert result["published"] >= 4 and result["status"]["state"] == "idle", result
    assert (remote / "cloudnotes-sync.json").exists()
    b.sync(folder_url(remote))
    assert_identical([a, b])
    assert len(b.ids()) == 4


# -- the remote holds what protocol/sync.md says, and nothing else ----------------------------------------

def varied_history(tmp_root: Path, remote: Path) -> tuple[Cli, Cli, dict]:
    """A and B with creates, edits, a delete, a merge and a conflict published on `remote`."""
    a, b = make_store(tmp_root, "a"), make_store(tmp_root, "b")
    memo_id, doomed = publish(a, folder_url(remote), BASE, "to be deleted")
    b.sync(folder_url(remote))
    a_text = replace_line(BASE, 2, "stove and gas")
    b_text = replace_line(BASE, 2, "camping stove")
    edit_apart(a, b, memo_id, a_text, b_text)
    b.rm(doomed)
    b.new("B's own memo\n" + "é ü 日本語 " * 20)
    a.sync()
    b.sync()
    settle([a, b])
    return a, b, {"memo": memo_id, "doomed": doomed, "a_text": a_text, "b_text": b_text}


def test_the_remote_holds_only_the_documented_files(tmp_root, remote):
    a, b, _ = varied_history(tmp_root, remote)
    files = remote_files(remote)
    assert "cloudnotes-sync.json" in files
    strays = undocumented_files(remote)
    assert not strays, f"files the layout does not describe: {strays}"
    for name in files:
        assert not (remote / name).read_bytes().startswith(b"SQLite format 3"), f"{name} is a database"
    devices = sorted(os.listdir(remote / "devices"))
    assert devices == sorted([a.status()["device"], b.status()["device"]])


def test_heads_and_segments_follow_the_documented_format(tmp_root, remote):
    a, b, facts = varied_history(tmp_root, remote)
    devices = read_remote(remote).devices  # every revision line checked as it is read
    revisions = {}
    for history in devices.values():
        for line in history.revisions:
            assert line["id"] not in revisions or revisions[line["id"]] == line
            revisions[line["id"]] = line
    for history in devices.values():
        # Every parent is on the remote; one published by the same device comes before its child.
        own = {line["id"] for line in history.revisions}
        seen: set[str] = set()
        for line in history.revisions:
            for parent in line["parents"]:
                assert parent in revisions, f"revision {line['id']} names a parent no device published"
                assert parent not in own or parent in seen, f"revision {line['id']} comes before its parent"
            seen.add(line["id"])
    memo = facts["memo"]
    tombstones = [r for r in revisions.values() if r["memo"] == facts["doomed"] and r["deleted"]]
    assert len(tombstones) == 1 and "text" not in tombstones[0]
    # The merge of the overlapping edits: two parents, the later text, min createdAt and max modifiedAt.
    merges = [r for r in revisions.values() if r["memo"] == memo and len(r["parents"]) == 2]
    assert len(merges) == 1, merges
    merge = merges[0]
    a_side, b_side = (revisions[parent] for parent in merge["parents"])
    assert {a_side["text"], b_side["text"]} == {facts["a_text"], facts["b_text"]}
    assert merge["text"] == facts["b_text"]
    assert merge["createdAt"] == min(a_side["createdAt"], b_side["createdAt"])
    assert merge["modifiedAt"] == max(a_side["modifiedAt"], b_side["modifiedAt"])
    # The conflict copy: its id derived from the memo and the losing text, dated by the loser.
    losing = a_side if a_side["text"] == facts["a_text"] else b_side
    copy_id = conflict_copy_id(memo, losing["text"])
    copies = [r for r in revisions.values() if r["memo"] == copy_id]
    assert len(copies) == 1, f"no revision of the conflict copy {copy_id}"
    assert copies[0]["parents"] == [] and copies[0]["text"] == CONFLICT_PREFIX + facts["a_text"]
    assert copies[0]["createdAt"] == copies[0]["modifiedAt"] == losing["modifiedAt"]
    assert a.text(copy_id) == b.text(copy_id) == CONFLICT_PREFIX + facts["a_text"]

"""Sync through a folder remote, driven by the shell (`cloudnotes sync`) as a person or a script would:
several stores on one `file://` remote exchange memos, merge edits, keep both sides of a conflict, never
lose an edit to a delete or to a remote that went missing, write only the files protocol/sync.md
describes, and survive being killed at any moment."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import time
from datetime import datetime
from pathlib import Path

import pytest

from conftest import Server
from sync_shell import (CONFLICT_PREFIX, HEX32, Store, assert_identical, check_revision, conflict_copy_id,
                        folder_url, read_remote, remote_files, revision_id, settle)

BASE = "Packing list\ntent\nstove\nmatches\nwater\nmap\ncompass"


def replace_line(text: str, index: int, line: str) -> str:
    lines = text.split("\n")
    lines[index] = line
    return "\n".join(lines)


@pytest.fixture
def remote(tmp_root) -> Path:
    path = tmp_root / "remote"
    path.mkdir()
    return path


@pytest.fixture
def pair(tmp_root, remote) -> tuple[Store, Store, str]:
    """Two stores, A and B, on one folder remote, both holding the memo BASE (made on A); returns (A, B, id)."""
    a, b = Store(tmp_root, "a"), Store(tmp_root, "b")
    memo_id = a.new(BASE)
    a.sync("--remote", folder_url(remote))
    b.sync("--remote", folder_url(remote))
    assert b.text(memo_id) == BASE
    return a, b, memo_id


def sync_in_order(a: Store, b: Store, order: str) -> None:
    first, second = (a, b) if order == "a_first" else (b, a)
    first.sync()
    second.sync()
    settle([a, b])


# -- two stores ---------------------------------------------------------------------------------------

def test_a_memo_made_on_one_store_appears_on_another(tmp_root, remote):
    a, b = Store(tmp_root, "a"), Store(tmp_root, "b")
    memo_id = a.new("Made on A\nwith a second line")
    result = a.sync("--remote", folder_url(remote))
    assert result["published"] == 1 and result["changedMemos"] == 0
    assert result["status"]["remote"] == folder_url(remote) and result["status"]["pendingChanges"] == 0
    result = b.sync("--remote", folder_url(remote))
    assert result["changedMemos"] == 1
    assert b.ids() == [memo_id]
    assert b.memo(memo_id)["text"] == "Made on A\nwith a second line"
    assert_identical([a, b])


def test_a_plain_sync_prints_what_it_did(tmp_root, remote):
    a = Store(tmp_root, "a")
    a.new("one")
    a.new("two")
    run = a.ok("sync", "--remote", folder_url(remote))
    assert run.out == ""
    assert f"Synced with {folder_url(remote)}: 0 memos changed here, 2 changes published." in run.err


@pytest.mark.parametrize("order", ["a_first", "b_first"])
def test_edits_to_different_lines_merge(pair, order):
    a, b, memo_id = pair
    a.edit(memo_id, replace_line(BASE, 1, "tent (the big one)"))
    b.edit(memo_id, replace_line(BASE, 5, "map of the hills"))
    sync_in_order(a, b, order)
    merged = "Packing list\ntent (the big one)\nstove\nmatches\nwater\nmap of the hills\ncompass"
    assert a.texts() == b.texts() == {memo_id: merged}
    assert a.status()["conflicts"] == [] and b.status()["conflicts"] == []
    assert_identical([a, b])


@pytest.mark.parametrize("order", ["a_first", "b_first"])
def test_overlapping_edits_keep_the_later_text_and_a_conflict_copy_of_the_other(pair, order):
    a, b, memo_id = pair
    a_text = replace_line(BASE, 2, "stove and gas")
    b_text = replace_line(BASE, 2, "camping stove")
    a.edit(memo_id, a_text)
    time.sleep(0.01)
    b.edit(memo_id, b_text)  # the later edit: it keeps the memo
    sync_in_order(a, b, order)
    texts = a.texts()
    assert texts == b.texts()
    assert texts.pop(memo_id) == b_text
    assert list(texts.values()) == [CONFLICT_PREFIX + a_text], texts
    assert_identical([a, b])


def make_conflict(a: Store, b: Store, memo_id: str) -> tuple[str, Store]:
    """Overlapping edits on A then B, A syncs first, so B meets the conflict; returns (the copy's id, B)."""
    a.edit(memo_id, replace_line(BASE, 3, "matches (waterproof)"))
    time.sleep(0.01)
    b.edit(memo_id, replace_line(BASE, 3, "lighter"))
    a.sync()
    result = b.sync()
    assert result["conflicts"] == 1, result
    copy = [memo for memo in b.ids() if memo != memo_id]
    assert len(copy) == 1
    return copy[0], b


def test_status_lists_the_conflict(pair):
    a, b, memo_id = pair
    copy, merger = make_conflict(a, b, memo_id)
    assert merger.status()["conflicts"] == [{"memo": memo_id, "copy": copy}]
    run = merger.ok("sync", "--status")
    assert "conflicts: 1" in run.out
    assert f"conflict: memo {memo_id} has a copy {copy}" in run.err
    settle([a, b])
    assert a.texts() == b.texts()


def test_the_store_whose_edit_lost_also_lists_the_conflict(pair):
    # B meets the conflict and publishes the merge; A, whose text lost and now sits in a copy, takes
    # the merge as it is. Its user is the one who must merge by hand: its status must say so too.
    a, b, memo_id = pair
    copy, merger = make_conflict(a, b, memo_id)
    settle([a, b])
    assert a.text(copy) == b.text(copy)
    assert a.status()["conflicts"] == [{"memo": memo_id, "copy": copy}]


def test_the_sync_that_meets_a_conflict_says_so(pair):
    a, b, memo_id = pair
    a.edit(memo_id, replace_line(BASE, 3, "matches (waterproof)"))
    time.sleep(0.01)
    b.edit(memo_id, replace_line(BASE, 3, "lighter"))
    a.sync()
    run = b.ok("sync")
    assert "1 conflict kept as copies" in run.err or "1 conflict kept as a copy" in run.err, run.err
    assert f"conflict: memo {memo_id} has a copy " in run.err


def test_deleting_the_conflict_copy_settles_the_conflict_everywhere(pair):
    a, b, memo_id = pair
    copy, merger = make_conflict(a, b, memo_id)
    merger.rm(copy)
    assert merger.status()["conflicts"] == []
    settle([a, b])
    assert a.ids() == b.ids() == [memo_id]


@pytest.mark.parametrize("order", ["a_first", "b_first"])
def test_a_delete_does_not_beat_an_edit_it_did_not_see(pair, order):
    a, b, memo_id = pair
    a.rm(memo_id)
    edited = replace_line(BASE, 4, "water (two litres)")
    b.edit(memo_id, edited)
    sync_in_order(a, b, order)
    assert a.texts() == b.texts() == {memo_id: edited}
    assert_identical([a, b])


def test_a_delete_of_an_unchanged_memo_reaches_the_other_store(pair):
    a, b, memo_id = pair
    kept = b.new("kept")
    a.rm(memo_id)
    settle([a, b])
    assert a.ids() == b.ids() == [kept]


def test_three_stores_syncing_in_a_random_order_converge(tmp_root, remote):
    rng = random.Random(7301)
    stores = [Store(tmp_root, name) for name in "abc"]
    for index in range(4):
        stores[0].new("\n".join(f"memo {index} line {n}" for n in range(8)))
    for store in stores:
        store.sync("--remote", folder_url(remote))
    for round_number in range(3):
        for store in stores:
            ids = store.ids()
            for memo_id in rng.sample(ids, min(2, len(ids))):
                lines = store.text(memo_id).split("\n")
                line = rng.randrange(len(lines))
                lines[line] = f"{lines[line]} / {store.name}{round_number}"
                store.edit(memo_id, "\n".join(lines))
            if rng.random() < 0.3:
                store.rm(rng.choice(ids))
            if rng.random() < 0.5:
                store.new(f"new on {store.name} in round {round_number}\nline two")
        for _ in range(6):
            rng.choice(stores).sync()
    settle(stores)
    assert_identical(stores)


def epoch_ms(iso: str) -> int:
    return round(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def test_three_concurrent_edits_of_one_line_leave_one_copy_per_losing_text(tmp_root, remote):
    # A, B and C change the same line, C last: C's text stays, A's and B's each go to one conflict
    # copy. The stores meet the revisions in an order that makes two of them merge crosswise (A merges
    # a with b, B merges b with c); the merge of those two merges must not make a second copy of B's text.
    stores = sorted((Store(tmp_root, name) for name in ("s1", "s2", "s3")), key=lambda store: store.status()["device"])
    b, c, a = stores  # devices are read in id order: B before C before A
    memo_id = a.new("Plan\nmonday\nend")
    for store in (a, b, c):
        store.sync("--remote", folder_url(remote))
    root = {line["text"]: line for history in read_remote(remote).values() for line in history.revisions}["Plan\nmonday\nend"]
    # B's revision id must sort before A's (the base of the crosswise merge is then A's). Ids are hashes, so
    # A edits until its id is in the upper half, and B then until its id is below A's: each try succeeds
    # with a chance of at least one half, and the test does not depend on luck.
    a_text, a_id = until_revision_id(a, memo_id, root, "A", lambda revision: revision >= "8")
    a.sync()
    assert a_id in {line["id"] for history in read_remote(remote).values() for line in history.revisions}
    b_text, b_id = until_revision_id(b, memo_id, root, "B", lambda revision: revision < a_id)
    time.sleep(0.01)
    c.edit(memo_id, "Plan\nC\nend")
    c.sync()
    b.sync()
    assert b_id in {line["id"] for history in read_remote(remote).values() for line in history.revisions}
    a.sync()
    settle([a, b, c])
    assert_identical([a, b, c])
    texts = a.texts()
    assert texts.pop(memo_id) == "Plan\nC\nend"
    assert sorted(texts.values()) == [CONFLICT_PREFIX + a_text, CONFLICT_PREFIX + b_text], texts


def until_revision_id(store, memo_id: str, root: dict, name: str, accept) -> tuple[str, str]:
    """Edits the memo's middle line on `store` until the revision it would publish has an id that `accept`s."""
    for attempt in range(40):
        time.sleep(0.002)
        text = f"Plan\n{name}{attempt}\nend"
        store.edit(memo_id, text)
        memo = store.memo(memo_id)
        revision = revision_id({"memo": memo_id, "parents": [root["id"]], "deleted": False, "text": text,
                                "createdAt": epoch_ms(memo["createdAt"]), "modifiedAt": epoch_ms(memo["modifiedAt"])})
        if accept(revision):
            return text, revision
    pytest.fail(f"no revision id of {name}'s edits was accepted in 40 tries")

@pytest.mark.parametrize("order", ["a_first", "b_first"])
def test_edits_to_adjacent_lines_conflict(pair, order):
    a, b, memo_id = pair
    a.edit(memo_id, replace_line(BASE, 1, "tent (the big one)"))
    time.sleep(0.01)
    b_text = replace_line(BASE, 2, "camping stove")
    b.edit(memo_id, b_text)
    sync_in_order(a, b, order)
    texts = a.texts()
    assert texts == b.texts() and texts.pop(memo_id) == b_text
    assert list(texts.values()) == [CONFLICT_PREFIX + replace_line(BASE, 1, "tent (the big one)")]


def test_the_same_edit_on_both_sides_is_no_conflict(pair):
    a, b, memo_id = pair
    same = replace_line(BASE, 3, "matches (both thought of it)")
    a.edit(memo_id, same)
    b.edit(memo_id, same)
    sync_in_order(a, b, "a_first")
    assert a.texts() == b.texts() == {memo_id: same}


def test_deletes_on_both_sides_stay_deleted(pair):
    a, b, memo_id = pair
    a.rm(memo_id)
    b.rm(memo_id)
    sync_in_order(a, b, "b_first")
    assert a.ids() == b.ids() == []


def test_random_work_on_three_stores_loses_no_edit(tmp_root, remote):
    rng = random.Random(40417)
    stores = [Store(tmp_root, name) for name in "abc"]
    for store in stores:
        store.sync("--remote", folder_url(remote))
    tokens: list[str] = []
    known: dict[str, list[str]] = {store.name: [] for store in stores}
    for step in range(60):
        store = rng.choice(stores)
        action = rng.random()
        token = f"token-{step:03d}-{store.name}"
        if action < 0.25 or not known[store.name]:
            known[store.name].append(store.new(f"memo {token}\n{token}"))
            tokens.append(token)
        elif action < 0.75:
            memo_id = rng.choice(known[store.name])  # nothing is deleted here: the memo is still there
            lines = store.text(memo_id).split("\n")
            lines.insert(rng.randrange(1, len(lines) + 1), token)
            store.edit(memo_id, "\n".join(lines))
            tokens.append(token)
        else:
            store.sync()
            known[store.name] = store.ids()
    settle(stores)
    rows, memos = assert_identical(stores)
    everything = "\n".join(text for text, _, _ in memos.values())
    lost = [token for token in tokens if token not in everything.split("\n")]
    assert not lost, f"edits lost: {lost}"


# -- nothing is deleted because a file is missing -------------------------------------------------------

def test_a_store_pointed_at_an_emptied_remote_stops_and_changes_nothing(tmp_root, remote):
    a = Store(tmp_root, "a")
    for index in range(3):
        a.new(f"memo {index}")
    a.sync("--remote", folder_url(remote))
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
    a = Store(tmp_root, "a")
    a.new("first")
    a.sync("--remote", folder_url(remote))
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


def test_another_devices_folder_going_missing_deletes_nothing(tmp_root, remote):
    # A shared folder still catching up may lack a device's folder for a while.
    a, b = Store(tmp_root, "a"), Store(tmp_root, "b")
    from_b = b.new("from B\nline two")
    b.sync("--remote", folder_url(remote))
    a.sync("--remote", folder_url(remote))
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
    a = Store(tmp_root, "a")
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
    a = Store(tmp_root, "a")
    a.new("first memo")
    a.sync("--remote", folder_url(remote))
    a.new("second memo")
    a.sync()
    before = a.status()
    a.fails("sync", "--remote", folder_url(tmp_root / "typo"))
    assert not (tmp_root / "typo").exists()
    after = a.status()
    assert (after["remote"], after["pendingChanges"], after.get("lastSync")) == (
        before["remote"], before["pendingChanges"], before.get("lastSync")), after
    result = a.sync("--remote", folder_url(remote))
    assert result["published"] == 0 and result["status"]["device"] == before["device"], result
    assert os.listdir(remote / "devices") == [before["device"]], "the store published anew under another device id"


def test_a_sync_that_cannot_reach_its_folder_is_reported_by_status(tmp_root, remote):
    # `--status` tells "failed: why" when the last sync failed; an unmounted share is the commonest why.
    a = Store(tmp_root, "a")
    a.new("a memo")
    a.sync("--remote", folder_url(remote))
    remote.rename(tmp_root / "unmounted")
    failed = a.fails("sync")
    assert "does not exist" in failed.err
    status = a.status()
    assert status["state"] == "failed" and "does not exist" in status.get("lastError", ""), status
    assert "failed:" in a.ok("sync", "--status").out


def test_a_damaged_segment_is_not_applied_and_the_next_sync_applies_it_once_whole(tmp_root, remote):
    a, b = Store(tmp_root, "a"), Store(tmp_root, "b")
    kept = b.new("B's own memo")
    b.sync("--remote", folder_url(remote))
    a.new("from A, one")
    a.new("from A, two")
    a.sync("--remote", folder_url(remote))
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


def test_republish_publishes_anew_and_another_store_gets_everything(tmp_root, remote):
    a, b = Store(tmp_root, "a"), Store(tmp_root, "b")
    for index in range(4):
        a.new(f"memo {index}\nbody {index}")
    gone = a.new("deleted before the remote was lost")
    a.sync("--remote", folder_url(remote))
    a.rm(gone)
    remote.rename(tmp_root / "remote-elsewhere")
    remote.mkdir()
    a.fails("sync")
    result = a.sync("--republish")
    assert result["published"] >= 4 and result["status"]["state"] == "idle", result
    assert (remote / "cloudnotes-sync.json").exists()
    b.sync("--remote", folder_url(remote))
    assert_identical([a, b])
    assert len(b.ids()) == 4


# -- the remote holds what protocol/sync.md says, and nothing else ----------------------------------------

ALLOWED = [re.compile(p) for p in (r"^cloudnotes-sync\.json$", r"^devices/[0-9a-f]{32}/head\.json$",
                                    r"^devices/[0-9a-f]{32}/segments/\d{12}\.jsonl$")]


def varied_history(tmp_root: Path, remote: Path) -> tuple[Store, Store, dict]:
    """A and B with creates, edits, a delete, a merge and a conflict published on `remote`."""
    a, b = Store(tmp_root, "a"), Store(tmp_root, "b")
    memo_id = a.new(BASE)
    doomed = a.new("to be deleted")
    a.sync("--remote", folder_url(remote))
    b.sync("--remote", folder_url(remote))
    a_text = replace_line(BASE, 2, "stove and gas")
    b_text = replace_line(BASE, 2, "camping stove")
    a.edit(memo_id, a_text)
    time.sleep(0.01)
    b.edit(memo_id, b_text)
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
    strays = [f for f in files if not any(pattern.match(f) for pattern in ALLOWED)]
    assert not strays, f"files the layout does not describe: {strays}"
    for name in files:
        assert not (remote / name).read_bytes().startswith(b"SQLite format 3"), f"{name} is a database"
    devices = sorted(os.listdir(remote / "devices"))
    assert devices == sorted([a.status()["device"], b.status()["device"]])


def test_heads_and_segments_follow_the_documented_format(tmp_root, remote):
    a, b, facts = varied_history(tmp_root, remote)
    devices = read_remote(remote)
    revisions = {}
    for history in devices.values():
        for line in history.revisions:
            check_revision(line)
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


# -- sync state survives restarts -----------------------------------------------------------------------

def test_sync_state_survives_reopening_the_store(tmp_root, remote):
    a = Store(tmp_root, "a")
    a.new("one")
    first = a.status()
    assert first["state"] == "off" and HEX32.match(first["device"]) and "remote" not in first
    a.sync("--remote", folder_url(remote))
    a.new("two")
    a.new("three")
    synced = a.status()
    assert synced["device"] == first["device"] and synced["remote"] == folder_url(remote)
    assert synced["pendingChanges"] == 2 and synced["state"] == "idle" and "lastSync" in synced
    a.rows()  # another process opens and closes the store
    assert a.status() == synced
    assert os.listdir(remote / "devices") == [synced["device"]]
    result = a.sync()
    assert result["published"] == 2 and result["status"]["pendingChanges"] == 0
    assert result["status"]["lastSync"] >= synced["lastSync"]
    assert a.status() == result["status"]


def test_status_in_words(tmp_root, remote):
    a = Store(tmp_root, "a")
    out = a.ok("sync", "--status").out
    assert "remote:    none" in out and "last sync: never" in out
    a.new("waiting")
    a.sync("--remote", folder_url(remote))
    a.new("waiting too")
    out = a.ok("sync", "--status").out
    device = a.status()["device"]
    assert f"remote:    {folder_url(remote)}" in out and f"device:    {device}" in out
    assert "waiting:   1 memo changed here, not yet published" in out and "conflicts: 0" in out


def test_sync_without_a_remote_fails(tmp_root):
    a = Store(tmp_root, "a")
    a.new("alone")
    failed = a.fails("sync")
    assert "no remote" in failed.err


def wait_for_sync_end(server: Server, timeout: float = 10) -> None:
    """Until the server has told of a sync that started and ended (its messages are read as they come)."""
    deadline = time.monotonic() + timeout
    while True:
        states = [m["params"]["status"]["state"] for m in list(server.received) if m.get("method") == "sync/didChange"]
        if "syncing" in states and states[-1] != "syncing":
            return
        assert time.monotonic() < deadline, f"no sync ended within {timeout} s: {states}"
        time.sleep(0.05)


def test_a_change_made_before_a_server_is_killed_is_published_by_the_next_sync(servers, tmp_root, remote):
    a, b = Store(tmp_root, "a"), Store(tmp_root, "b")
    a.new("before the server")
    a.sync("--remote", folder_url(remote))
    server = servers.start(a.path, args=["--sync-interval", "0", "--sync-delay", "600"])
    server.initialize()
    wait_for_sync_end(server)  # the sync at start: the memo below is made after it
    memo = server.create("made in the server\nthen kill -9")
    server.kill()
    server.wait()
    assert a.status()["pendingChanges"] == 1
    result = a.sync()
    assert result["published"] >= 1 and result["status"]["pendingChanges"] == 0
    b.sync("--remote", folder_url(remote))
    assert b.text(memo["id"]) == "made in the server\nthen kill -9"
    assert_identical([a, b])


def test_a_copied_store_takes_a_new_device_id(tmp_root, remote):
    a, b = Store(tmp_root, "a"), Store(tmp_root, "b")
    a.new("before the copy")
    a.sync("--remote", folder_url(remote))
    copy = Store(tmp_root, "copy")
    for suffix in ("", "-wal", "-shm"):
        if Path(str(a.path) + suffix).exists():
            shutil.copy(str(a.path) + suffix, str(copy.path) + suffix)
    copy.new("made on the copy")
    copy.sync()
    a.new("made on the original")
    a.sync()
    b.sync("--remote", folder_url(remote))
    settle([a, copy, b])
    assert a.status()["device"] != copy.status()["device"]
    rows, memos = assert_identical([a, copy, b])
    assert sorted(text for text, _, _ in memos.values()) == ["before the copy", "made on the copy", "made on the original"]
    read_remote(remote)


# -- SIGKILL during sync ------------------------------------------------------------------------------

def entries(prefix: str, count: int, big: int) -> list[dict]:
    """Memos in the original app's import format: `count` small ones and `big` of about 100 KB."""
    memos = [{"title": f"{prefix} {index}", "body": f"line one of {prefix} {index}\nline two", "last_modified": 1_600_000_000 + index}
             for index in range(count)]
    memos += [{"title": f"{prefix} big {index}", "body": (f"{prefix} big {index} " + "x" * 90 + "\n") * 1000,
               "last_modified": 1_600_000_000} for index in range(big)]
    return memos


def timed_sync(store: Store, *args: str) -> float:
    started = time.monotonic()
    store.sync(*args)
    return time.monotonic() - started


def kill_during_sync(store: Store, url: str, delay: float) -> int | None:
    """Starts `cloudnotes sync` and sends it SIGKILL after `delay` s; the exit status if it ended first."""
    proc = subprocess.Popen(store.command("sync", "--remote", url), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=store.env, cwd=store.root)
    time.sleep(delay)
    code = proc.poll()
    if code is None:
        proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    proc.stderr.close()
    return code


def listed_texts(store: Store) -> dict[str, str]:
    """Every listed memo's text: the ids as `list --json` prints them, the texts read from the store
    file (thousands of `show` commands would take minutes)."""
    ids = store.ids()
    assert len(set(ids)) == len(ids), f"{store.name} lists a memo twice"
    connection = sqlite3.connect(store.path)
    try:
        rows = dict(connection.execute("SELECT id, text FROM memo WHERE deleted = 0").fetchall())
    finally:
        connection.close()
    assert sorted(rows) == sorted(ids), f"{store.name}: the list and the store disagree"
    return {memo_id: bytes(rows[memo_id]).decode("utf-8") for memo_id in ids}


KILL_ROUNDS = 16


def test_sync_killed_at_random_moments_loses_and_duplicates_nothing(tmp_root, remote):
    rng = random.Random(90210)

    def import_file(name: str, memos: list[dict]) -> str:
        path = tmp_root / f"{name}.json"
        path.write_text(json.dumps(memos), encoding="utf-8")
        return str(path)

    first = import_file("first", entries("initial", 2000, 5))
    # Each later round, A has memos to publish and B has published memos for A to read.
    batches = [(import_file(f"a-{index}", entries(f"A batch {index}", 500, 1)),
                import_file(f"b-{index}", entries(f"B batch {index}", 500, 0))) for index in range(KILL_ROUNDS - 1)]
    # How long clean syncs of the same work take, on stores of their own.
    probe, probe_peer = Store(tmp_root, "probe"), Store(tmp_root, "probe-peer")
    probe_remote = tmp_root / "probe-remote"
    probe_remote.mkdir()
    probe.ok("import", first)
    full = timed_sync(probe, "--remote", folder_url(probe_remote))
    probe.ok("import", import_file("probe-a", entries("probe A", 500, 1)))
    probe_peer.ok("import", import_file("probe-b", entries("probe B", 500, 0)))
    probe_peer.sync("--remote", folder_url(probe_remote))
    small = timed_sync(probe)

    a, b = Store(tmp_root, "a"), Store(tmp_root, "b")
    b.sync("--remote", folder_url(remote))
    a.ok("import", first)
    url = folder_url(remote)
    outcomes = []
    for round_number in range(KILL_ROUNDS):
        if round_number > 0:
            a_batch, b_batch = batches[round_number - 1]
            a.ok("import", a_batch)
            b.ok("import", b_batch)
            b.sync()
        delay = rng.uniform(0, full if round_number == 0 else small)
        outcomes.append((round(delay, 3), kill_during_sync(a, url, delay)))
        if (remote / "cloudnotes-sync.json").exists():
            read_remote(remote, interrupted=True)  # what a killed sync leaves is consistent
        result = a.sync("--remote", url)  # the next sync carries on
        assert result["status"]["pendingChanges"] == 0 and result["status"]["state"] == "idle"
    assert any(code is None for _, code in outcomes), f"no sync was killed: {outcomes}"
    settle([a, b])
    on_a = listed_texts(a)
    on_b = listed_texts(b)
    assert len(on_a) == 2005 + (KILL_ROUNDS - 1) * 1001
    assert on_b == on_a
    assert len(set(on_a.values())) == len(on_a), "a memo is duplicated"
    read_remote(remote)
    connection = sqlite3.connect(a.path)
    try:
        assert connection.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    finally:
        connection.close()


def test_a_sync_killed_while_writing_a_segment_leaves_no_stray_file_after_the_next(tmp_root, remote):
    # A folder remote's file is written under a temporary name, then renamed (protocol/sync.md,
    # "Writing"). A sync killed in between leaves the temporary file; once the next sync is done, the
    # remote must again hold only the files of the layout (a shared folder copies strays everywhere).
    a = Store(tmp_root, "a")
    a.new("first")
    a.sync("--remote", folder_url(remote))
    caught = None
    for attempt in range(10):
        memos = tmp_root / f"memos-{attempt}.json"
        memos.write_text(json.dumps(entries(f"attempt {attempt}", 1500, 1)), encoding="utf-8")
        a.ok("import", str(memos))
        proc = subprocess.Popen(a.command("sync"), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL, env=a.env, cwd=a.root)
        while proc.poll() is None and caught is None:
            caught = next((name for name in remote_files(remote) if name.endswith(".tmp")), None)
        if caught is not None:
            proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        if caught is not None:
            break
    if caught is None:
        pytest.skip("no sync was caught while writing a file")
    a.sync()
    a.sync()
    strays = [name for name in remote_files(remote) if not any(pattern.match(name) for pattern in ALLOWED)]
    assert not strays, f"files left on the remote by the killed sync: {strays}"
    read_remote(remote)

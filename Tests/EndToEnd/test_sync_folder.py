"""Sync through a folder remote, driven by the shell (`cloudnotes sync`) as a person or a script would:
several stores on one `file://` remote exchange memos, merge edits, keep both sides of a conflict, and
converge, whatever the order of their syncs. (What the remote holds, and what happens when it goes
missing, is in test_sync_folder_remote.py; restarts and kills in test_sync_folder_kill.py.)"""

from __future__ import annotations

import random
from datetime import datetime

import pytest

from cnsupport.cli import Cli
from cnsupport.remote import CONFLICT_PREFIX, folder_url, read_remote, revision_id
from cnsupport.syncing import (PACKING_LIST as BASE, after_a_millisecond, assert_identical, edit_apart, make_store,
                               replace_line, settle, share_memo)


@pytest.fixture
def pair(two_stores, remote) -> tuple[Cli, Cli, str]:
    """Two stores, A and B, on one folder remote, both holding the memo BASE (made on A); returns (A, B, id)."""
    a, b = two_stores
    return a, b, share_memo(a, b, folder_url(remote), BASE)


@pytest.fixture(params=["a_first", "b_first"])
def order(request) -> str:
    """Which of the two stores syncs first, for a test that must hold either way."""
    return request.param


def sync_in_order(a: Cli, b: Cli, order: str) -> None:
    first, second = (a, b) if order == "a_first" else (b, a)
    first.sync()
    second.sync()
    settle([a, b])


# -- two stores ---------------------------------------------------------------------------------------

def test_a_memo_made_on_one_store_appears_on_another(two_stores, remote):
    a, b = two_stores
    memo_id = a.new("Made on A\nwith a second line")
    result = a.sync(folder_url(remote))
    assert result["published"] == 1 and result["changedMemos"] == 0
    assert result["status"]["remote"] == folder_url(remote) and result["status"]["pendingChanges"] == 0
    result = b.sync(folder_url(remote))
    assert result["changedMemos"] == 1
    assert b.ids() == [memo_id]
    assert b.memo(memo_id)["text"] == "Made on A\nwith a second line"
    assert_identical([a, b])


def test_a_plain_sync_prints_what_it_did(tmp_root, remote):
    a = make_store(tmp_root, "a")
    a.new("one")
    a.new("two")
    run = a.ok("sync", "--remote", folder_url(remote))
    assert run.out == ""
    assert f"Synced with {folder_url(remote)}: 0 memos changed here, 2 changes published." in run.err


def test_edits_to_different_lines_merge(pair, order):
    a, b, memo_id = pair
    a.edit(memo_id, replace_line(BASE, 1, "tent (the big one)"))
    b.edit(memo_id, replace_line(BASE, 5, "map of the hills"))
    sync_in_order(a, b, order)
    merged = "Packing list\ntent (the big one)\nstove\nmatches\nwater\nmap of the hills\ncompass"
    assert a.texts() == b.texts() == {memo_id: merged}
    assert a.status()["conflicts"] == [] and b.status()["conflicts"] == []
    assert_identical([a, b])


def test_overlapping_edits_keep_the_later_text_and_a_conflict_copy_of_the_other(pair, order):
    a, b, memo_id = pair
    a_text = replace_line(BASE, 2, "stove and gas")
    b_text = replace_line(BASE, 2, "camping stove")
    edit_apart(a, b, memo_id, a_text, b_text)  # the later edit: it keeps the memo
    sync_in_order(a, b, order)
    texts = a.texts()
    assert texts == b.texts()
    assert texts.pop(memo_id) == b_text
    assert list(texts.values()) == [CONFLICT_PREFIX + a_text], texts
    assert_identical([a, b])


def make_conflict(a: Cli, b: Cli, memo_id: str) -> tuple[str, Cli]:
    """Overlapping edits on A then B, A syncs first, so B meets the conflict; returns (the copy's id, B)."""
    edit_apart(a, b, memo_id, replace_line(BASE, 3, "matches (waterproof)"), replace_line(BASE, 3, "lighter"))
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
    edit_apart(a, b, memo_id, replace_line(BASE, 3, "matches (waterproof)"), replace_line(BASE, 3, "lighter"))
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
    stores = [make_store(tmp_root, name) for name in "abc"]
    for index in range(4):
        stores[0].new("\n".join(f"memo {index} line {n}" for n in range(8)))
    for store in stores:
        store.sync(folder_url(remote))
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
    stores = sorted((make_store(tmp_root, name) for name in ("s1", "s2", "s3")), key=lambda store: store.status()["device"])
    b, c, a = stores  # devices are read in id order: B before C before A
    memo_id = a.new("Plan\nmonday\nend")
    for store in (a, b, c):
        store.sync(folder_url(remote))
    root = {line["text"]: line for line in read_remote(remote).revisions.values()}["Plan\nmonday\nend"]
    # B's revision id must sort before A's (the base of the crosswise merge is then A's). Ids are hashes, so
    # A edits until its id is in the upper half, and B then until its id is below A's: each try succeeds
    # with a chance of at least one half, and the test does not depend on luck.
    a_text, a_id = until_revision_id(a, memo_id, root, "A", lambda revision: revision >= "8")
    a.sync()
    assert a_id in read_remote(remote).revisions
    b_text, b_id = until_revision_id(b, memo_id, root, "B", lambda revision: revision < a_id)
    after_a_millisecond()
    c.edit(memo_id, "Plan\nC\nend")
    c.sync()
    b.sync()
    assert b_id in read_remote(remote).revisions
    a.sync()
    settle([a, b, c])
    assert_identical([a, b, c])
    texts = a.texts()
    assert texts.pop(memo_id) == "Plan\nC\nend"
    assert sorted(texts.values()) == [CONFLICT_PREFIX + a_text, CONFLICT_PREFIX + b_text], texts


def until_revision_id(store, memo_id: str, root: dict, name: str, accept) -> tuple[str, str]:
    """Edits the memo's middle line on `store` until the revision it would publish has an id that `accept`s."""
    for attempt in range(40):
        after_a_millisecond()
        text = f"Plan\n{name}{attempt}\nend"
        store.edit(memo_id, text)
        memo = store.memo(memo_id)
        revision = revision_id({"memo": memo_id, "parents": [root["id"]], "deleted": False, "text": text,
                                "createdAt": epoch_ms(memo["createdAt"]), "modifiedAt": epoch_ms(memo["modifiedAt"])})
        if accept(revision):
            return text, revision
    pytest.fail(f"no revision id of {name}'s edits was accepted in 40 tries")

def test_edits_to_adjacent_lines_conflict(pair, order):
    a, b, memo_id = pair
    a.edit(memo_id, replace_line(BASE, 1, "tent (the big one)"))
    after_a_millisecond()
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
    stores = [make_store(tmp_root, name) for name in "abc"]
    for store in stores:
        store.sync(folder_url(remote))
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

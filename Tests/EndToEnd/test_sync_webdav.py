"""Sync through real WebDAV servers (Apache mod_dav and nginx dav_ext): protocol/sync.md end to end.

Two stores (devices) sync through one collection with `cloudnotes sync`; what lands on the server is read
back over HTTP and checked against the layout and the rules of protocol/sync.md, as another implementation
would read it.  Apache with Basic auth checks the credentials: from the environment, from a netrc file, a
wrong password, and that a password never shows (output, server log, store), nor a URL with one in it.
"""

from __future__ import annotations

import json
import shutil
import time

import pytest

from cnsupport.cli import Cli
from cnsupport.dav_http import http_request, propfind
from cnsupport.remote import CONFLICT_PREFIX, conflict_copy_id, leaves, read_remote, remote_state, sha256_hex
from cnsupport.session import make_entries, write_entries
from cnsupport.store_file import copy_store, memos_of
from cnsupport.syncing import edit_apart, share_memo

BASE_TEXT = "Trip plan\nday 1: train to Lyon\nday 2: museum\nday 3: walk by the river\nday 4: market\nday 5: home\n"


@pytest.fixture
def devices(dav_collection, two_stores) -> tuple:
    """`(server, url, a, b)`: devices A and B, and a fresh collection for them, on Apache and on nginx."""
    return (*dav_collection, *two_stores)


@pytest.fixture
def trip(devices) -> tuple:
    """`(server, url, a, b, memo)`: devices A and B on a fresh collection, both holding the memo BASE_TEXT."""
    server, url, a, b = devices
    return server, url, a, b, share_memo(a, b, url, BASE_TEXT)


def replace_line(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


# ---------------------------------------------------------------------------------------------------
# Two devices through one collection
# ---------------------------------------------------------------------------------------------------

def test_a_memo_made_on_a_appears_on_b_and_edits_and_deletes_travel_back(devices):
    server, url, a, b = devices
    first = a.new("Groceries\nmilk\neggs")
    report = a.sync(url)
    assert (report["published"], report["changedMemos"], report["conflicts"]) == (1, 0, 0), report
    assert report["status"]["remote"] == url and report["status"]["pendingChanges"] == 0, report

    report = b.sync(url)
    assert (report["changedMemos"], report["published"]) == (1, 0), report
    assert b.texts() == {first: "Groceries\nmilk\neggs"}

    second = b.new("From B\nwritten on the second device")
    b.edit(first, "Groceries\nmilk\neggs\nbread")
    report = b.sync()
    assert report["published"] == 2, report
    report = a.sync()
    assert report["changedMemos"] == 2, report
    expected = {first: "Groceries\nmilk\neggs\nbread", second: "From B\nwritten on the second device"}
    assert a.texts() == b.texts() == expected

    a.rm(second)
    assert a.sync()["published"] == 1
    assert b.sync()["changedMemos"] == 1
    assert a.texts() == b.texts() == {first: expected[first]}
    # the fast reader the other tests use agrees with the shell
    assert memos_of(a.store) == a.texts() and memos_of(b.store) == b.texts()
    # nothing changed: a sync changes and publishes nothing
    for device in (a, b):
        report = device.sync()
        assert (report["changedMemos"], report["published"], report["conflicts"]) == (0, 0, 0), report
    read_remote(url, published_by={a.status()["device"], b.status()["device"]})


def test_a_collection_whose_name_needs_escaping(devices):
    """Spaces, non-ASCII and "+" in the collection's path: PROPFIND's hrefs come back escaped."""
    server, _, a, b = devices
    url = server.new_collection(f"my notes ä+b {time.monotonic_ns()}")
    memo = a.new("Escaped\npath")
    a.sync(url)
    assert b.sync(url)["changedMemos"] == 1
    assert b.texts() == {memo: "Escaped\npath"}
    read_remote(url, published_by={a.status()["device"]})


def test_concurrent_edits_of_different_lines_merge(trip):
    server, url, a, b, memo = trip
    a.edit(memo, replace_line(BASE_TEXT, "day 1: train to Lyon", "day 1: train to Lyon, 8:02 from Gare de Lyon"))
    b.edit(memo, replace_line(BASE_TEXT, "day 4: market", "day 4: market (buy cheese)"))
    a.sync()
    report = b.sync()
    assert (report["changedMemos"], report["conflicts"]) == (1, 0), report
    report = a.sync()
    assert (report["changedMemos"], report["conflicts"]) == (1, 0), report
    merged = BASE_TEXT.replace("day 1: train to Lyon", "day 1: train to Lyon, 8:02 from Gare de Lyon").replace(
        "day 4: market", "day 4: market (buy cheese)")
    assert a.texts() == b.texts() == {memo: merged}
    assert a.status()["conflicts"] == b.status()["conflicts"] == []
    # the merge is one revision with both edits as parents, and the history has one live leaf: the merged text
    view = read_remote(url)
    assert remote_state(view) == {memo: merged}
    [leaf] = leaves(view)[memo]
    assert len(view.revisions[leaf]["parents"]) == 2


def test_overlapping_edits_give_the_same_conflict_copy_on_both(trip):
    server, url, a, b, memo = trip
    text_a = replace_line(BASE_TEXT, "day 2: museum", "day 2: Musée des Confluences")
    text_b = replace_line(BASE_TEXT, "day 2: museum", "day 2: Fourvière and the old town")
    edit_apart(a, b, memo, text_a, text_b)   # B's edit is the later one: B's text stays, A's becomes the copy
    a.sync()
    report = b.sync()
    assert report["conflicts"] == 1, report
    a.sync()
    view = read_remote(url)
    [losing] = [r for r in view.revisions.values() if r["memo"] == memo and r.get("text") == text_a]
    copy = conflict_copy_id(memo, losing["text"])
    on_a, on_b = a.texts(), b.texts()
    assert on_a == on_b, "both devices hold the same memos"
    assert set(on_a) == {memo, copy}, f"the memo and its conflict copy {copy} (id as sync.md derives it)"
    assert on_a[memo] == text_b
    assert on_a[copy].endswith(text_a) and on_a[copy] != text_a
    assert b.status()["conflicts"] == [{"memo": memo, "copy": copy}], "B met the conflict"
    # the copy's history: one root revision dated by the losing revision
    [copy_revision] = [r for r in view.revisions.values() if r["memo"] == copy]
    assert copy_revision["parents"] == []
    assert copy_revision["createdAt"] == copy_revision["modifiedAt"] == losing["modifiedAt"]
    # deleting the copy settles the conflict, on both devices
    a.rm(copy)
    a.sync()
    b.sync()
    assert a.status()["conflicts"] == b.status()["conflicts"] == []
    assert a.texts() == b.texts() == {memo: text_b}


def test_a_device_that_receives_a_conflict_copy_lists_the_conflict_too(trip):
    """sync/status's `conflicts` lists each conflict kept as a copy until the copy is deleted: A, which
    received B's merge and copy (rather than merging itself), holds the copy too, and should list it."""
    server, url, a, b, memo = trip
    edit_apart(a, b, memo, replace_line(BASE_TEXT, "day 4: market", "day 4: flea market"),
               replace_line(BASE_TEXT, "day 4: market", "day 4: covered market"))
    a.sync()
    b.sync()
    a.sync()
    [copy] = [memo_id for memo_id in a.texts() if memo_id != memo]
    assert b.status()["conflicts"] == [{"memo": memo, "copy": copy}]
    assert a.status()["conflicts"] == [{"memo": memo, "copy": copy}], "A holds the copy but does not list the conflict"


def test_conflict_copy_text_follows_sync_md(trip):
    """sync.md: the copy's text is `Conflict copy: ` followed by the losing text."""
    server, url, a, b, memo = trip
    text_a = replace_line(BASE_TEXT, "day 3: walk by the river", "day 3: rest")
    edit_apart(a, b, memo, text_a, replace_line(BASE_TEXT, "day 3: walk by the river", "day 3: boat trip"))
    a.sync()
    b.sync()
    copies = [text for memo_id, text in b.texts().items() if memo_id != memo]
    assert copies == [CONFLICT_PREFIX + text_a], copies


@pytest.mark.parametrize("outcome", ["merge", "conflict"])
def test_two_devices_that_merge_independently_make_the_same_revisions(trip, outcome):
    """Deterministic merges: A and B each merge the same two revisions without having seen the other's merge,
    and make the very same revisions: one merge id (and for a conflict one copy), published by both.

    Timing is simulated by rewinding a head on the server for one sync (readers see only what heads name),
    as if the other device's sync had not finished yet."""
    server, url, a, b, memo = trip
    device_a, device_b = a.status()["device"], b.status()["device"]
    head_a = f"{url}devices/{device_a}/head.json"
    text_a = replace_line(BASE_TEXT, "day 2: museum", "day 2: opera")
    text_b = replace_line(BASE_TEXT, "day 5: home" if outcome == "merge" else "day 2: museum",
                          "day 5: home by bus" if outcome == "merge" else "day 2: zoo")
    edit_apart(a, b, memo, text_a, text_b)
    head_before_a = http_request("GET", head_a).body
    a.sync()                                   # A publishes a
    head_with_a = http_request("GET", head_a).body
    server.write_file(head_a, head_before_a)   # B syncs before A's sync is visible: B publishes b alone
    report = b.sync()
    assert (report["published"], report["changedMemos"]) == (1, 0), report
    server.write_file(head_a, head_with_a)
    report = a.sync()                          # A meets b: merges on its own
    assert report["conflicts"] == (1 if outcome == "conflict" else 0), report
    head_with_merge = http_request("GET", head_a).body
    server.write_file(head_a, head_with_a)     # B meets a without A's merge: merges on its own
    report = b.sync()
    assert report["conflicts"] == (1 if outcome == "conflict" else 0), report
    server.write_file(head_a, head_with_merge)
    a.sync()
    b.sync()
    view = read_remote(url, published_by={device_a, device_b})
    published = {device: {r["id"] for s in view.devices[device].segments for r in s} for device in view.devices}
    merges = {r["id"] for r in view.revisions.values() if len(r["parents"]) == 2}
    assert len(merges) == 1, f"one merge revision, whoever made it: {merges}"
    [merge] = merges
    assert merge in published[device_a] and merge in published[device_b], "both devices made (and published) it"
    on_a, on_b = a.texts(), b.texts()
    assert on_a == on_b
    if outcome == "merge":
        assert on_a == {memo: BASE_TEXT.replace("day 2: museum", "day 2: opera").replace("day 5: home",
                                                                                           "day 5: home by bus")}
    else:
        [losing] = [r for r in view.revisions.values() if r.get("text") == text_a]
        copy = conflict_copy_id(memo, losing["text"])
        assert set(on_a) == {memo, copy} and on_a[memo] == text_b and on_a[copy].endswith(text_a)
        [copy_revision] = [r for r in view.revisions.values() if r["memo"] == copy]
        assert copy_revision["id"] in published[device_a] and copy_revision["id"] in published[device_b]
        assert a.status()["conflicts"] == b.status()["conflicts"] == [{"memo": memo, "copy": copy}]
    merged = view.revisions[merge]
    sides = [view.revisions[p] for p in merged["parents"]]
    assert merged["createdAt"] == min(s["createdAt"] for s in sides)
    assert merged["modifiedAt"] == max(s["modifiedAt"] for s in sides)


# ---------------------------------------------------------------------------------------------------
# What lands on the server
# ---------------------------------------------------------------------------------------------------

def test_the_remote_follows_the_layout_of_sync_md(devices, tmp_root):
    """Segments of at most 1,000 revisions or 1 MiB of text (a longer memo alone), numbered from 1 with
    12 digits, chained by hashes up to the head; revision ids recomputed from their content; a delete is a
    tombstone with no text; the marker; nothing else at the top."""
    server, url, a, b = devices
    a.import_file(write_entries(tmp_root / "import.json", make_entries(1500, "imported", 1_700_000_000, apart=True)))
    big = "Big memo\n" + ("0123456789abcdef" * 64 + "\n") * 1500          # about 1.5 MiB: a segment alone
    big_id = a.new(big)
    gone = a.new("Soon deleted\nonce")
    a.sync(url)
    a.rm(gone)
    a.sync()
    device = a.status()["device"]
    view = read_remote(url, published_by={device})
    assert list(view.devices) == [device]
    segments = view.devices[device].segments
    counts = [len(s) for s in segments]
    assert sum(counts) == 1500 + 2 + 1, counts
    assert any(len(s) == 1 and s[0]["memo"] == big_id for s in segments), f"the 1.5 MiB memo alone: {counts}"
    assert max(counts) <= 1000 and len(segments) >= 4, counts
    memos = memos_of(a.store)
    state = remote_state(view)
    assert state == memos, "the remote's history ends, memo by memo, in what the store holds"
    assert len(memos) == 1501 and big_id in memos and gone not in memos
    [tombstone] = [r for r in view.revisions.values() if r["memo"] == gone and r["deleted"]]
    [live] = [r for r in view.revisions.values() if r["memo"] == gone and not r["deleted"]]
    assert tombstone["parents"] == [live["id"]] and "text" not in tombstone
    assert tombstone["createdAt"] == live["createdAt"]
    # the head file and the segments as bytes: JSON lines ending in a newline, UTF-8
    head = http_request("GET", f"{url}devices/{device}/head.json").body
    assert json.loads(head)["last"] == sha256_hex(view.devices[device].raw[-1])
    # a second device reads all of it, and publishes nothing it did not change
    report = b.sync(url)
    assert report["published"] == 0 and report["changedMemos"] >= 1501, report
    assert memos_of(b.store) == memos


def test_changed_memos_counts_each_memo_once(devices):
    """`changedMemos`: memos changed here by other devices' edits.  A memo made in one of A's segments and
    edited in the next is one memo changed on B, not two."""
    server, url, a, b = devices
    memo = a.new("Counted\nonce")
    a.sync(url)
    a.edit(memo, "Counted\nonce, edited")
    other = a.new("Another\nmemo")
    a.sync()
    report = b.sync(url)
    assert b.texts() == {memo: "Counted\nonce, edited", other: "Another\nmemo"}
    assert report["changedMemos"] == 2, f"2 memos changed on B, reported {report['changedMemos']}"


def test_a_copied_store_takes_a_new_device_id(devices):
    """sync.md: a store that finds another store's segments under its own id takes a new id and publishes
    its unpublished revisions under it; nothing of either store is lost."""
    server, url, a, b = devices
    shared = a.new("Shared\nfrom the original")
    a.sync(url)
    copy = Cli(a.store.parent.parent / "copy" / "notes.sqlite")
    copy_store(a.store, copy.store)
    original_device = a.status()["device"]
    assert copy.status()["device"] == original_device
    only_original = a.new("Only in the original")
    only_copy = copy.new("Only in the copy")
    a.sync()
    copy.sync()
    assert copy.status()["device"] != original_device
    b.sync(url)
    a.sync()
    copy.sync()
    expected = {shared: "Shared\nfrom the original", only_original: "Only in the original", only_copy: "Only in the copy"}
    assert a.texts() == b.texts() == copy.texts() == expected
    read_remote(url, published_by={original_device, copy.status()["device"]})


def test_a_store_whose_history_the_remote_lost_stops_and_republish_recovers(devices):
    server, url, a, b = devices
    memo = a.new("Kept\nlocally")
    a.sync(url)
    for child in server.path_of(url).iterdir():               # the collection is emptied behind our back
        shutil.rmtree(child) if child.is_dir() else child.unlink()
    result = a.fails("sync")
    assert "--republish" in result.err and url in result.err, result.err
    assert a.texts() == {memo: "Kept\nlocally"}
    assert propfind(url) == [], "a sync that stops changes nothing on the remote"
    report = a.sync(None, "--republish")
    assert report["published"] == 1, report
    b.sync(url)
    assert b.texts() == {memo: "Kept\nlocally"}


def test_a_reader_follows_a_device_that_republished_its_history(devices):
    """B had read A's 2 segments; the remote is emptied and A republishes everything (1 segment), then
    edits (segment 2).  B's read position (2) now points into a different history: the head's `last` no
    longer matches the hash B recorded.  B must not silently skip A's new segment 2."""
    server, url, a, b = devices
    first = a.new("First\nv1")
    a.sync(url)
    second = a.new("Second\nv1")
    a.sync()
    b.sync(url)
    assert b.texts() == {first: "First\nv1", second: "Second\nv1"}
    for child in server.path_of(url).iterdir():
        shutil.rmtree(child) if child.is_dir() else child.unlink()
    a.sync(None, "--republish")
    a.edit(first, "First\nv2, after the remote was emptied")
    a.sync()
    result = b.sync_run()
    assert result.code != 0 or b.texts()[first] == "First\nv2, after the remote was emptied", (
        "B's sync succeeded but B silently missed A's edit: it compares only segment counts, not A's head hash "
        f"with the one it recorded; B holds {b.texts()}")


# ---------------------------------------------------------------------------------------------------
# A collection that is not there yet
# ---------------------------------------------------------------------------------------------------

def test_a_missing_collection_is_made_when_the_one_above_it_exists(devices):
    server, url, a, b = devices
    new_url = url + "notes made by the first sync/"
    assert not server.path_of(new_url).exists()
    memo = a.new("Made remotely\nby the first sync")
    assert a.sync(new_url)["published"] == 1
    assert server.path_of(new_url).is_dir()
    b.sync(new_url)
    assert b.texts() == {memo: "Made remotely\nby the first sync"}


def test_a_collection_whose_parent_is_missing_is_refused_with_what_to_do(apache_dav, two_stores):
    """Apache's MKCOL answers 409 when the collection above is missing too. (nginx, with
    `create_full_put_path`, makes every folder a PUT needs: there the same URL simply works.)"""
    a, _ = two_stores
    url = apache_dav.new_collection() + "missing/deeper/"
    a.new("Not published\nanywhere yet")
    run = a.fails("sync", "--remote", url)
    assert url in run.err and "does not exist" in run.err and "create it" in run.err, run.err
    assert "409" not in run.err.replace(url, "<url>"), run.err  # the port may hold 409 too
    assert not apache_dav.path_of(url).parent.exists()
    status = json.loads(a.ok("sync", "--status", "--json").out)
    assert status["pendingChanges"] == 1, status

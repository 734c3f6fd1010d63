"""The trash and versions through sync, on a folder remote: a delete puts the memo in the trash on every
device, also on one that joins later; an undelete anywhere brings it back everywhere; a delete never beats
an edit it did not see; and a text that came from another device shows in `history` with that device.
The trash's round trip also runs on Apache's and nginx's WebDAV."""

from __future__ import annotations

from cnsupport.cli import Cli
from cnsupport.remote import folder_url
from cnsupport.syncing import assert_identical, make_store, settle, share_memo


def device_of(store: Cli) -> str:
    return store.status()["device"]


def test_a_delete_reaches_every_trash_and_an_undelete_anywhere_brings_it_back_everywhere(two_stores, remote, tmp_root):
    delete_and_undelete_apart(*two_stores, folder_url(remote), tmp_root)


def test_the_trash_travels_through_webdav(two_stores, dav_url, tmp_root):
    delete_and_undelete_apart(*two_stores, dav_url, tmp_root)


def delete_and_undelete_apart(a: Cli, b: Cli, url: str, tmp_root) -> None:
    """A deletes a memo A and B share; B and a store C that joins afterwards find it in their trash; B
    undeletes it, and every store has it back with its text."""
    memo_id = share_memo(a, b, url, "Shared list\nbread")
    a.rm(memo_id)
    settle([a, b])
    assert a.ids() == [] and b.ids() == []
    assert [row["id"] for row in b.trash()] == [memo_id]
    assert b.trash()[0]["title"] == "Shared list"
    # A device that joins now finds it in its trash too.
    c = make_store(tmp_root, "c")
    c.sync(url)
    assert [row["id"] for row in c.trash()] == [memo_id]
    b.ok("undelete", memo_id)
    settle([a, b, c])
    for store in (a, b, c):
        assert store.ids() == [memo_id] and store.trash() == [], store.name
        assert store.text(memo_id) == "Shared list\nbread"
    assert_identical([a, b, c])


def test_a_delete_never_beats_an_edit_it_did_not_see_and_the_memo_stays_out_of_the_trash(two_stores, remote):
    a, b = two_stores
    memo_id = share_memo(a, b, folder_url(remote), "Contested\nline")
    a.rm(memo_id)
    b.edit(memo_id, "Contested\nline, edited on B")
    settle([a, b])
    for store in (a, b):
        assert store.ids() == [memo_id], store.name
        assert store.text(memo_id) == "Contested\nline, edited on B"
        assert store.trash() == [], store.name


def test_a_text_from_another_device_is_kept_with_that_device_when_it_is_replaced(two_stores, remote):
    a, b = two_stores
    memo_id = share_memo(a, b, folder_url(remote), "Draft from A")
    a.edit(memo_id, "Second draft from A")
    a.sync()
    b.sync()
    versions = b.history(memo_id)
    # B's copy of A's first text was replaced by A's second: kept, from A's device.
    assert [(v["origin"], v.get("device"), v["title"]) for v in versions] == [("device", device_of(a), "Draft from A")]
    b.edit(memo_id, "B's own text")
    assert [(v["origin"], v.get("device")) for v in b.history(memo_id)][0] == ("device", device_of(a))
    assert b.ok("history", memo_id, str(b.history(memo_id)[0]["version"])).out == "Second draft from A"

"""Pruning and compaction through the shell (protocol/sync.md, "Pruning" and "Compaction"), on a folder
and on Apache's and nginx's WebDAV: history that every store took in is pruned from the stores; a
store's segments become a snapshot and are removed; a store that joins reads the snapshot and ends
with the same memos; a store that was away holds the others' segments until it is back."""

from __future__ import annotations

import shutil
import signal
import sqlite3
import time

from cnsupport.cli import Cli
from cnsupport.fault_proxy import TriggerProxy
from cnsupport.remote import folder_url, read_remote
from cnsupport.store_file import copy_store
from cnsupport.syncing import assert_identical, make_store, settle

# A memo large enough that a few edits of it prune more than the 1 MiB a snapshot waits for.
BIG = "".join(f"line {n:06d} of a long memo\n" for n in range(12_000))   # about 330 KB


def revisions_in(store: Cli) -> int:
    with sqlite3.connect(store.store) as db:
        return db.execute("SELECT count(*) FROM revision").fetchone()[0]


def edit_in_turns(a: Cli, b: Cli, memo: str, rounds: int) -> None:
    """A and B each append a line to the memo in turn, syncing after every edit."""
    for round_number in range(rounds):
        for store in (a, b):
            store.edit(memo, store.text(memo) + f"{store.name} {round_number}\n")
            store.sync()
        a.sync()


def compact_and_join(a: Cli, b: Cli, url: str, tmp_root) -> None:
    memo = a.new(BIG)
    a.sync(url)
    b.sync(url)
    edit_in_turns(a, b, memo, 3)
    settle([a, b])
    a_device = a.status()["device"]
    view = read_remote(url if url.startswith("http") else tmp_root / "remote")
    snapshot = view.devices[a_device].head.get("snapshot")
    assert snapshot, "A wrote a snapshot once every store took its segments in"
    assert view.devices[a_device].first == snapshot["covers"] + 1, "the segments it stands for are gone"
    assert revisions_in(a) <= 4, "the history both stores took in is pruned"
    joiner = make_store(tmp_root, "joiner")
    joiner.sync(url)
    assert joiner.text(memo) == a.text(memo)
    settle([a, b, joiner])
    assert_identical([a, b, joiner])
    # Editing goes on after it, on the one that joined too, and merges as before.
    joiner.edit(memo, "On top\n" + joiner.text(memo))
    a.edit(memo, a.text(memo) + "At the end\n")
    settle([a, b, joiner])
    assert a.text(memo).startswith("On top\n") and a.text(memo).endswith("At the end\n")
    assert_identical([a, b, joiner])


def test_segments_every_store_took_in_become_a_snapshot_that_a_joiner_reads(two_stores, remote, tmp_root):
    compact_and_join(*two_stores, folder_url(remote), tmp_root)


def test_compaction_on_webdav(two_stores, dav_url, tmp_root):
    compact_and_join(*two_stores, dav_url, tmp_root)


def test_a_store_away_holds_the_segments_it_has_not_taken_in(tmp_root, remote):
    a, b, away = (make_store(tmp_root, name) for name in ("a", "b", "away"))
    memo = a.new(BIG)
    for store in (a, b, away):
        store.sync(folder_url(remote))
    edit_in_turns(a, b, memo, 3)
    a_device = a.status()["device"]
    assert "snapshot" not in read_remote(remote).devices[a_device].head, "the store away has not taken them in"
    away.edit(memo, "Written while away\n" + away.text(memo))
    away.sync()
    settle([a, b, away])
    assert a.text(memo).startswith("Written while away\n") and a.text(memo).endswith("b 2\n")
    assert_identical([a, b, away])
    edit_in_turns(a, b, memo, 1)
    settle([a, b, away])
    assert "snapshot" in read_remote(remote).devices[a_device].head, "once it is back, A compacts"


def test_sigkill_at_every_request_of_a_compacting_sync_loses_nothing(apache_dav, tmp_root):
    """A's sync that prunes, writes a snapshot and removes its segments is killed (SIGKILL) when the
    proxy receives each of its requests in turn, from the same starting point; after each, clean syncs
    of A and B and a store that joins all end with the same memos, and the remote stays consistent."""
    url = apache_dav.new_collection(f"compaction-kill-{time.monotonic_ns()}")
    proxy = TriggerProxy(url)
    try:
        a, b = Cli(tmp_root / "a" / "notes.sqlite"), Cli(tmp_root / "b" / "notes.sqlite")
        memo = a.new(BIG)
        a.sync(proxy.url)
        b.sync(url)
        template = tmp_root / "template"
        collection = apache_dav.path_of(url)
        requests = 0
        for round_number in range(10):
            b.edit(memo, b.text(memo) + f"b {round_number}\n")
            b.sync()
            a.edit(memo, a.text(memo) + f"a {round_number}\n")
            shutil.rmtree(template, ignore_errors=True)
            copy_store(a.store, template / "a.sqlite")
            copy_store(b.store, template / "b.sqlite")
            shutil.copytree(collection, template / "collection")
            proxy.reset_counts()
            a.sync()
            if "snapshot" in read_remote(url).devices[a.status()["device"]].head:
                requests = len(proxy.requests)
                break
        assert requests, "A never compacted"
        settle([a, b])
        expected = a.text(memo)

        def restore() -> None:
            shutil.rmtree(collection)
            shutil.copytree(template / "collection", collection)
            apache_dav.give_tree(collection)
            copy_store(template / "a.sqlite", a.store)
            copy_store(template / "b.sqlite", b.store)

        for k in range(1, requests + 1):
            restore()
            proxy.reset_counts()
            process = a.popen("sync")
            proxy.trigger_at = k
            proxy.trigger = lambda process=process: process.send_signal(signal.SIGKILL)
            process.communicate(timeout=120)
            proxy.trigger = None
            read_remote(url, interrupted=True)
            settle([a, b])
            joiner = make_store(tmp_root, f"joiner-{k}")
            joiner.sync(url)
            for store in (a, b, joiner):
                assert store.text(memo) == expected, f"kill at request {k} of {requests}: {store.name}"
            assert_identical([a, b, joiner])
    finally:
        proxy.stop()

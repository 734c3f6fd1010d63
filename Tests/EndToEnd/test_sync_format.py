"""Sync format 2 (protocol/sync.md): a format 1 remote made by the build before format 2 is read and
upgraded, by a store that joins and by the store that made it; and a retired device is forgotten with
`cloudnotes sync --forget-device`, after which stores that join never wait for it."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

from cnsupport.cli import Cli
from cnsupport.remote import folder_url, read_remote
from cnsupport.syncing import assert_identical, make_store, settle

# Made by the build before format 2 (two stores, A and B): the remote, store A as SQL, and what they held.
FORMAT1 = Path(__file__).parent / "fixtures" / "format1"
FORMAT1_REMOTE_URL = "file:///tmp/fx/format1-remote"   # where the fixture was made; store A names it


def format1_remote(tmp_root: Path) -> Path:
    remote = tmp_root / "format1-remote"
    shutil.copytree(FORMAT1 / "remote", remote)
    return remote


def format1_store(tmp_root: Path, remote: Path) -> Cli:
    """Store A of the fixture, as the build before format 2 left it, with its remote where the copy is."""
    store = make_store(tmp_root, "old-a")
    script = (FORMAT1 / "store-a.sql").read_text().replace(FORMAT1_REMOTE_URL, folder_url(remote))
    with sqlite3.connect(store.store) as db:
        db.executescript(script)
        db.execute(f"PRAGMA application_id = {0x434E6F74}")   # a dump leaves out the header's "CNot"
    return store


def test_a_format_1_remote_is_read_and_upgraded_by_a_store_that_joins(tmp_root):
    expected = json.loads((FORMAT1 / "expected.json").read_text())
    remote = format1_remote(tmp_root)
    assert json.loads((remote / "cloudnotes-sync.json").read_text())["version"] == 1
    joiner = make_store(tmp_root, "joiner")
    joiner.sync(folder_url(remote))
    assert joiner.texts() == expected["texts"]
    assert [row["id"] for row in joiner.trash()] == expected["trash"]
    view = read_remote(remote)   # marker now format 2; the old devices' files as they were
    assert {d.head["format"] for name, d in view.devices.items()} == {1, 2}
    memo = expected["ids"]["kept"]
    joiner.edit(memo, "Kept as it is\nsince format 1\nand edited in format 2")
    joiner.sync()
    old_a = format1_store(tmp_root, remote)
    result = old_a.sync()
    assert result["changedMemos"] == 1
    assert old_a.text(memo) == "Kept as it is\nsince format 1\nand edited in format 2"
    late = make_store(tmp_root, "late")
    late.sync(folder_url(remote))
    settle([old_a, joiner, late])
    assert_identical([old_a, joiner, late])
    view = read_remote(remote)
    heads = {name: d.head for name, d in view.devices.items()}
    old_a_device = old_a.status()["device"]
    assert heads[old_a_device]["format"] == 2, "store A's own head is rewritten in format 2"
    assert heads[old_a_device]["seen"].get(joiner.status()["device"]) >= 1


def test_a_retired_device_is_forgotten_and_joiners_never_wait_for_it(tmp_root, remote):
    a, retired = make_store(tmp_root, "a"), make_store(tmp_root, "retired")
    memo = a.new("Trip\nday one\nday two\nday three")
    a.sync(folder_url(remote))
    retired.sync(folder_url(remote))
    retired.edit(memo, "Trip\nday one\nday two\nday three: the coast")
    retired.sync()
    a.edit(memo, "Trip\nday one: the hills\nday two\nday three")
    a.sync()   # the merge names the retired device's edit as a parent
    retired_id = retired.status()["device"]
    shutil.rmtree(remote / "devices" / retired_id)   # its folder removed, by hand or by a cleanup
    stuck = make_store(tmp_root, "stuck")
    stuck.sync(folder_url(remote))
    assert stuck.text(memo) != "Trip\nday one: the hills\nday two\nday three: the coast"

    run = a.ok("sync", "--forget-device", retired_id[:8])
    assert f"Forgot device {retired_id}" in run.err
    assert sorted(p.name for p in (remote / "devices").iterdir()) == sorted(
        [a.status()["device"], stuck.status()["device"]])
    assert read_remote(remote).devices[a.status()["device"]].head["forgotten"] == [retired_id]
    joiner = make_store(tmp_root, "joiner")
    joiner.sync(folder_url(remote))
    stuck.sync()
    for store in (joiner, stuck):
        assert store.text(memo) == "Trip\nday one: the hills\nday two\nday three: the coast"
    assert_identical([a, joiner, stuck])


def test_a_forgotten_device_that_syncs_again_publishes_under_a_new_id(tmp_root, remote):
    a, away = make_store(tmp_root, "a"), make_store(tmp_root, "away")
    memo = a.new("Shared\nfirst")
    a.sync(folder_url(remote))
    away.sync(folder_url(remote))
    old_id = away.status()["device"]
    a.ok("sync", "--forget-device", old_id)
    away.edit(memo, "Shared\nfirst\nwritten while forgotten")
    away.sync()
    assert away.status()["device"] != old_id
    a.sync()
    assert a.text(memo) == "Shared\nfirst\nwritten while forgotten"
    assert old_id not in {p.name for p in (remote / "devices").iterdir()}


def test_forget_device_refuses_this_device_and_unknown_ids(tmp_root, remote):
    a = make_store(tmp_root, "a")
    a.new("x")
    a.sync(folder_url(remote))
    own = a.status()["device"]
    for argument, message in [(own, "is this device"), ("0123", "no device 0123"), ("zz", "not a device id")]:
        run = a.fails("sync", "--forget-device", argument)
        assert message in run.err, run.err
    assert [p.name for p in (remote / "devices").iterdir()] == [own]

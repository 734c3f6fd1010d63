"""End-to-end encrypted sync (protocol/sync.md, "Encryption"), through the shell and the server.

Two or three stores sync through a folder, Apache and nginx with `--encrypt`; the remote's bytes are read
back and must hold no text, title, id or time of any memo in any encoding. Every refusal (no passphrase,
a wrong one, a remote changed to or from plain text) must leave the stores and the remote as they were,
and a damaged file must stop the reading of its device alone. The passphrase must never show: not in
the store, the logs, the output, nor the environment of a process the shell starts.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from pathlib import Path

import pytest

from cnsupport.cli import Cli
from cnsupport.remote import DavSource, FolderSource, folder_url
from cnsupport.sealed import PASSPHRASE, WITH_PASSPHRASE, leaks, memo_secrets
from cnsupport.syncing import make_store

SYNC_FAILED = -33006

SECRET_TEXTS = [
    "Bank PIN reminder\nthe code is in the blue notebook\n",
    "Médecin: résultats d'analyse\nglycémie normale — revoir en mars\n",
    "日本語のメモ\n秘密の計画\n",
]


# ---------------------------------------------------------------------------------------------------
# Helpers
# ---------------------------------------------------------------------------------------------------

def all_files(source, folder: str = "") -> dict[str, bytes]:
    """Every file of a remote (a FolderSource or DavSource), by path relative to its root."""
    files = {}
    for name, is_folder in source.names(folder):
        path = f"{folder}{name}"
        if is_folder:
            files.update(all_files(source, path + "/"))
        else:
            files[path] = source.get(path)
    return files


def folder_snapshot(root: Path) -> dict[str, bytes]:
    """Every file under a folder (a store's or a remote's), with its bytes."""
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def refused(device: Cli, reason_words: str, *args: str, env: dict | None = None) -> str:
    """A `cloudnotes sync` that must fail; its error line, which must hold `reason_words`."""
    result = device.fails("sync", *args, env=env)
    assert reason_words in result.err, result.err
    return result.err


@pytest.fixture(params=["folder", "apache", "nginx"])
def encrypted_place(request, tmp_root):
    """`(url, source)`: an empty remote (a folder, an Apache or an nginx collection) and its reader."""
    if request.param == "folder":
        path = tmp_root / "remote"
        path.mkdir()
        return folder_url(path), FolderSource(path)
    server = request.getfixturevalue(f"{request.param}_dav")
    url = server.new_collection(f"enc-{request.node.name[-40:]}-{os.getpid()}-{id(request)}".replace("[", "-").replace("]", ""))
    request.addfinalizer(lambda: shutil.rmtree(server.path_of(url), ignore_errors=True))
    return url, DavSource(url)


# ---------------------------------------------------------------------------------------------------
# Encrypted sync, end to end
# ---------------------------------------------------------------------------------------------------

def test_devices_sync_through_an_encrypted_remote_that_holds_nothing_readable(tmp_root, encrypted_place):
    url, source = encrypted_place
    a, b = make_store(tmp_root, "a"), make_store(tmp_root, "b")
    ids = [a.new(text) for text in SECRET_TEXTS]
    report = a.sync(url, "--encrypt", env=WITH_PASSPHRASE)
    assert report["published"] == 3 and report["status"]["encrypted"] is True, report

    marker = json.loads(source.get("cloudnotes-sync.json"))
    assert marker["version"] == 3 and marker["encryption"]["kdf"]["name"] == "scrypt", marker

    # B joins with the passphrase alone (no --encrypt), then needs it no more.
    report = b.sync(url, env=WITH_PASSPHRASE)
    assert report["changedMemos"] == 3 and report["status"]["encrypted"] is True, report
    assert b.texts() == dict(zip(ids, SECRET_TEXTS))
    b.edit(ids[0], SECRET_TEXTS[0] + "moved to the red notebook\n")
    added = b.new("Password hint\nmother's maiden name, reversed\n")
    assert b.sync()["published"] == 2
    assert a.sync()["changedMemos"] == 2
    a.rm(ids[2])
    assert a.sync()["published"] >= 1 and b.sync()["changedMemos"] == 1
    assert a.texts() == b.texts() and set(a.texts()) == {ids[0], ids[1], added}
    assert b.status()["encrypted"] is True

    # Nothing of any memo on the remote, the deleted one (in both trashes) included.
    files = all_files(source)
    assert any("/segments/" in path for path in files) and any(path.endswith("head.json") for path in files)
    secrets = memo_secrets(a) + [SECRET_TEXTS[2], ids[2], ids[2].replace("-", "")]
    assert leaks(files, secrets) == []
    for path, data in files.items():
        if path != "cloudnotes-sync.json":
            assert data[:4] == b"CNS1", path  # sealed, not JSON
    assert leaks(files, [PASSPHRASE]) == []


def test_a_device_without_the_passphrase_is_refused_and_nothing_changes(tmp_root, remote):
    a, b = make_store(tmp_root, "a"), make_store(tmp_root, "b")
    a.new(SECRET_TEXTS[0])
    a.sync(folder_url(remote), "--encrypt", env=WITH_PASSPHRASE)
    b.new("B's own memo\n")
    before_remote = folder_snapshot(remote)
    rows_before = b.rows()

    message = refused(b, "passphrase", "--remote", folder_url(remote))
    assert "CLOUDNOTES_PASSPHRASE" in message
    result = b.run("sync", "--json")
    assert result.code == 1 and "passphrase" in result.err
    message = refused(b, "passphrase does not open", env={"CLOUDNOTES_PASSPHRASE": "wrong " + PASSPHRASE})
    assert PASSPHRASE not in message

    assert folder_snapshot(remote) == before_remote
    assert b.rows() == rows_before and b.status()["encrypted"] is False
    assert b.status()["pendingChanges"] == 1
    # The right passphrase then opens it, and B's own memo goes out sealed.
    assert b.sync(env=WITH_PASSPHRASE)["changedMemos"] == 1
    assert a.sync()["changedMemos"] == 1


def test_a_missing_new_passphrase_refuses_to_make_an_encrypted_remote(tmp_root, remote):
    a = make_store(tmp_root, "a")
    a.new(SECRET_TEXTS[0])
    message = refused(a, "passphrase", "--remote", folder_url(remote), "--encrypt")
    assert "to be encrypted" in message
    assert folder_snapshot(remote) == {}
    # Nor does a later plain sync send the memos in plain text: the store still means to encrypt.
    refused(a, "passphrase")
    assert folder_snapshot(remote) == {}


def test_a_damaged_file_stops_reading_that_device_alone(tmp_root, remote):
    """A segment changed, cut short, or swapped with another device's: `corruptRemote` for that device,
    while the other device's edits still arrive; once the file is back, the sync goes on."""
    url = folder_url(remote)
    a, b, c = make_store(tmp_root, "a"), make_store(tmp_root, "b"), make_store(tmp_root, "c")
    a.new("from A\n")
    a.sync(url, "--encrypt", env=WITH_PASSPHRASE)
    b.new("from B\n")
    b.sync(url, env=WITH_PASSPHRASE)
    c.sync(url, env=WITH_PASSPHRASE)  # C holds the key now, and has read A's first segment
    a.new("from A, later\n")
    a.sync()
    a_segment = max(remote.glob(f"devices/{a.status()['device']}/segments/*.jsonl"))
    b_segment = next(remote.glob(f"devices/{b.status()['device']}/segments/*.jsonl"))
    good = a_segment.read_bytes()
    flipped = bytearray(good)
    flipped[len(good) // 2] ^= 0x01
    damages = {"changed": bytes(flipped), "cut short": good[:-1], "lengthened": good + b"\0",
               "swapped": b_segment.read_bytes()}
    for number, (damage, data) in enumerate(damages.items()):
        a_segment.write_bytes(data)
        text = f"from B, edit {number}\n"
        b.new(text)
        assert b.sync_run().code == 1  # B has not read that segment either; it publishes all the same
        result = c.sync_run()
        assert result.code == 1, (damage, result.err)
        assert "fails its authentication" in result.err and a_segment.name in result.err, (damage, result.err)
        assert text in c.texts().values(), f"{damage}: B's edit must still arrive"
    assert "from A, later\n" not in c.texts().values()
    a_segment.write_bytes(good)
    assert c.sync()["changedMemos"] == 1
    assert "from A, later\n" in c.texts().values()


def test_a_plain_remote_cannot_be_made_encrypted_and_an_encrypted_one_never_gets_plain_text(tmp_root, remote):
    url = folder_url(remote)
    a, b = make_store(tmp_root, "a"), make_store(tmp_root, "b")
    a.new("plain memo\n")
    a.sync(url)
    before = folder_snapshot(remote)
    b.new(SECRET_TEXTS[1])
    message = refused(b, "plain text", "--remote", url, "--encrypt", env=WITH_PASSPHRASE)
    assert "new, empty remote" in message
    assert folder_snapshot(remote) == before
    # The same device asked again without --encrypt syncs in plain text, as it was told.
    assert b.sync(url)["published"] == 1

    # The reverse: a device that syncs encrypted finds the remote replaced by a plain one.
    sealed = tmp_root / "sealed"
    sealed.mkdir()
    c = make_store(tmp_root, "c")
    c.new(SECRET_TEXTS[2])
    c.sync(folder_url(sealed), "--encrypt", env=WITH_PASSPHRASE)
    sealed_marker = (sealed / "cloudnotes-sync.json").read_bytes()
    c.new("written after\n")
    (sealed / "cloudnotes-sync.json").write_text('{"format": "cloudnotes-sync", "version": 2}\n')
    before = folder_snapshot(sealed)
    message = refused(c, "plain text")
    assert "nothing was sent" in message
    assert folder_snapshot(sealed) == before

    # A device that published in plain text finds its remote encrypted since.
    (sealed / "cloudnotes-sync.json").write_bytes(sealed_marker)
    shutil.rmtree(remote)
    shutil.copytree(sealed, remote)
    before = folder_snapshot(remote)
    message = refused(a, "in plain text", env=WITH_PASSPHRASE)
    assert "--republish" in message
    assert folder_snapshot(remote) == before


def test_a_new_passphrase_rewraps_the_key_only(tmp_root, remote):
    url = folder_url(remote)
    a, b, c = make_store(tmp_root, "a"), make_store(tmp_root, "b"), make_store(tmp_root, "c")
    first = a.new("before the change\n")
    a.sync(url, "--encrypt", env=WITH_PASSPHRASE)
    b.sync(url, env=WITH_PASSPHRASE)
    segments = {path: data for path, data in folder_snapshot(remote).items() if "/segments/" in path}

    result = a.ok("sync", "--change-passphrase", env={"CLOUDNOTES_NEW_PASSPHRASE": "a brand new one"})
    assert "passphrase" in result.err
    assert {path: data for path, data in folder_snapshot(remote).items() if "/segments/" in path} == segments

    # B, which joined before, keeps syncing with no passphrase.
    second = a.new("after the change\n")
    a.sync()
    assert b.sync()["changedMemos"] == 1 and set(b.ids()) == {first, second}
    # The old passphrase opens nothing; the new one does.
    refused(c, "passphrase does not open", "--remote", url, env=WITH_PASSPHRASE)
    assert c.sync(url, env={"CLOUDNOTES_PASSPHRASE": "a brand new one"})["changedMemos"] == 2
    # Without a new passphrase, nothing changes.
    before = folder_snapshot(remote)
    refused(a, "new passphrase", "--change-passphrase")
    assert folder_snapshot(remote) == before


def test_the_passphrase_never_shows_and_the_store_is_private(tmp_root, remote):
    a = make_store(tmp_root, "a")
    memo = a.new(SECRET_TEXTS[0])
    result = a.ok("sync", "--remote", folder_url(remote), "--encrypt", env=WITH_PASSPHRASE)
    assert PASSPHRASE not in result.out + result.err
    store_files = [p for p in a.store.parent.iterdir() if p.name.startswith(a.store.name) and p.is_file()]
    for path in store_files:
        if path.stat().st_size:
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert leaks({p.name: p.read_bytes() for p in store_files}, [PASSPHRASE]) == []

    # A process the shell starts (the editor) never inherits the passphrase.
    dump = tmp_root / "a" / "editor-env.txt"
    editor = tmp_root / "a" / "editor.sh"
    editor.write_text(f"#!/bin/sh\nenv > {dump}\n")
    editor.chmod(0o755)
    a.ok("edit", memo, env={**WITH_PASSPHRASE, "CLOUDNOTES_NEW_PASSPHRASE": "x" * 12, "VISUAL": str(editor)})
    assert "CLOUDNOTES_PASSPHRASE" not in dump.read_text() and PASSPHRASE not in dump.read_text()
    assert "CLOUDNOTES_NEW_PASSPHRASE" not in dump.read_text()


# ---------------------------------------------------------------------------------------------------
# Through the protocol
# ---------------------------------------------------------------------------------------------------

def configured_sync(server, remote: Path, **params):
    """sync/configure, then sync/now: the response of sync/now, or its error."""
    server.call("sync/configure", {"remote": folder_url(remote), "intervalSeconds": 0, **params})
    return server.request("sync/now")


def test_the_server_takes_the_passphrase_through_sync_configure(servers, tmp_root, remote):
    log = tmp_root / "server.log"
    maker = servers.session(tmp_root / "maker.sqlite", args=["--log-level", "trace", "--log-file", str(log),
                                                               "--sync-interval", "0", "--sync-delay", "600"])
    maker.create(SECRET_TEXTS[1])
    _, reply = configured_sync(maker, remote, encrypt=True, passphrase=PASSPHRASE)
    assert "result" in reply and reply["result"]["status"]["encrypted"] is True, reply
    maker.create("written later\n")
    _, reply = maker.request("sync/now")
    assert reply["result"]["published"] == 1, reply

    joiner = servers.session(tmp_root / "joiner.sqlite", args=["--sync-interval", "0", "--sync-delay", "600"])
    _, reply = configured_sync(joiner, remote)
    assert reply["error"]["code"] == SYNC_FAILED and reply["error"]["data"]["reason"] == "passphraseRequired", reply
    _, reply = configured_sync(joiner, remote, passphrase="not it")
    assert reply["error"]["data"]["reason"] == "wrongPassphrase", reply
    # Every sync says so until sync/configure gives another.
    _, reply = joiner.request("sync/now")
    assert reply["error"]["data"]["reason"] == "wrongPassphrase", reply
    error = joiner.error_of("sync/configure", {"remote": folder_url(remote), "passphrase": ""})
    assert error["code"] == -32602 and "passphrase" in error["message"], error
    _, reply = configured_sync(joiner, remote, passphrase=PASSPHRASE)
    assert reply["result"]["status"]["encrypted"] is True, reply
    assert joiner.call("sync/status")["encrypted"] is True
    # (The sync that sync/configure starts may have brought them before sync/now.)
    assert joiner.list_all()["total"] == 2
    maker.stop()
    joiner.stop()
    assert log.read_text() and PASSPHRASE not in log.read_text()
    for store in ("maker.sqlite", "joiner.sqlite"):
        files = {p.name: p.read_bytes() for p in tmp_root.glob(store + "*") if p.is_file()}
        assert leaks(files, [PASSPHRASE]) == []

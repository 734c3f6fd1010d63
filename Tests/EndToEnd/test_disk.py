"""The store on a disk that fills up, and on a read-only disk: the server keeps answering, refuses the
writes with a clear error, and loses nothing already stored. The disks are small tmpfs filesystems that
the test mounts (this needs root, as the test command runs in CI)."""

from __future__ import annotations

import os
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from cnsupport.session import barrier, quiet

STORE_UNAVAILABLE = -33005


def mount(path: Path, *options: str) -> None:
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", ",".join(options), "tmpfs", str(path)],
                            capture_output=True, text=True)
    if result.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {result.stderr.strip()}")


def remount(path: Path, option: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{option}", str(path)], check=True, capture_output=True)


@contextmanager
def read_only(disk: Path) -> Iterator[None]:
    """The disk remounted read-only, then read-write again."""
    remount(disk, "ro")
    try:
        yield
    finally:
        remount(disk, "rw")


@pytest.fixture
def small_disk(tmp_root):
    """A 4 MB filesystem, unmounted after the test."""
    path = tmp_root / "disk"
    path.mkdir(mode=0o700)
    mount(path, "size=4m", "mode=0700")
    yield path
    subprocess.run(["umount", "-l", str(path)], capture_output=True)


def test_a_full_disk_refuses_writes_and_loses_nothing(servers, small_disk):
    store = small_disk / "notes.sqlite"
    server = servers.session(store, mirror=True)
    kept = [server.call("memo/create", {"text": f"before the disk filled {index}\n" + "k" * 500})["memo"]
            for index in range(20)]
    # Fill the disk but for a little room, then write until the store is refused.
    filler = small_disk / "filler"
    free = os.statvfs(small_disk).f_bavail * os.statvfs(small_disk).f_frsize
    with open(filler, "wb") as out:
        out.write(b"\0" * max(0, free - 64 * 1024))
    acknowledged = []
    refused = None
    for index in range(400):
        _, response = server.request("memo/create", {"text": f"while filling {index}\n" + "f" * 4000})
        if "error" in response:
            refused = response["error"]
            break
        acknowledged.append(response["result"]["memo"])
    assert refused is not None, "the disk never filled"
    assert refused["code"] == STORE_UNAVAILABLE and "disk is full" in refused["message"], refused
    # Still answering, and every write it acknowledged is there.
    listed = {row["id"] for row in server.list_all()["rows"]}
    assert {memo["id"] for memo in kept + acknowledged} <= listed
    update = server.error_of("memo/update", {"id": kept[0]["id"], "text": "x" * 100_000})
    assert update["code"] == STORE_UNAVAILABLE
    assert server.memo_text(kept[0]["id"]) == kept[0]["text"]
    server.check_mirror()
    # Room again: writes work again, without a restart.
    filler.unlink()
    server.call("memo/update", {"id": kept[0]["id"], "text": "after the disk had room again"})
    assert server.shutdown_and_exit() == 0

    restarted = servers.session(store)
    texts = {row["id"] for row in restarted.list_all()["rows"]}
    assert {memo["id"] for memo in kept + acknowledged} <= texts
    assert restarted.memo_text(kept[0]["id"]) == "after the disk had room again"
    for memo in kept[1:] + acknowledged:
        assert restarted.memo_text(memo["id"]) == memo["text"]


def test_a_read_only_disk_serves_the_memos_and_refuses_changes(servers, small_disk):
    store = small_disk / "notes.sqlite"
    writer = servers.session(store)
    memos = [writer.call("memo/create", {"text": f"stored {index}\nbody"})["memo"] for index in range(5)]
    assert writer.shutdown_and_exit() == 0
    before = store.read_bytes()
    with read_only(small_disk):
        server = servers.session(store, mirror=True)
        assert "read-only" in server.stderr or "read only" in server.stderr
        assert server.mirror.detail.id == memos[-1]["id"]  # it started and shows the newest memo
        assert [row["id"] for row in server.list_all()["rows"]] == [memo["id"] for memo in reversed(memos)]
        assert server.search_total("stored 3") == 1
        for method, params in [("memo/create", {"text": "new"}),
                               ("memo/update", {"id": memos[0]["id"], "text": "changed"}),
                               ("memo/delete", {"id": memos[1]["id"]})]:
            error = server.error_of(method, params)
            assert error["code"] == STORE_UNAVAILABLE and "read-only" in error["message"], error
        server.check_mirror()
        assert server.shutdown_and_exit() == 0
    assert store.read_bytes() == before


def test_a_read_only_store_whose_log_was_never_checkpointed_shows_what_the_log_holds(servers, small_disk):
    store = small_disk / "notes.sqlite"
    writer = servers.session(store)
    writer.call("memo/create", {"text": "only in the write-ahead log"})
    writer.kill()  # no checkpoint: the acknowledged memo is in notes.sqlite-wal
    writer.wait()
    assert (small_disk / "notes.sqlite-wal").stat().st_size > 0
    before = {path.name: path.read_bytes() for path in small_disk.iterdir()}
    with read_only(small_disk):
        server = servers.session(store, mirror=True)
        assert [row["title"] for row in server.list_all()["rows"]] == ["only in the write-ahead log"]
        assert server.error_of("memo/create", {"text": "new"})["code"] == STORE_UNAVAILABLE
        # A read-only store never looks changed by others: not while the client is idle, nor to a request.
        assert quiet(server, 1.0) == [] and barrier(server) == []
        assert server.shutdown_and_exit() == 0
    assert {path.name: path.read_bytes() for path in small_disk.iterdir()} == before

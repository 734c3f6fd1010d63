"""A store's file read directly, past the server, without changing it: fast for thousands of memos, and
the only way to see what the server keeps to itself (the search index's progress, SQLite's soundness)."""

from __future__ import annotations

import shutil
import sqlite3
import time
from pathlib import Path


def memos_of(store: Path, *, hidden: bool = False) -> dict[str, str]:
    """id -> text of every live memo of a store, read from the store file without changing it (with
    `hidden`, also those of an import not yet done)."""
    if not Path(store).exists():
        return {}
    connection = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=30)
    try:
        rows = connection.execute("SELECT id, text FROM memo WHERE deleted = 0"
                                  + ("" if hidden else " AND importBatch IS NULL")).fetchall()
    finally:
        connection.close()
    return {memo_id: text.decode("utf-8") if isinstance(text, bytes) else text for memo_id, text in rows}


def integrity(store: Path) -> str:
    """SQLite's own check of a store file ("ok" when it is sound)."""
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
        return db.execute("PRAGMA integrity_check").fetchone()[0]


def copy_store(source: Path, target: Path) -> None:
    """Copies a closed store (its file and any -wal, -shm, -sync.lock beside it) to `target`."""
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    for old in target.parent.glob(target.name + "*"):
        old.unlink()
    for each in source.parent.glob(source.name + "*"):
        shutil.copy2(each, target.parent / (target.name + each.name[len(source.name):]))


def unindexed(store: Path) -> int:
    """How many live memos the background indexer has not reached yet."""
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        return con.execute("SELECT count(*) FROM memo WHERE indexed = 0 AND deleted = 0").fetchone()[0]
    finally:
        con.close()


def wait_until_indexed(store: Path, timeout: float = 60.0) -> None:
    """Waits for the server's background indexing (it starts once the client is quiet); `timeout` only
    guards against a hang."""
    deadline = time.monotonic() + timeout
    while (left := unindexed(store)) > 0:
        assert time.monotonic() < deadline, f"{left} memos still unindexed"
        time.sleep(0.05)

"""Store files, and what a process wrote: shared by the benchmark, bench/compare.py and bench/frontend.py."""

from __future__ import annotations

import ctypes
import os
import sqlite3
import subprocess


def remove_store(path: str) -> None:
    """A store's file and its log, shared memory and journal, those that exist."""
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            os.remove(path + suffix)
        except FileNotFoundError:
            pass


def server_sqlite_version(binary: str) -> str:
    """The SQLite library the server links (from ldd), asked for its version through ctypes."""
    try:
        out = subprocess.run(["ldd", binary], capture_output=True, text=True, timeout=10).stdout
        for row in out.splitlines():
            if "libsqlite3" in row and "=>" in row:
                lib = row.split("=>")[1].split("(")[0].strip()
                version = ctypes.CDLL(lib).sqlite3_libversion
                version.restype = ctypes.c_char_p
                return f"{version().decode()} ({lib})"
        return "not dynamically linked (unknown)"
    except Exception as e:  # informational only
        return f"unknown ({e})"


def written_bytes(pid: int | str = "self") -> int | None:
    """The bytes a process has made dirty for storage so far (`write_bytes` of /proc/PID/io, counted as
    pages are dirtied: a file removed before it reaches the disk still counts), or None where unknown."""
    try:
        with open(f"/proc/{pid}/io") as f:
            for row in f:
                if row.startswith("write_bytes:"):
                    return int(row.split(":", 1)[1])
    except (OSError, ValueError):
        pass
    return None


def bytes_between(before: int | None, after: int | None) -> int | None:
    return after - before if before is not None and after is not None else None


def unindexed_count(store: str) -> int:
    """Memos whose text the server has not put in the full-text index yet (0 for a schema without the column)."""
    con = sqlite3.connect(f"file:{store}?mode=ro", uri=True)
    try:
        columns = {row[1] for row in con.execute("PRAGMA table_info(memo)")}
        if "indexed" not in columns:
            return 0
        # A text that holds NUL stays out of the index for good (the index would end it at the NUL).
        return con.execute("SELECT count(*) FROM memo WHERE indexed = 0 AND deleted = 0 AND instr(text, X'00') = 0").fetchone()[0]
    finally:
        con.close()

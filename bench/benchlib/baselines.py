"""The baselines: the same work without the server, measured in the same run with the same driver.

Through `cat` (the pipe floor, a 100 KB line, `cat`'s start, the pipelined lines), on SQLite directly (the
searches, the raw insert of the same rows, a row rewritten per keystroke) and on the file system (a write
and `fsync`). See "The baselines" in bench/README.md.
"""

from __future__ import annotations

import os
import random
import sqlite3
import uuid

from .data import TYPED_CHARS, memo_preview, memo_text
from .driver import SERVER_PIPE_BYTES, BenchError, Driver, perf_ns, pipelined
from .stats import summarize
from .stores import bytes_between, remove_store, written_bytes

# The line of the pipe floor: a small response, echoed through `cat`.
SMALL_LINE = b'{"id":12345,"jsonrpc":"2.0","result":{"memo":{"id":"0b1e4f5a-8c7d-4e2f-9a3b-6c5d4e3f2a1b","version":7}}}\n'


def cat(label: str, timeout: float = 900.0, preexec_fn=None) -> Driver:
    """`cat` on pipes of the server's size (`SERVER_PIPE_BYTES`), so that the floor is measured through the
    same pipes as the server."""
    return Driver(["cat"], timeout=timeout, label=label, pipe_bytes=SERVER_PIPE_BYTES, preexec_fn=preexec_fn)


def pipe_baseline(line: bytes, label: str, timeout: float, count: int, warmup: int) -> tuple[dict, list[int]]:
    """`line` echoed through `cat` `count` times: the figures of the trips after `warmup`, and their samples."""
    d = cat(f"cat ({label})", timeout)
    samples = [d.echo_trip(line) for _ in range(count)][warmup:]
    d.close_cat()
    return summarize(samples) | {"bytes": len(line)}, samples


def cat_start_baseline(runs: int, timeout: float) -> dict:
    """`cat`'s start to its first echoed line, `runs` times after 2 untimed ones."""
    line = b'{"id":1,"jsonrpc":"2.0","result":{"protocolVersion":"1.0"}}\n'
    samples = []
    for _ in range(runs + 2):
        d = cat("cat (start)", timeout)
        d.write(line)
        got = d.readline()
        elapsed = perf_ns() - d.t_spawn
        if got != line:
            raise BenchError("cat did not echo the line")
        d.close_cat()
        samples.append(elapsed)
    return summarize(samples[2:])


def cat_pipelined_baseline(lines: list[bytes], timeout: float, updates: int | None = None) -> dict:
    """`lines` written through `cat` and read back as the server's are, the fastest of three runs (the
    first pays for the driver's fresh memory): per second of `updates` (default: one per line)."""
    runs = []
    for _ in range(3):
        d = cat("cat (pipelined)", timeout)
        runs.append(pipelined(d, lines, count_every_line=True)[0])
        d.close_cat()
    elapsed = min(runs)
    updates = updates or len(lines)
    return {"n": updates, "lines": len(lines), "bytes": sum(map(len, lines)), "elapsed_ns": elapsed,
            "per_second": updates / (elapsed / 1e9)}


def fsync_baseline(folder: str, count: int, warmup: int) -> dict:
    """Append 4 KB to a file in the stores' folder and fsync it, per op: what one durable commit costs at least."""
    path = os.path.join(folder, "fsync-probe")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    page, samples = b"\0" * 4096, []
    try:
        for _ in range(count):
            t0 = perf_ns()
            os.write(fd, page)
            os.fsync(fd)
            samples.append(perf_ns() - t0)
    finally:
        os.close(fd)
        os.remove(path)
    return summarize(samples[warmup:])


def sqlite_rewrite_baseline(path: str, text: str, count: int, warmup: int) -> dict:
    """Rewrite one row holding `text`, one character longer per committed transaction (WAL, synchronous=NORMAL,
    as the server's store): what storing a memo's whole text per keystroke costs SQLite alone."""
    remove_store(path)
    db = sqlite3.connect(path, isolation_level=None)
    samples = []
    try:
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute("CREATE TABLE memo (localID INTEGER PRIMARY KEY, text BLOB NOT NULL, version INTEGER NOT NULL)")
        data = text.encode()
        db.execute("INSERT INTO memo VALUES (1, ?, 1)", (data,))
        for i in range(count):
            data += TYPED_CHARS[i % len(TYPED_CHARS)].encode()
            t0 = perf_ns()
            db.execute("BEGIN IMMEDIATE")
            db.execute("UPDATE memo SET text = ?, version = version + 1 WHERE localID = 1", (data,))
            db.execute("COMMIT")
            samples.append(perf_ns() - t0)
    finally:
        db.close()
        remove_store(path)
    return summarize(samples[warmup:]) | {"bytes": len(text.encode())}


def search_condition(term: str) -> tuple[str, str] | None:
    """How SQLite alone finds the memos that hold `term`, as SQL and its argument: the server's phrase
    of the trigram index for 3 or more characters, else the text itself, as the server reads the memos
    its index does not hold (Sources/CloudNotesStore/SearchFilter.swift). For a short term without case
    or in ASCII the server asks the index too (every index term that begins with it), which plain SQL
    cannot: the baseline is then the query one would write by hand."""
    if len(term) >= 3:
        return "memo.localID IN (SELECT rowid FROM memo_fts WHERE memo_fts MATCH ?)", '"' + term.replace('"', '""') + '"'
    if term.isascii():
        escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        return "CAST(memo.text AS TEXT) LIKE ? ESCAPE '\\'", "%" + escaped + "%"
    if term.lower() == term.upper():
        return "instr(memo.text, ?) > 0", term
    return None  # the server uses its own case-folding function: no direct equivalent


def visible_condition(con: sqlite3.Connection) -> str:
    """The condition the server's list queries put on `memo` before the filter.

    The server spells it exactly as the WHERE of its partial list-order index (`memo_order`), so that
    SQLite can use the index; read it from there, so the baseline follows the schema. Else `deleted = 0`.
    """
    row = con.execute("SELECT sql FROM sqlite_master WHERE type = 'index' AND name = 'memo_order'").fetchone()
    if row and row[0] and " WHERE " in row[0].upper():
        sql = row[0]
        return sql[sql.upper().rindex(" WHERE ") + len(" WHERE "):].strip().rstrip(";")
    return "deleted = 0"


class DirectSearch:
    """The server's search as SQL on the store file, with python's sqlite3: count(*) + the first page."""

    def __init__(self, store: str, term: str):
        self.term = term
        self.matches = None
        condition = search_condition(term)
        self.possible = condition is not None
        if not self.possible:
            return
        where, self.arg = condition
        self.con = sqlite3.connect(store)
        visible = visible_condition(self.con)
        # A count that reads every text reads the table in its order (`NOT INDEXED`): walking the partial
        # index of visible memos would read each text out of order, 2.3x as long at 100,000 memos. The page
        # keeps the index: it reads the newest memos until it has 100.
        scans = "memo_fts MATCH" not in where
        self.count_sql = f"SELECT count(*) FROM memo{' NOT INDEXED' if scans else ''} WHERE {visible} AND {where}"
        self.page_sql = (f"SELECT id, title, preview, modifiedAt, seq FROM memo WHERE {visible} AND {where} "
                         f"ORDER BY modifiedAt DESC, seq DESC LIMIT 100 OFFSET 0")
        # A term the full-text index serves: the index's own part of the search, counting its matches inside
        # SQLite (fetching 18,600 rowids into Python would add Python's cost per row), is the floor of any
        # search that counts its matches.
        fts = "memo_fts MATCH" in where
        self.lookup_sql = "SELECT count(*) FROM memo_fts WHERE memo_fts MATCH ?" if fts else None

    def run(self) -> int:
        """One search: the ns it took."""
        t0 = perf_ns()
        total = self.con.execute(self.count_sql, (self.arg,)).fetchone()[0]
        rows = self.con.execute(self.page_sql, (self.arg,)).fetchall()
        elapsed = perf_ns() - t0
        self.matches = total
        if len(rows) != min(100, total):
            raise BenchError(f"SQLite direct {self.term!r}: {len(rows)} rows of {total}")
        return elapsed

    def run_lookup(self) -> int:
        """The index lookup alone: the ns it took."""
        t0 = perf_ns()
        self.con.execute(self.lookup_sql, (self.arg,)).fetchone()
        return perf_ns() - t0

    def described(self) -> dict:
        return {"query": self.term, "matches": self.matches, "sql_count": self.count_sql, "sql_page": self.page_sql}

    def close(self) -> None:
        if self.possible:
            self.con.close()


def raw_insert_baseline(path: str, schema: list[str], memos: list[dict], seed: int, mode: str = "plain") -> dict:
    """The same rows into a fresh file with the server's schema, in one transaction.

    `plain`: rows only, not indexed (what the server's import writes; it indexes later, in the
    background). `triggers`: each row indexed by the schema's FTS insert trigger as it goes in.
    `rebuild`: rows, then the FTS index built once at the end of the same transaction.
    """
    rebuild = mode == "rebuild"
    remove_store(path)
    rng = random.Random(seed)
    rows = []
    for seq, entry in enumerate(reversed(memos), start=1):  # the server inserts the last entry first
        text = memo_text(entry)
        millis = entry["last_modified"] * 1000
        rows.append((str(uuid.UUID(int=rng.getrandbits(128), version=4)), text.encode(), entry["title"].strip(),
                     memo_preview(entry["body"]), millis, millis, seq))
    con = sqlite3.connect(path, isolation_level=None)
    con.execute("PRAGMA journal_mode = WAL")
    con.execute("PRAGMA synchronous = NORMAL")  # as the server (its default durability, "committed")
    fts = None
    for statement in schema:
        head = statement.upper()
        if head.startswith("CREATE VIRTUAL TABLE"):
            fts = statement.split()[3].strip('"')
        if rebuild and head.startswith("CREATE TRIGGER") and "AFTER INSERT" in head:
            continue
        con.execute(statement)
    written_before = written_bytes()
    t0 = perf_ns()
    con.execute("BEGIN IMMEDIATE")
    columns = {row[1] for row in con.execute("PRAGMA table_info(memo)")}
    # `indexed = 1` makes the schema's insert trigger index each row as it goes in, as a server would
    # that indexed during the import; the rebuild variant indexes everything once at the end.
    indexed_column = ", indexed" if "indexed" in columns else ""
    indexed_value = (", 0" if mode == "plain" else ", 1") if "indexed" in columns else ""
    con.executemany(f"INSERT INTO memo (id, text, title, preview, createdAt, modifiedAt, version, seq, deleted{indexed_column}) "
                    f"VALUES (?, ?, ?, ?, ?, ?, 1, ?, 0{indexed_value})", rows)
    if rebuild:
        con.execute(f"INSERT INTO {fts}({fts}) VALUES('rebuild')")
    con.execute("COMMIT")
    elapsed = perf_ns() - t0
    written = bytes_between(written_before, written_bytes())
    indexed = con.execute(f"SELECT count(*) FROM {fts}_docsize").fetchone()[0]
    con.close()
    if indexed != (0 if mode == "plain" and "indexed" in columns else len(rows)):
        raise BenchError(f"raw insert baseline: {indexed} rows in the FTS index, expected {len(rows)}")
    size = os.path.getsize(path) + (os.path.getsize(path + "-wal") if os.path.exists(path + "-wal") else 0)
    remove_store(path)
    return {"n": 1, "rows": len(rows), "elapsed_ns": elapsed, "p50_ns": elapsed, "p99_ns": elapsed,
            "max_ns": elapsed, "file_bytes": size, "written_bytes": written, "fts": mode}

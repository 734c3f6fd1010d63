"""Stores that sync with each other: made side by side, synced until they settle, compared, and a change
dated after another."""

from __future__ import annotations

import time
from pathlib import Path

from .cli import Cli
from .store_file import memos_of


# A memo of one short line each, for edits of lines near and far from each other.
PACKING_LIST = "Packing list\ntent\nstove\nmatches\nwater\nmap\ncompass"


def replace_line(text: str, index: int, line: str) -> str:
    """`text` with its line `index` (from 0) replaced by `line`."""
    lines = text.split("\n")
    lines[index] = line
    return "\n".join(lines)


def make_store(root: Path, name: str) -> Cli:
    """A store of its own, `root/name/notes.sqlite`, driven through the shell (that folder is its HOME)."""
    return Cli(root / name / "notes.sqlite")


def publish(store: Cli, remote: str, *texts: str) -> list[str]:
    """Memos made on `store`, then synced with `remote` (its remote from then on); their ids."""
    ids = [store.new(text) for text in texts]
    store.sync(remote)
    return ids


def share_memo(a: Cli, b: Cli, remote: str, text: str) -> str:
    """A memo made on A, then A and B synced with `remote`, so that both hold it; its id."""
    memo_id = a.new(text)
    a.sync(remote)
    b.sync(remote)
    assert b.text(memo_id) == text
    return memo_id


def edit_apart(a: Cli, b: Cli, memo_id: str, a_text: str, b_text: str) -> None:
    """A edits the memo, then B: B's is the later edit, which keeps the memo where the two conflict."""
    a.edit(memo_id, a_text)
    after_a_millisecond()
    b.edit(memo_id, b_text)


def settle(stores: list[Cli], rounds: int = 8) -> int:
    """Syncs every store in turn until a whole round changes and publishes nothing; returns the rounds."""
    for round_number in range(1, rounds + 1):
        results = [store.sync() for store in stores]
        if all(r["changedMemos"] == 0 and r["published"] == 0 and r["conflicts"] == 0 for r in results):
            return round_number
    raise AssertionError(f"the stores did not settle within {rounds} rounds of syncs: {results}")


def canonical(rows: list[dict]) -> list[dict]:
    """The list with memos that share a modifiedAt in id order: the protocol orders those by each
    store's own latest change, which differs from store to store."""
    dates = [row["modifiedAt"] for row in rows]
    assert dates == sorted(dates, reverse=True), "the list is not newest first"
    return sorted(rows, key=lambda row: (row["modifiedAt"], row["id"]), reverse=True)


def assert_identical(stores: list[Cli]) -> tuple[list[dict], dict[str, tuple]]:
    """Every store holds the same memos (text and dates) and lists them alike."""
    first = stores[0].snapshot()
    for store in stores[1:]:
        other = store.snapshot()
        assert other[1] == first[1], f"{store.name} holds other memos than {stores[0].name}:\n" + describe_difference(
            store.name, other[1], first[1])
        assert canonical(other[0]) == canonical(first[0]), f"{store.name}'s list differs from {stores[0].name}'s"
    return first


def describe_difference(name: str, got: dict, expected: dict) -> str:
    missing = sorted(set(expected) - set(got))
    extra = {k: str(got[k])[:60] for k in sorted(set(got) - set(expected))}
    wrong = {k: (str(got[k])[:80], str(expected[k])[:80])
             for k in sorted(set(got) & set(expected)) if got[k] != expected[k]}
    return f"{name} differs from the expected memos: missing {missing}, extra {extra}, different {wrong}"


def listed_texts(store: Cli) -> dict[str, str]:
    """Every listed memo's text: the ids as `list --json` prints them, the texts read from the store
    file (thousands of `show` commands would take minutes); the list and the file must agree."""
    ids = store.ids()
    assert len(set(ids)) == len(ids), f"{store.name} lists a memo twice"
    rows = memos_of(store.store, hidden=True)
    assert sorted(rows) == sorted(ids), f"{store.name}: the list and the store disagree"
    return {memo_id: rows[memo_id] for memo_id in ids}


def after_a_millisecond() -> None:
    """Returns once the wall clock, which dates every change in milliseconds, has moved on: a change made
    after this is later than every change made before it (the "later side wins" rules need that)."""
    start = time.time_ns() // 1_000_000
    while time.time_ns() // 1_000_000 <= start:
        time.sleep(0.001)

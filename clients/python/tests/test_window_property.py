"""Windowed mirrors stay right while several processes change one store (protocol/README.md §7).

Two editors hold a window of the list each (a ``WindowMirror`` of a few rows, as a front end showing one
screen would), on one store that a third server and the shell also change. Hypothesis generates the
steps: creates, updates, deletes, selections and searches from any process, imports from the shell
(small ones, and one of more than 100 memos, which the editors hear of as a reset), and window moves.
After EVERY step, each editor first catches up (a request makes its server take the other processes'
changes), and then:

- the rows its window holds are the server's rows at those indexes, and its total is the server's;
- a selection inside the window points at the selected memo's row;
- once filled again (`sync`), the window holds a whole screen, still equal to the server's.

A separate test checks that another process's few changes arrive memo by memo, not as a reset.

Environment knob: CLOUDNOTES_WINDOW_EXAMPLES (default 25).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path
from typing import Any, List

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cloudnotes_client import CloudNotesClient, CloudNotesError
from conftest import ClientFactory, collect, methods

EXAMPLES = int(os.environ.get("CLOUDNOTES_WINDOW_EXAMPLES", "25"))

texts = st.text(alphabet="aAb메 \n", min_size=0, max_size=6)
queries = st.sampled_from(["", "", "a", "b", "메", "ab"])
editors = st.sampled_from(["A", "B"])
writers = st.sampled_from(["A", "B", "C", "shell"])
picks = st.integers(0, 10_000)
operations = st.one_of(
    st.tuples(st.just("create"), writers, texts),
    st.tuples(st.just("update"), st.sampled_from(["A", "B", "C"]), picks, texts),
    st.tuples(st.just("delete"), writers, picks),
    st.tuples(st.just("select"), editors, picks),
    st.tuples(st.just("search"), editors, queries),
    st.tuples(st.just("scroll"), editors, picks),
    st.tuples(st.just("import"), st.sampled_from([1, 3, 3, 120])),
)


class Processes:
    """The store and the processes that share it: editors A and B (windowed), server C, the shell."""

    def __init__(self, factory: ClientFactory, windows: List[int]):
        self.store = factory.store
        self.binary = factory.binary
        self.imports = 0
        self.editors = {name: factory(window=count) for name, count in zip("AB", windows)}
        self.clients = dict(self.editors, C=factory())

    def ids(self) -> List[str]:
        """Every live memo's id, newest first, read from the file as it is now."""
        with sqlite3.connect(f"file:{self.store}?mode=ro", uri=True) as db:
            return [row[0] for row in db.execute(
                "SELECT id FROM memo WHERE deleted = 0 AND importBatch IS NULL ORDER BY modifiedAt DESC, seq DESC")]

    def pick(self, number: int) -> str | None:
        ids = self.ids()
        return ids[number % len(ids)] if ids else None

    def shell(self, *args: str, stdin: str | None = None) -> None:
        subprocess.run([self.binary, *args, "--store", str(self.store)], input=stdin, text=True, check=True,
                       capture_output=True, timeout=60)

    def run(self, step: tuple) -> None:
        kind, *args = step
        if kind == "create":
            who, text = args
            if who == "shell":
                self.shell("new", stdin=text)
            else:
                self.clients[who].create(text)
        elif kind == "update":
            who, number, text = args
            if (memo_id := self.pick(number)) is not None:
                self.ignoring_gone(self.clients[who].update, memo_id, text)
        elif kind == "delete":
            who, number = args
            if (memo_id := self.pick(number)) is None:
                return
            if who == "shell":
                subprocess.run([self.binary, "rm", memo_id, "--store", str(self.store)], capture_output=True, timeout=60)
            else:
                self.ignoring_gone(self.clients[who].delete, memo_id)
        elif kind == "select":
            who, number = args
            if (memo_id := self.pick(number)) is not None:
                self.ignoring_gone(self.editors[who].select, memo_id)
        elif kind == "search":
            who, query = args
            self.editors[who].search(query)
        elif kind == "scroll":
            who, number = args
            editor = self.editors[who]
            editor.scroll(number % max(1, editor.mirror.total))
        elif kind == "import":
            (count,) = args
            self.imports += 1
            path = self.store.parent / f"import-{self.imports}.json"
            path.write_text(json.dumps([{"title": f"imported {self.imports}.{i}", "body": "a b",
                                         "last_modified": 1_600_000_000 + i} for i in range(count)]))
            self.shell("import", str(path))

    @staticmethod
    def ignoring_gone(action: Any, *args: Any) -> None:
        # A memo picked from the file can be discarded by rule S5 in an editor before the request lands.
        try:
            action(*args)
        except CloudNotesError as error:
            if error.code != -33001:
                raise


def check_window(name: str, client: CloudNotesClient) -> None:
    """The editor's window and total are the server's, before and after it fills the window again."""
    # Any request first takes the other processes' changes; this one asks for no rows.
    client.list(10 ** 9, 1)
    mirror = client.mirror
    for moment in ("as the notifications left it", "filled again"):
        held = mirror.rows or ()
        page = client.list(mirror.offset, mirror.count)
        assert mirror.total == page.total, f"{name}, {moment}: total {mirror.total}, the server's {page.total}"
        assert list(held) == list(page.rows[:len(held)]), (
            f"{name}, {moment}: window at {mirror.offset} holds {[r.title for r in held]}, "
            f"the server's rows there are {[r.title for r in page.rows]}")
        selection = mirror.selection
        if selection.index is not None and mirror.offset <= selection.index < mirror.offset + len(held):
            assert held[selection.index - mirror.offset].id == selection.id, f"{name}, {moment}: selection off its row"
        client.sync()
        assert len(mirror.rows) == min(mirror.count, max(0, mirror.total - mirror.offset)), f"{name}: window not full"


@settings(max_examples=EXAMPLES, deadline=None, database=None, print_blob=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(windows=st.lists(st.integers(1, 6), min_size=2, max_size=2), steps=st.lists(operations, min_size=5, max_size=30))
def test_windows_stay_right_under_changes_from_several_processes(binary, schema, tmp_path_factory, windows, steps):
    factory = ClientFactory(binary, schema, tmp_path_factory.mktemp("window"))
    factory.store.parent.mkdir(parents=True, exist_ok=True)
    try:
        processes = Processes(factory, windows)
        for step in steps:
            processes.run(step)
            for name, editor in processes.editors.items():
                check_window(name, editor)
    finally:
        problems = factory.finish()
    assert not problems, "protocol problems seen during the test:\n" + "\n".join(problems[:20])


def test_another_processs_few_changes_arrive_memo_by_memo(make_client, store_path):
    """An insert, an update and a delete elsewhere reach a windowed editor as such, and a big import as a reset."""
    editor = make_client(window=3)
    other = make_client()
    first = other.create("first")
    second = other.create("second")
    _, notes = collect(editor, editor.list, 10 ** 9, 1)
    assert methods(notes) == ["list/didInsert", "list/didInsert", "selection/didChange", "detail/didShow"]
    other.update(first.id, "first, edited")
    other.delete(second.id)
    _, notes = collect(editor, editor.list, 10 ** 9, 1)
    assert methods(notes)[:2] == ["list/didUpdate", "list/didRemove"]
    assert [n.params["row"]["title"] for n in notes[:1]] == ["first, edited"]
    editor.sync()
    assert [row.title for row in editor.mirror.rows] == ["first, edited"]
    entries = [{"title": f"bulk {i}", "body": "", "last_modified": 1_600_000_000} for i in range(150)]
    other.import_memos(entries)
    _, notes = collect(editor, editor.list, 10 ** 9, 1)
    assert "list/didReset" in methods(notes) and "list/didInsert" not in methods(notes)
    editor.sync()
    assert editor.mirror.total == 151 and len(editor.mirror.rows) == 3

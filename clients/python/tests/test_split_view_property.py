"""Random sessions of create / update / select / delete / search / import against a model of the split view.

The repository's one property test of the split view (the end-to-end suite's former copy is merged here).
Hypothesis generates sequences of operations; each runs against a fresh server through the client, and
every message the server writes is checked as the end-to-end harness checks it (``SchemaChecker``).
After EVERY step the test checks:

- rule S7: the client's mirror equals ``memo/list`` (every row, in order, and the total), the selection
  index is the selected memo's place in it, the detail pane shows the selected memo as the store holds
  it (text and modifiedAt, read back with ``memo/share``), and the selection and the detail are the
  model's;
- the model's list: newest modifiedAt first, then latest change first (imported memos with one
  timestamp keep their import order), the search filter applied (case-insensitive substring);
- the exact notifications the step caused, in order, as sections 6 and 8 prescribe: rule S2 (create at
  index 0, selected, shown; a filter is cleared with one reset), rule S3 (update keeps the id, bumps the
  version, moves the row to the top, no detail/didShow; same text changes nothing), rule S4 (delete
  selects the memo at the same index or the one above; an outside selection is replaced by the first
  row), rule S5 (a blank selected memo is discarded when the selection moves or a memo is created, and is
  then gone), rule S6 (under a filter, rows enter and leave the filtered list; an outside selection has
  index null), an import resets the list and keeps the selection (or selects the newest memo when
  nothing was selected), version conflicts and unknown ids change nothing.

At the end the server must shut down cleanly, and a restarted server must hold the same memos.

Each example spawns servers, so shrinking a failure can take a few minutes. Environment knobs:
CLOUDNOTES_PROPERTY_EXAMPLES (default 40) and CLOUDNOTES_PROPERTY_SHRINK=0 (report the unshrunk failure).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Dict, List, Optional

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from cloudnotes_client import CloudNotesClient, Memo, MemoNotFound, MemoRow, Selection, VersionConflict
from conftest import SchemaChecker, collect, methods, mirror_matches_list

# Few letters, so that searches hit; Korean, case pairs, and every kind of blank. Plain words are
# weighted up, so that lists grow long enough for rules S4 and S6 to have rows to move between.
words = st.text(alphabet="aAbB메모", min_size=1, max_size=5)
texts = st.one_of(words, words, st.text(alphabet="aAbB메모 \n\r\t", max_size=8))
queries = st.text(alphabet="aAbB메모 ", max_size=3)
picks = st.one_of(st.integers(0, 1000), st.just("selected"))
operations = st.one_of(
    st.tuples(st.just("create"), texts),
    st.tuples(st.just("create"), texts),
    st.tuples(st.just("update"), picks, texts, st.sampled_from(["none", "current", "stale"])),
    st.tuples(st.just("select"), picks),
    st.tuples(st.just("delete"), picks),
    st.tuples(st.just("search"), queries),
    st.tuples(st.just("search"), st.just("")),
    st.tuples(st.just("gone"), st.integers(0, 1000), st.sampled_from(["select", "update", "delete"])),
    st.tuples(st.just("import"), st.lists(st.tuples(texts, st.sampled_from([0, 1, 1608651333])),
                                          min_size=1, max_size=3)),
)


NOW = 10 ** 15     # later than any imported timestamp (milliseconds)


def is_blank(text: str) -> bool:
    return text.strip() == ""


class Model:
    """What the split view must hold, computed from the specification alone."""

    def __init__(self) -> None:
        # The list order: newest modifiedAt first, then latest change first. Memos created or updated in
        # this session are newer than every imported one (their timestamps are in the past), so "now"
        # is one big number and the change counter orders them.
        self.keys: Dict[str, tuple] = {}
        self.changes = 0
        self.texts: Dict[str, str] = {}
        self.versions: Dict[str, int] = {}
        self.query: Optional[str] = None
        self.selected: Optional[str] = None
        self.gone: List[str] = []           # deleted or discarded ids
        self.scratch = Path(tempfile.gettempdir())  # a folder for exports

    @property
    def order(self) -> List[str]:
        """Every live memo id, in list order."""
        return sorted(self.keys, key=self.keys.__getitem__, reverse=True)

    def touch(self, memo_id: str, timestamp_ms: int = NOW) -> None:
        """Records a change of the memo at ``timestamp_ms`` (the session's "now" by default)."""
        self.changes += 1
        self.keys[memo_id] = (timestamp_ms, self.changes)

    def listed(self) -> List[str]:
        return [i for i in self.order if not self.query or self.query.lower() in self.texts[i].lower()]

    def index_of(self, memo_id: Optional[str]) -> Optional[int]:
        listed = self.listed()
        return listed.index(memo_id) if memo_id in listed else None

    def selection(self) -> Selection:
        return Selection(self.selected, self.index_of(self.selected))

    def remove(self, memo_id: str) -> None:
        del self.keys[memo_id]
        del self.texts[memo_id]
        del self.versions[memo_id]
        self.gone.append(memo_id)

    def discard_blank_selection(self, notes: List[Any]) -> None:
        """Rule S5: expects the discarded memo's didRemove first (when it was listed) and forgets it."""
        if self.selected is None or not is_blank(self.texts[self.selected]):
            return
        index = self.index_of(self.selected)
        if index is not None:
            assert notes and notes[0].method == "list/didRemove", f"rule S5: no didRemove first in {methods(notes)}"
            assert notes.pop(0).params == {"id": self.selected, "index": index}
        self.remove(self.selected)
        self.selected = None

    def pick(self, number: Any) -> Optional[str]:
        """A live memo: the selected one, or any by number (None when there is none)."""
        if number == "selected" and self.selected is not None:
            return self.selected
        if not self.order:
            return None
        return self.order[number % len(self.order) if isinstance(number, int) else 0]


def expect(notes: List[Any], method: str, params: Optional[Dict[str, Any]] = None) -> Any:
    assert notes, f"expected {method}, but no more notifications"
    note = notes.pop(0)
    assert note.method == method, f"expected {method}, got {note.method} {note.params}"
    if params is not None:
        assert note.params == params, f"{method}: {note.params} instead of {params}"
    return note


def expect_selected_and_shown(notes: List[Any], memo: Memo, index: Optional[int]) -> None:
    """The memo selected (at `index`) and shown, and no other notification."""
    expect(notes, "selection/didChange", {"id": memo.id, "index": index})
    assert Memo.from_json(expect(notes, "detail/didShow").params["memo"]) == memo
    assert notes == [], f"unexpected {methods(notes)}"


def expect_selection_shift(notes: List[Any], model: Model, before: Selection) -> None:
    """A selection/didChange comes exactly when the selected memo's index changed."""
    after = model.selection()
    if after != before:
        expect(notes, "selection/didChange", {"id": after.id, "index": after.index})


def run_step(client: CloudNotesClient, model: Model, step: tuple) -> None:
    kind = step[0]
    if kind == "create":
        text = step[1]
        filtered = model.query is not None
        memo, notes = collect(client, client.create, text)
        assert (memo.text, memo.version) == (text, 1)
        model.discard_blank_selection(notes)
        model.touch(memo.id)
        model.texts[memo.id], model.versions[memo.id] = text, 1
        model.query, model.selected = None, memo.id
        if filtered:
            expect(notes, "list/didReset", {"total": len(model.order)})
        else:
            note = expect(notes, "list/didInsert")
            assert note.params["index"] == 0 and note.params["row"]["id"] == memo.id
        expect_selected_and_shown(notes, memo, 0)

    elif kind == "update":
        target = model.pick(step[1])
        if target is None:
            return
        text, mode = step[2], step[3]
        version = model.versions[target]
        base = {"none": None, "current": version, "stale": version - 1 if version > 1 else version + 1}[mode]
        before, listed_before = model.selection(), model.listed()
        if mode == "stale":
            try:
                collect(client, client.update, target, text, base_version=base)
            except VersionConflict as conflict:
                assert conflict.base_version == base
                assert (conflict.current_memo.id, conflict.current_memo.version) == (target, version)
                assert conflict.current_memo.text == model.texts[target]
            else:
                raise AssertionError("an update with a stale baseVersion was applied")
            assert client.drain_notifications() == [], "a refused update sent notifications"
            return
        memo, notes = collect(client, client.update, target, text, base_version=base)
        assert (memo.id, memo.text) == (target, text)
        if model.texts[target] == text:
            assert memo.version == version and notes == [], "an update to the same text changed something"
            return
        assert memo.version == version + 1
        was_listed = target in listed_before
        model.texts[target], model.versions[target] = text, version + 1
        model.touch(target)
        now_listed = target in model.listed()
        if was_listed and now_listed:
            note = expect(notes, "list/didUpdate")
            assert (note.params["fromIndex"], note.params["toIndex"]) == (listed_before.index(target), 0)
            assert MemoRow.from_json(note.params["row"]).id == target
        elif was_listed:
            expect(notes, "list/didRemove", {"id": target, "index": listed_before.index(target)})
        elif now_listed:
            note = expect(notes, "list/didInsert")
            assert note.params["index"] == 0 and note.params["row"]["id"] == target
        expect_selection_shift(notes, model, before)
        assert notes == [], f"unexpected {methods(notes)} (no detail/didShow for an update)"

    elif kind == "select":
        target = model.pick(step[1])
        if target is None:
            return
        memo, notes = collect(client, client.select, target)
        assert (memo.id, memo.text, memo.version) == (target, model.texts[target], model.versions[target])
        if target == model.selected:
            assert notes == [], "selecting the selected memo sent notifications"
            return
        model.discard_blank_selection(notes)
        model.selected = target
        expect_selected_and_shown(notes, memo, model.index_of(target))

    elif kind == "delete":
        target = model.pick(step[1])
        if target is None:
            return
        before, listed_before = model.selection(), model.listed()
        result, notes = collect(client, client.delete, target)
        if target in listed_before:
            expect(notes, "list/didRemove", {"id": target, "index": listed_before.index(target)})
        model.remove(target)
        if model.selected == target:
            listed = model.listed()
            if target in listed_before:     # rule S4: the same index, or the one above
                index = min(listed_before.index(target), len(listed) - 1)
            else:                           # it was outside the filter: the first row
                index = 0 if listed else -1
            model.selected = listed[index] if index >= 0 else None
            expect(notes, "selection/didChange", {"id": model.selected, "index": model.index_of(model.selected)})
            if model.selected is None:
                expect(notes, "detail/didClear", {"editable": False})
            else:
                assert expect(notes, "detail/didShow").params["memo"]["id"] == model.selected
        else:
            expect_selection_shift(notes, model, before)
        assert (result.id if result else None) == model.selected
        assert notes == [], f"unexpected {methods(notes)}"

    elif kind == "search":
        query = step[1]
        before = model.selection()
        result, notes = collect(client, client.search, query)
        model.query = query or None
        expect(notes, "list/didReset", {"total": len(model.listed())})
        expect_selection_shift(notes, model, before)
        assert notes == [], f"unexpected {methods(notes)} (a search never touches the detail pane)"
        assert (result.query, result.total, list(result.ids)) == (query, len(model.listed()), model.listed()[:100])

    elif kind == "import":
        entries = [{"title": "", "body": "", "last_modified": seconds, "text": text} for text, seconds in step[1]]
        before = model.selection()
        result, notes = collect(client, client.import_memos, entries)
        assert result.imported == len(entries)
        # Which new memo is which entry: by text and timestamp, and among equal entries by their order,
        # which is their import order. An export lists every memo, whatever the filter, newest first.
        exported = json.loads(Path(client.export(model.scratch / "all.json", overwrite=True).path).read_text("utf-8"))
        new = [e for e in exported if e["id"] not in model.keys]
        assert len(new) == len(entries), "the import did not add one memo per entry"
        found: Dict[tuple, List[str]] = {}
        for entry in new:
            found.setdefault((entry["text"], entry["last_modified"]), []).append(entry["id"])
        assignment = []
        for text, seconds in step[1]:
            assert found.get((text, seconds)), f"no memo for the entry {text!r} at {seconds}"
            assignment.append((found[(text, seconds)].pop(0), text, seconds))
        # The first entry must end up above later ones with its timestamp: it is recorded as the latest change.
        for memo_id, text, seconds in reversed(assignment):
            model.texts[memo_id], model.versions[memo_id] = text, 1
            model.touch(memo_id, seconds * 1000)
        assert [e["id"] for e in exported] == model.order, "memo/export is not newest first"
        expect(notes, "list/didReset", {"total": len(model.listed())})
        if model.selected is None and model.keys:
            # Nothing was selected: the newest memo is selected and shown (even outside the filter).
            model.selected = model.order[0]
            expect(notes, "selection/didChange", {"id": model.selected, "index": model.index_of(model.selected)})
            assert expect(notes, "detail/didShow").params["memo"]["id"] == model.selected
        else:
            expect_selection_shift(notes, model, before)    # rule S5: a blank selection is not discarded
        assert notes == [], f"unexpected {methods(notes)}"

    elif kind == "gone":
        if not model.gone:
            return
        target = model.gone[step[1] % len(model.gone)]
        action = {"select": client.select, "delete": client.delete,
                  "update": lambda memo_id: client.update(memo_id, "revived?")}[step[2]]
        try:
            collect(client, action, target)
        except MemoNotFound as error:
            assert error.memo_id == target
        else:
            raise AssertionError(f"{step[2]} of a deleted or discarded memo succeeded")
        assert client.drain_notifications() == []

    else:
        raise AssertionError(kind)


def check(client: CloudNotesClient, model: Model) -> None:
    assert client.problems == []
    mirror_matches_list(client)
    state = client.mirror.snapshot()
    listing = client.list_all()
    assert state.rows is not None, "the mirror is stale after a request returned"
    assert state.rows == listing.rows, (
        f"mirror {[r.title for r in state.rows]} != memo/list {[r.title for r in listing.rows]}")
    assert state.total == listing.total == len(listing.rows)
    assert list(listing.ids) == model.listed(), (
        f"memo/list {[client.share(i).text for i in listing.ids]} but the model has "
        f"{[model.texts[i] for i in model.listed()]}")
    assert state.selection == model.selection()
    assert state.query == model.query
    if model.selected is None:
        assert state.detail is None
    else:
        assert state.detail is not None and state.detail.id == model.selected
        assert (state.detail.text, state.detail.version) == (model.texts[model.selected],
                                                             model.versions[model.selected])


EXAMPLES = int(os.environ.get("CLOUDNOTES_PROPERTY_EXAMPLES", "40"))
PHASES = [phase for phase in Phase
          if phase is not Phase.shrink or os.environ.get("CLOUDNOTES_PROPERTY_SHRINK", "1") != "0"]


@settings(max_examples=EXAMPLES, deadline=None, database=None, print_blob=True, phases=PHASES,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(steps=st.lists(operations, min_size=10, max_size=40))
def test_random_sessions_keep_the_mirror_and_the_split_view_rules(binary, schema, steps):
    folder = Path(tempfile.mkdtemp(prefix="cloudnotes-python-property-"))
    checker = SchemaChecker(schema)
    client = CloudNotesClient(folder / "notes.sqlite", binary=binary, trace=checker, timeout=15)
    try:
        model = Model()
        model.scratch = folder
        check(client, model)
        for number, step in enumerate(steps):
            try:
                run_step(client, model, step)
                check(client, model)
            except AssertionError as failure:
                raise AssertionError(f"step {number} {step!r} after {steps[:number]!r}: {failure}") from failure
            assert checker.violations == []
        assert client.close() == 0

        with CloudNotesClient(folder / "notes.sqlite", binary=binary, trace=checker, timeout=15) as again:
            assert list(again.list_all().ids) == model.order, "a restarted server lists other memos"
            for memo_id in model.order:
                assert again.share(memo_id).text == model.texts[memo_id]
            assert again.mirror.selection.id == (model.order[0] if model.order else None), "rule S1"
        assert checker.violations == []
    finally:
        client.kill()
        shutil.rmtree(folder, ignore_errors=True)

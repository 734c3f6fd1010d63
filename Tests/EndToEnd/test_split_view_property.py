"""Random sequences of create / update / select / delete / search against a model of the split view.

After every step: the mirror kept by notifications equals `memo/list` (rule 7), the list is the model's
(newest change first, the filter applied: case-insensitive substring), blank memos are discarded when the
selection moves or another memo is created (rule 5), and the selection follows rules 2 and 4.
"""

import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import Server

ALPHABET = "aAbB메모 \n"
texts = st.text(alphabet=ALPHABET, max_size=8)
queries = st.text(alphabet="aAbB메모 ", max_size=4)
operations = st.one_of(
    st.tuples(st.just("create"), texts),
    st.tuples(st.just("update"), st.integers(0, 50), texts),
    st.tuples(st.just("select"), st.integers(0, 50)),
    st.tuples(st.just("delete"), st.integers(0, 50)),
    st.tuples(st.just("search"), queries),
)


def is_blank(text: str) -> bool:
    return text.strip(" \n") == ""


def matches(text: str, query: str | None) -> bool:
    return not query or query.lower() in text.lower()


class Model:
    def __init__(self):
        self.order: list[str] = []     # live memo ids, latest change first
        self.texts: dict[str, str] = {}
        self.query: str | None = None
        self.selected: str | None = None

    def listed(self) -> list[str]:
        return [i for i in self.order if matches(self.texts[i], self.query)]

    def discard_blank_selection(self) -> None:
        if self.selected is not None and is_blank(self.texts[self.selected]):
            self.order.remove(self.selected)
            del self.texts[self.selected]
            self.selected = None

    def touch(self, memo_id: str) -> None:
        self.order.remove(memo_id)
        self.order.insert(0, memo_id)


def run_step(client: Server, model: Model, operation: tuple) -> None:
    kind = operation[0]
    if kind == "create":
        memo = client.call("memo/create", {"text": operation[1]})["memo"]
        assert memo["text"] == operation[1]
        model.discard_blank_selection()
        model.query = None
        model.order.insert(0, memo["id"])
        model.texts[memo["id"]] = operation[1]
        model.selected = memo["id"]
    elif kind == "update":
        if not model.order:
            return
        target = model.order[operation[1] % len(model.order)]
        memo = client.call("memo/update", {"id": target, "text": operation[2]})["memo"]
        assert memo["id"] == target and memo["text"] == operation[2]
        if model.texts[target] != operation[2]:
            model.texts[target] = operation[2]
            model.touch(target)
    elif kind == "select":
        if not model.order:
            return
        target = model.order[operation[1] % len(model.order)]
        memo = client.call("memo/select", {"id": target})["memo"]
        assert memo["id"] == target and memo["text"] == model.texts[target]
        if target != model.selected:
            model.discard_blank_selection()
            model.selected = target
    elif kind == "delete":
        if not model.order:
            return
        target = model.order[operation[1] % len(model.order)]
        listed_before = model.listed()
        result = client.call("memo/delete", {"id": target})
        model.order.remove(target)
        del model.texts[target]
        if model.selected == target:
            listed_after = model.listed()
            if target in listed_before:
                # Rule 4: the memo now at the same index, or the one above, or nothing.
                index = min(listed_before.index(target), len(listed_after) - 1)
                model.selected = listed_after[index] if index >= 0 else None
            else:
                # The deleted memo was outside the filter: any memo of the filtered list, or nothing.
                chosen = client.mirror.selection["id"]
                assert chosen is None or chosen in listed_after
                model.selected = chosen
        selected = result["selected"]
        assert (selected and selected["id"]) == model.selected
    elif kind == "search":
        result = client.call("memo/search", {"query": operation[1]})
        model.query = operation[1] or None
        assert result["query"] == operation[1]
    else:
        raise AssertionError(kind)


def check(client: Server, model: Model, history: list) -> None:
    listing = client.mirror.check()
    ids = [row["id"] for row in listing["rows"]]
    expected = model.listed()
    assert ids == expected, (
        f"memo/list {[model.texts.get(i, '?') for i in ids]} but the model expects "
        f"{[model.texts[i] for i in expected]} after {history}")
    assert client.mirror.selection["id"] == model.selected, f"selection differs after {history}"


@settings(max_examples=30, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(st.lists(operations, min_size=1, max_size=25))
def test_random_sessions_keep_the_mirror_equal_to_the_list(steps):
    folder = Path(tempfile.mkdtemp(prefix="cloudnotes-prop-"))
    client = Server(folder / "notes.sqlite")
    try:
        client.initialize(mirror=True)
        model = Model()
        history = []
        for operation in steps:
            history.append(operation)
            run_step(client, model, operation)
            check(client, model, history)
        assert client.shutdown_and_exit() == 0
        # A restart finds the same memos.
        client.stop()
        assert not client.violations, client.violations
        again = Server(folder / "notes.sqlite")
        try:
            again.initialize()
            rows = again.list_all()["rows"]
            assert [r["id"] for r in rows] == model.order
            for memo_id in model.order:
                assert again.memo_text(memo_id) == model.texts[memo_id]
        finally:
            again.stop()
            assert not again.violations, again.violations
    finally:
        client.stop()
        assert not client.violations, client.violations
        shutil.rmtree(folder, ignore_errors=True)

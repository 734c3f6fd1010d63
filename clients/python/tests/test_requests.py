"""Every typed helper against the real server: results, notifications and the split-view rules they cause."""

from __future__ import annotations

import json
import re

import pytest

from cloudnotes_client import EditResult, InvalidParams, Memo, MemoRow, Selection, TextEdit, VersionConflict, split_title
from conftest import collect, make_entries, methods, mirror_matches_list

ISO_MS = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$")
UUID_LOWER = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def test_create_inserts_at_the_top_selects_and_shows_the_memo(client):
    older = client.create("older")
    memo, notes = collect(client, client.create, "Shopping\nmilk\neggs")
    assert isinstance(memo, Memo)
    assert UUID_LOWER.match(memo.id) and memo.id != older.id
    assert (memo.title, memo.body, memo.version) == ("Shopping", "milk\neggs", 1)
    assert ISO_MS.match(memo.created_at) and memo.created_at == memo.modified_at
    assert methods(notes) == ["list/didInsert", "selection/didChange", "detail/didShow"]
    assert notes[0].params["index"] == 0
    assert MemoRow.from_json(notes[0].params["row"]) == MemoRow(memo.id, "Shopping", "milk eggs", memo.modified_at,
                                                                memo.display_date)
    assert notes[1].params == {"id": memo.id, "index": 0}
    assert notes[2].params["editable"] is True and Memo.from_json(notes[2].params["memo"]) == memo
    assert client.mirror.ids == (memo.id, older.id)
    assert client.mirror.selection == Selection(memo.id, 0)
    assert client.mirror.detail == memo and client.mirror.editable


def test_text_is_kept_byte_for_byte_and_title_and_body_are_derived(client):
    text = "\n \t\n  Title line \r\nsecond\r\n\u0000 end ✅ 메모"
    memo = client.create(text)
    assert memo.text == text
    assert memo.title == "Title line"
    assert memo.body == "second\r\n\u0000 end ✅ 메모"
    assert client.share(memo.id).text == text
    assert client.select(memo.id).text == text


def test_a_blank_memo_shows_the_placeholder_title(client):
    memo = client.create("  \n\t\r\n")
    assert (memo.title, memo.body) == ("New Memo", "")
    assert client.mirror.rows[0].title == "New Memo" and client.mirror.rows[0].preview == ""
    shared = client.share(memo.id)
    assert (shared.title, shared.filename, shared.text) == ("New Memo", "New Memo.txt", "  \n\t\r\n")


def test_rows_cut_long_titles_and_previews(client):
    title = "T" * 300
    body = "word  \n\n  " * 40
    memo = client.create(title + "\n" + body)
    row = client.list().rows[0]
    assert memo.title == title
    assert row.title == "T" * 200 + "…"
    preview = " ".join(body.split())
    assert row.preview == preview[:100] + "…"


def test_update_keeps_the_memo_bumps_the_version_and_moves_the_row_to_the_top(client):
    a = client.create("A")
    b = client.create("B")
    updated, notes = collect(client, client.update, a.id, "A\nsecond version", base_version=1)
    assert (updated.id, updated.version, updated.text, updated.body) == (a.id, 2, "A\nsecond version", "second version")
    assert updated.created_at == a.created_at and updated.modified_at >= a.modified_at
    assert methods(notes) == ["list/didUpdate", "selection/didChange"], "no detail/didShow for an update"
    assert (notes[0].params["fromIndex"], notes[0].params["toIndex"]) == (1, 0)
    assert notes[0].params["row"]["preview"] == "second version"
    assert notes[1].params == {"id": b.id, "index": 1}
    assert client.mirror.ids == (a.id, b.id) and client.mirror.detail == b

    # The selected memo's own update: the detail pane takes the memo from the response.
    b2, notes = collect(client, client.update, b.id, "B2")
    assert methods(notes) == ["list/didUpdate", "selection/didChange"]
    assert client.mirror.detail == b2 and b2.version == 2
    mirror_matches_list(client)


def test_edit_applies_byte_ranges_and_the_mirror_applies_them_to_the_detail(client):
    memo = client.create("회의\nagenda")
    result, notes = collect(client, client.edit, memo.id, [TextEdit(6, 6, " 1"), TextEdit(9, 15, "- budget")], 1)
    assert isinstance(result, EditResult)
    assert (result.id, result.version, result.title, result.length) == (memo.id, 2, "회의 1", 17)
    assert methods(notes) == ["list/didUpdate"], "no detail/didShow for an edit"
    # The reply has no text: the mirror's detail is the shown text with the edits applied.
    detail = client.mirror.detail
    assert (detail.text, detail.body, detail.version, detail.title) == ("회의 1\n- budget", "- budget", 2, "회의 1")
    assert detail == client.select(memo.id)
    mirror_matches_list(client)


def test_edits_between_two_texts_reach_the_same_text(client):
    memo = client.create("")
    texts = ["", "H", "Hé", "Hél", "Hélo", "Héllo", "Héllo 세계", "Héllo 세상", "héllo 세상\n", "  \n héllo 세상\n👍", "👍"]
    version = memo.version
    for old, new in zip(texts, texts[1:]):
        change = TextEdit.between(old, new)
        assert len(change.text.encode()) <= len(new.encode())
        version = client.edit(memo.id, [change], version).version
        assert client.mirror.detail.text == new == client.share(memo.id).text
    assert TextEdit.between("세계", "세상") == TextEdit(3, 6, "상")   # whole code points, never half of one
    assert split_title(" \n  title \t\nbody") == ("title", "body")


def test_a_refused_edit_raises_and_applies_nothing(client):
    memo = client.create("가나")
    with pytest.raises(InvalidParams) as refused:
        client.edit(memo.id, [TextEdit(0, 0, "ok"), TextEdit(3, 3, "x")], 1)   # inside 가 once "ok" is in
    assert refused.value.param == "edits[1]"
    with pytest.raises(VersionConflict) as conflict:
        client.edit(memo.id, [TextEdit(0, 0, "x")], 7)
    assert conflict.value.current_memo.text == "가나"
    assert client.share(memo.id).text == "가나" and client.mirror.detail.version == 1


def test_an_update_to_the_same_text_changes_nothing(client):
    memo = client.create("same")
    again, notes = collect(client, client.update, memo.id, "same")
    assert notes == []
    assert again == memo


def test_modified_at_never_moves_backwards(client):
    client.import_memos([{"title": "future", "body": "", "last_modified": 4102444800}])
    memo = client.list().rows[0]
    assert memo.modified_at == "2100-01-01T00:00:00.000Z"
    updated = client.update(memo.id, "future\nedited")
    assert updated.modified_at == "2100-01-01T00:00:00.000Z" and updated.version == 2


def test_select_shows_the_memo_and_reselecting_sends_nothing(client):
    a = client.create("A")
    b = client.create("B")
    shown, notes = collect(client, client.select, a.id)
    assert shown == a
    assert methods(notes) == ["selection/didChange", "detail/didShow"]
    assert notes[0].params == {"id": a.id, "index": 1}
    assert client.mirror.selection == Selection(a.id, 1) and client.mirror.detail == a
    again, notes = collect(client, client.select, a.id.upper())
    assert again == a and notes == []
    assert client.select(b.id) == b


def test_deleting_the_selection_selects_the_same_index_or_the_one_above(client):
    a = client.create("A")
    b = client.create("B")
    c = client.create("C")          # list: C B A
    client.select(b.id)
    selected, notes = collect(client, client.delete, b.id)
    assert selected == a, "the memo now at the same index"
    assert methods(notes) == ["list/didRemove", "selection/didChange", "detail/didShow"]
    assert notes[0].params == {"id": b.id, "index": 1}
    assert notes[1].params == {"id": a.id, "index": 1}
    selected, notes = collect(client, client.delete, a.id)
    assert selected == c, "the bottom row was deleted: the one above"
    assert client.mirror.selection == Selection(c.id, 0)
    selected, notes = collect(client, client.delete, c.id)
    assert selected is None
    assert methods(notes) == ["list/didRemove", "selection/didChange", "detail/didClear"]
    assert notes[1].params == {"id": None, "index": None}
    assert client.mirror.detail is None and client.mirror.rows == ()


def test_deleting_another_memo_keeps_the_selection_and_reports_a_shift(client):
    a = client.create("A")
    b = client.create("B")
    c = client.create("C")          # list: C B A, C selected
    selected, notes = collect(client, client.delete, a.id)
    assert selected == c and methods(notes) == ["list/didRemove"]
    client.select(b.id)             # list: C B, B selected at 1
    selected, notes = collect(client, client.delete, c.id)
    assert selected == b
    assert methods(notes) == ["list/didRemove", "selection/didChange"]
    assert notes[1].params == {"id": b.id, "index": 0}


def test_list_pages_through_the_list_newest_first(client):
    client.import_memos(make_entries(250))
    first = client.list()
    assert first.total == 250 and len(first.rows) == 100, "the default limit is 100"
    assert [r.title for r in first.rows[:3]] == ["generated 0", "generated 1", "generated 2"]
    tail = client.list(240, 100)
    assert len(tail.rows) == 10 and tail.rows[-1].title == "generated 249"
    assert client.list(300).rows == () and client.list(300).total == 250
    whole = client.list_all()
    assert whole.rows == first.rows + client.list(100, 100).rows + client.list(200, 100).rows
    assert client.list(0, 1000).rows == whole.rows


def test_search_filters_case_insensitively_and_keeps_an_outside_selection(client):
    shopping = client.create("Shopping\nmilk\neggs")
    reading = client.create("Reading list")
    groceries = client.create("장보기 목록\n우유 2통")
    result, notes = collect(client, client.search, "MILK")
    assert (result.query, result.total, result.ids) == ("MILK", 1, (shopping.id,))
    assert methods(notes) == ["list/didReset", "selection/didChange"]
    assert notes[0].params == {"total": 1}
    assert notes[1].params == {"id": groceries.id, "index": None}
    assert client.mirror.query == "MILK" and client.mirror.ids == (shopping.id,)
    assert client.mirror.detail == groceries, "the selection stays shown outside the filter"

    result, notes = collect(client, client.search, "우유")
    assert result.ids == (groceries.id,)
    assert notes[1].params == {"id": groceries.id, "index": 0}
    assert client.search("i").ids == (reading.id, shopping.id), "one-character queries work"
    result = client.clear_search()
    assert result.query == "" and result.total == 3 and client.mirror.query is None
    mirror_matches_list(client)


def test_create_under_a_filter_clears_it_with_one_reset(client):
    client.create("one")
    client.create("two")
    client.search("zzz")
    assert client.mirror.total == 0
    memo, notes = collect(client, client.create, "three")
    assert methods(notes) == ["list/didReset", "selection/didChange", "detail/didShow"]
    assert notes[0].params == {"total": 3}
    assert client.mirror.query is None and client.mirror.rows[0].id == memo.id
    assert client.list().total == 3


def test_share_renders_text_markdown_and_json(client):
    memo = client.create("Reading list\n- a\n- b")
    text = client.share(memo.id)
    assert (text.title, text.text, text.mime_type, text.filename) == (
        "Reading list", memo.text, "text/plain; charset=utf-8", "Reading list.txt")
    markdown = client.share(memo.id, "markdown")
    assert (markdown.text, markdown.mime_type, markdown.filename) == (
        "# Reading list\n\n- a\n- b", "text/markdown; charset=utf-8", "Reading list.md")
    shared = client.share(memo.id, "json")
    assert (shared.mime_type, shared.filename) == ("application/json", "Reading list.json")
    data = json.loads(shared.text)
    assert list(data) == ["body", "createdAt", "id", "modifiedAt", "text", "title"], "sorted keys"
    assert "\n" in shared.text, "pretty-printed"
    assert data == {"body": memo.body, "createdAt": memo.created_at, "id": memo.id, "modifiedAt": memo.modified_at,
                    "text": memo.text, "title": memo.title}
    empty_body = client.create("Only a title")
    assert client.share(empty_body.id, "markdown").text == "# Only a title\n"


def test_share_file_names_are_safe(client):
    memo = client.create('..a/b\\c:d*e?f"g<h>i|j\n')
    assert client.share(memo.id).filename == "a_b_c_d_e_f_g_h_i_j.txt"
    dots = client.create("...")
    assert client.share(dots.id, "markdown").filename == "memo.md"
    long = client.create("x" * 150)
    assert client.share(long.id).filename == "x" * 100 + ".txt"


def test_sharing_changes_nothing(client):
    a = client.create("A")
    client.create("B")
    _, notes = collect(client, client.share, a.id, "json")
    assert notes == []
    assert client.list().ids[1] == a.id


def test_deleting_a_selection_outside_the_filter_selects_the_first_row(client):
    client.create("a one")
    client.create("a two")
    outside = client.create("b")
    client.search("a")                      # list: "a two", "a one"; "b" stays selected, index null
    assert client.mirror.selection == Selection(outside.id, None)
    selected, notes = collect(client, client.delete, outside.id)
    assert selected.text == "a two", "rule S4: the first row of the filtered list"
    assert methods(notes) == ["selection/didChange", "detail/didShow"], "it was not in the list: no didRemove"
    assert client.mirror.selection == Selection(selected.id, 0)
    mirror_matches_list(client)


def test_a_blank_memo_is_discarded_only_when_the_selection_moves_or_a_memo_is_created(client):
    other = client.create("other")
    blank = client.create(" \r\n\t")
    client.search("")                       # a search does not discard it
    client.import_memos([{"title": "imported", "body": "", "last_modified": 1}])
    client.delete(other.id)                 # nor does deleting another memo
    assert client.mirror.selection.id == blank.id and blank.id in client.mirror.ids
    assert client.select(blank.id) == blank, "reselecting it keeps it"
    imported = client.mirror.rows[-1]
    _, notes = collect(client, client.select, imported.id)
    assert methods(notes) == ["list/didRemove", "selection/didChange", "detail/didShow"]
    assert notes[0].params == {"id": blank.id, "index": 0}
    assert client.mirror.ids == (imported.id,)
    mirror_matches_list(client)


FUTURE = {"title": "from the future", "body": "", "last_modified": 4102444800}     # 2100-01-01


def test_a_future_dated_memo_stays_above_new_and_updated_memos(client):
    # The list is ordered by modifiedAt, and an imported memo may carry a future one. The server keeps
    # the list order and says so consistently in its notifications.
    client.import_memos([FUTURE])
    memo, notes = collect(client, client.create, "created now")
    assert notes[0].method == "list/didInsert" and notes[0].params["index"] == 1
    assert client.mirror.selection == Selection(memo.id, 1)
    _, notes = collect(client, client.update, memo.id, "updated now")
    assert methods(notes) == ["list/didUpdate"] and notes[0].params["toIndex"] == 1
    mirror_matches_list(client)

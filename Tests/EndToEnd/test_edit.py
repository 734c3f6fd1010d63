"""`memo/edit`: an editor's changes as UTF-8 byte ranges, applied to the stored text in the transaction
that stores the result; refused whole (nothing stored) when any edit is out of place."""

from __future__ import annotations

import pytest

from cnsupport.schema import INVALID_PARAMS, MEMO_NOT_FOUND, VERSION_CONFLICT
from cnsupport.session import methods_of, params_of


def edit(client, memo: dict, edits: list[dict], base_version: int | None = None):
    """Sends `edits` against `memo`'s version (or `base_version`); returns (notifications, result)."""
    return client.call_notes("memo/edit", {
        "id": memo["id"], "baseVersion": base_version or memo["version"], "edits": edits})


def edit_error(client, memo: dict, edits: list[dict], base_version: int | None = None) -> dict:
    return client.error_of("memo/edit", {
        "id": memo["id"], "baseVersion": base_version or memo["version"], "edits": edits})


def utf8_edit(text: str, start: int, end: int, new: str) -> tuple[str, dict]:
    """`text` with its characters start..<end replaced, and the edit in UTF-8 byte offsets."""
    before = text[:start].encode()
    removed = text[start:end].encode()
    return text[:start] + new + text[end:], {"start": len(before), "end": len(before) + len(removed), "text": new}


# -- applying edits -----------------------------------------------------------------------------------

def test_edits_apply_in_order_and_the_result_carries_the_new_version_not_the_text(client):
    memo = client.create("Shopping\nmilk\neggs")
    notes, result = edit(client, memo, [
        {"start": 18, "end": 18, "text": "\nbread"},   # append
        {"start": 9, "end": 13, "text": "oat milk"},   # replace "milk", in the text the append left
        {"start": 0, "end": 0, "text": "Weekly "},     # insert at the start
    ])
    expected = "Weekly Shopping\noat milk\neggs\nbread"
    assert result == {
        "id": memo["id"], "version": memo["version"] + 1, "title": "Weekly Shopping",
        "modifiedAt": result["modifiedAt"], "displayDate": result["displayDate"], "length": len(expected.encode())}
    assert result["modifiedAt"] >= memo["modifiedAt"]
    assert client.memo_text(memo["id"]) == expected
    # Rule S3, as for memo/update: one didUpdate, and the detail pane is not shown its own text back.
    assert params_of(notes, "list/didUpdate") == [{"fromIndex": 0, "toIndex": 0, "row": {
        "id": memo["id"], "title": "Weekly Shopping", "preview": "oat milk eggs bread",
        "modifiedAt": result["modifiedAt"], "displayDate": result["displayDate"]}}]
    assert "detail/didShow" not in methods_of(notes)
    client.check_mirror()


def test_typing_korean_and_deleting_through_edits_matches_the_text_an_editor_holds(client):
    memo = client.create("")
    text, version = "", memo["version"]
    for character in "회의록: 다음 주 월요일 ✓":
        text, change = utf8_edit(text, len(text), len(text), character)
        _, result = edit(client, memo, [change], version)
        assert result["version"] == version + 1 and result["length"] == len(text.encode())
        version = result["version"]
    text, backspace = utf8_edit(text, len(text) - 1, len(text), "")  # a 3-byte character
    text, word = utf8_edit(text, 5, 7, "화요일 아닌")
    _, result = edit(client, memo, [backspace, word], version)
    assert client.memo_text(memo["id"]) == text == "회의록: 화요일 아닌 주 월요일 "
    assert result["title"] == text.strip()
    assert client.call("memo/list", {})["rows"][0]["title"] == text.strip()


def test_an_edit_of_a_memo_below_the_top_moves_it_up_and_shifts_the_selection(client):
    first = client.create("first")
    second = client.create("second")   # list: second (selected), first
    notes, _ = edit(client, first, [{"start": 5, "end": 5, "text": " edited"}])
    assert params_of(notes, "list/didUpdate")[0]["fromIndex"] == 1
    assert params_of(notes, "selection/didChange") == [{"id": second["id"], "index": 1}]
    assert [row["title"] for row in client.check_mirror()["rows"]] == ["first edited", "second"]


def test_no_edits_change_nothing(client):
    memo = client.create("unchanged")
    notes, result = edit(client, memo, [])
    assert result["version"] == memo["version"]
    assert methods_of(notes) == []
    notes, result = edit(client, memo, [{"start": 0, "end": 2, "text": "un"}])   # the same bytes again
    assert result["version"] == memo["version"] and methods_of(notes) == []


def test_an_edit_that_makes_a_memo_match_the_search_enters_the_filtered_list(client):
    client.create("alpha")
    beta = client.create("beta")
    client.call("memo/search", {"query": "alpha"})
    notes, _ = edit(client, beta, [{"start": 4, "end": 4, "text": " and alpha"}])
    assert methods_of(notes)[:1] == ["list/didInsert"]
    assert [row["title"] for row in client.check_mirror()["rows"]] == ["beta and alpha", "alpha"]
    # The search is never stale: the edited text is found, the old one is not.
    assert client.search_total("and alpha") == 1
    assert client.search_total("zzz") == 0


def test_an_acknowledged_edit_survives_a_kill(servers):
    server = servers.session()
    memo = server.call("memo/create", {"text": "draft"})["memo"]
    server.call("memo/edit", {"id": memo["id"], "baseVersion": 1, "edits": [{"start": 5, "end": 5, "text": " 2"}]})
    server.kill()
    server.wait()
    again = servers.session()
    assert again.memo_text(memo["id"]) == "draft 2"


# -- refused edits: an error that names the edit, and nothing stored ------------------------------------

@pytest.mark.parametrize("edits, param, words", [
    ([{"start": 0, "end": 0, "text": "ok"}, {"start": 11, "end": 11, "text": "past the end"}], "edits[1]", "not in the 10-byte text"),
    ([{"start": 3, "end": 2, "text": ""}], "edits[0]", "not in the"),
    ([{"start": 1, "end": 1, "text": "x"}], "edits[0]", "inside the UTF-8 bytes"),     # inside 가 (3 bytes)
    ([{"start": 0, "end": 4, "text": "x"}], "edits[0]", "inside the UTF-8 bytes"),     # ends inside 나
    ([{"start": -1, "end": 0, "text": "x"}], "edits[0].start", "minimum"),
    ([{"start": 0, "end": 1.5, "text": "x"}], "edits[0].end", "whole number"),
    ([{"start": 0, "text": "x"}], "edits[0].end", "missing"),
    ([{"start": 0, "end": 0}], "edits[0].text", "missing"),
    ([{"start": 0, "end": 0, "text": 5}], "edits[0].text", "string"),
    (["x"], "edits[0]", "object"),
])
def test_a_bad_edit_is_refused_naming_it_and_no_edit_is_applied(client, edits, param, words):
    memo = client.create("가나ab")   # 8 bytes
    error = edit_error(client, memo, edits)
    assert error["code"] == INVALID_PARAMS and error["data"]["param"] == param, error
    assert words in error["message"], error
    assert client.memo_text(memo["id"]) == "가나ab"
    assert client.call("memo/select", {"id": memo["id"]})["memo"]["version"] == memo["version"]
    client.check_mirror()


def test_more_edits_than_a_request_may_carry_are_refused(client):
    memo = client.create("")
    error = edit_error(client, memo, [{"start": 0, "end": 0, "text": "x"}] * 1001)
    assert error["code"] == INVALID_PARAMS and error["data"]["param"] == "edits" and "1000" in error["message"]
    _, result = edit(client, memo, [{"start": 0, "end": 0, "text": "x"}] * 1000)
    assert result["length"] == 1000 and client.memo_text(memo["id"]) == "x" * 1000


def test_an_edit_needs_a_base_version(client):
    memo = client.create("text")
    error = client.error_of("memo/edit", {"id": memo["id"], "edits": [{"start": 0, "end": 0, "text": "x"}]})
    assert error["code"] == INVALID_PARAMS and error["data"]["param"] == "baseVersion"
    assert client.memo_text(memo["id"]) == "text"


def test_an_edit_against_a_stale_version_is_a_conflict_carrying_the_current_memo(client):
    memo = client.create("version one")
    client.call("memo/update", {"id": memo["id"], "text": "version two"})
    notes, response = client.request("memo/edit", {
        "id": memo["id"], "baseVersion": 1, "edits": [{"start": 0, "end": 7, "text": "stale"}]})
    error = response["error"]
    assert error["code"] == VERSION_CONFLICT
    assert error["data"]["baseVersion"] == 1
    assert error["data"]["memo"]["text"] == "version two" and error["data"]["memo"]["version"] == 2
    assert methods_of(notes) == []
    assert client.memo_text(memo["id"]) == "version two"


def test_an_edit_of_an_unknown_or_deleted_memo(client):
    memo = client.create("soon gone")
    client.call("memo/delete", {"id": memo["id"]})
    assert edit_error(client, memo, [{"start": 0, "end": 0, "text": "x"}])["code"] == MEMO_NOT_FOUND
    unknown = {"id": "00000000-0000-4000-8000-000000000001", "version": 1}
    assert edit_error(client, unknown, [])["code"] == MEMO_NOT_FOUND
    client.check_mirror()

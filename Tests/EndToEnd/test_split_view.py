"""The split-view rules S1–S7 of the issue, each checked against a front end's mirror (rule S7) after every step."""

from cnsupport.schema import INVALID_PARAMS, MEMO_NOT_FOUND, VERSION_CONFLICT
from cnsupport.session import methods_of, params_of


def create_all(client, texts):
    """Creates memos in order (the last one ends up at index 0) and returns them."""
    memos = [client.create(text) for text in texts]
    client.check_mirror()
    return memos


def assert_selected_and_shown(notes, memo: dict, index: int) -> None:
    """The notifications end with the memo selected at `index`, and shown in the detail pane."""
    assert params_of(notes, "selection/didChange")[-1] == {"id": memo["id"], "index": index}
    assert params_of(notes, "detail/didShow")[-1]["memo"]["id"] == memo["id"]


def titles(client):
    return [row["title"] for row in client.list_all()["rows"]]


# -- rule S2: create -----------------------------------------------------------------------------------

def test_create_inserts_at_index_0_selects_and_shows_editable(client):
    for number, text in enumerate(["first memo\nbody", "second memo", "third"]):
        notes, result = client.call_notes("memo/create", {"text": text})
        memo = result["memo"]
        assert methods_of(notes) == ["list/didInsert", "selection/didChange", "detail/didShow"]
        insert = params_of(notes, "list/didInsert")[0]
        assert insert["index"] == 0
        assert insert["row"]["id"] == memo["id"]
        assert insert["row"]["title"] == text.split("\n")[0]
        assert params_of(notes, "selection/didChange") == [{"id": memo["id"], "index": 0}]
        assert params_of(notes, "detail/didShow") == [{"memo": memo, "editable": True}]
        assert memo["text"] == text and memo["version"] == 1
        listing = client.check_mirror()
        assert listing["total"] == number + 1
        assert listing["rows"][0]["id"] == memo["id"]


def test_create_without_text_makes_an_empty_memo_with_a_placeholder_title(client):
    notes, result = client.call_notes("memo/create", {})
    memo = result["memo"]
    assert memo["text"] == "" and memo["body"] == "" and memo["title"] == "New Memo"
    assert params_of(notes, "list/didInsert")[0]["row"]["title"] == "New Memo"
    client.check_mirror()


def test_create_under_a_filter_resets_the_list_once_and_clears_the_filter(client):
    create_all(client, ["apple pie", "banana bread", "cherry tart"])
    notes, result = client.call_notes("memo/search", {"query": "apple"})
    assert result["total"] == 1
    client.check_mirror()
    notes, result = client.call_notes("memo/create", {"text": "durian"})
    memo = result["memo"]
    assert methods_of(notes).count("list/didReset") == 1
    assert "list/didInsert" not in methods_of(notes)
    assert "list/didRemove" not in methods_of(notes)
    assert params_of(notes, "list/didReset") == [{"total": 4}]
    assert_selected_and_shown(notes, memo, 0)
    listing = client.check_mirror()
    assert listing["total"] == 4, "creating must clear the search filter"
    assert listing["rows"][0]["id"] == memo["id"]
    # The filter stays cleared: the next create is a plain insert.
    notes, _ = client.call_notes("memo/create", {"text": "elderberry"})
    assert "list/didReset" not in methods_of(notes)
    assert params_of(notes, "list/didInsert")[0]["index"] == 0
    client.check_mirror()


# -- select ----------------------------------------------------------------------------------------------

def test_select_shows_the_memo(client):
    first, second = create_all(client, ["first", "second"])
    notes, result = client.call_notes("memo/select", {"id": first["id"]})
    assert result["memo"] == first
    assert methods_of(notes) == ["selection/didChange", "detail/didShow"]
    assert params_of(notes, "selection/didChange") == [{"id": first["id"], "index": 1}]
    assert params_of(notes, "detail/didShow") == [{"memo": first, "editable": True}]
    client.check_mirror()
    # Selecting the selected memo again changes nothing.
    notes, result = client.call_notes("memo/select", {"id": first["id"]})
    assert result["memo"] == first
    assert methods_of(notes) == []
    # An id in upper case names the same memo.
    notes, result = client.call_notes("memo/select", {"id": second["id"].upper()})
    assert result["memo"]["id"] == second["id"]
    client.check_mirror()


def test_select_unknown_or_malformed_id(client):
    create_all(client, ["only"])
    error = client.error_of("memo/select", {"id": "00000000-0000-4000-8000-000000000000"})
    assert error["code"] == MEMO_NOT_FOUND
    assert error["data"]["id"] == "00000000-0000-4000-8000-000000000000"
    error = client.error_of("memo/select", {"id": "not-a-uuid"})
    assert error["code"] == INVALID_PARAMS and error["data"]["param"] == "id"
    client.check_mirror()


# -- rule S3: update -------------------------------------------------------------------------------------

def test_update_keeps_the_memo_and_moves_it_to_index_0_in_one_didUpdate(client):
    a, b, c = create_all(client, ["memo a", "memo b", "memo c"])   # list: c, b, a
    client.call("memo/select", {"id": a["id"]})
    notes, result = client.call_notes("memo/update", {"id": a["id"], "text": "memo a, edited"})
    memo = result["memo"]
    list_notes = [n for n in methods_of(notes) if n.startswith("list/")]
    assert list_notes == ["list/didUpdate"], methods_of(notes)
    update = params_of(notes, "list/didUpdate")[0]
    assert update["fromIndex"] == 2 and update["toIndex"] == 0
    assert update["row"]["id"] == a["id"] and update["row"]["title"] == "memo a, edited"
    assert params_of(notes, "selection/didChange") == [{"id": a["id"], "index": 0}]
    assert memo["id"] == a["id"]
    assert memo["version"] == a["version"] + 1
    assert memo["text"] == "memo a, edited"
    assert memo["createdAt"] == a["createdAt"]
    assert memo["modifiedAt"] >= a["modifiedAt"]
    listing = client.check_mirror()
    assert listing["total"] == 3
    assert [r["id"] for r in listing["rows"]] == [a["id"], c["id"], b["id"]]


def test_update_per_keystroke_never_makes_a_new_memo(client):
    memo = client.create("")
    versions = [memo["version"]]
    typed = ""
    for character in "Hello, 세계":
        typed += character
        notes, result = client.call_notes("memo/update", {"id": memo["id"], "text": typed, "baseVersion": versions[-1]})
        assert result["memo"]["id"] == memo["id"]
        versions.append(result["memo"]["version"])
        assert params_of(notes, "list/didUpdate") == [
            {"fromIndex": 0, "toIndex": 0, "row": params_of(notes, "list/didUpdate")[0]["row"]}]
        assert "list/didInsert" not in methods_of(notes)
    assert versions == sorted(set(versions)), "the version must grow with every change"
    assert client.check_mirror()["total"] == 1
    assert client.memo_text(memo["id"]) == "Hello, 세계"


def test_update_of_an_unselected_memo_shifts_the_selection_index(client):
    a, b, c = create_all(client, ["memo a", "memo b", "memo c"])   # c selected at 0
    notes, result = client.call_notes("memo/update", {"id": a["id"], "text": "memo a again"})
    assert params_of(notes, "list/didUpdate")[0]["fromIndex"] == 2
    assert params_of(notes, "selection/didChange") == [{"id": c["id"], "index": 1}]
    assert "detail/didShow" not in methods_of(notes)
    client.check_mirror()


def test_update_with_a_stale_base_version_is_a_conflict_carrying_the_current_memo(client):
    memo = client.create("version one")
    updated = client.call("memo/update", {"id": memo["id"], "text": "version two", "baseVersion": 1})["memo"]
    assert updated["version"] == 2
    notes, response = client.request("memo/update", {"id": memo["id"], "text": "stale edit", "baseVersion": 1})
    error = response["error"]
    assert error["code"] == VERSION_CONFLICT
    assert error["data"]["memo"] == updated
    assert error["data"]["memo"]["version"] == 2
    assert methods_of(notes) == [], "a refused update changes nothing"
    assert client.memo_text(memo["id"]) == "version two"
    # Based on the current version, the update goes through.
    again = client.call("memo/update", {"id": memo["id"], "text": "version three", "baseVersion": 2})["memo"]
    assert again["version"] == 3
    client.check_mirror()


def test_update_of_an_unknown_memo(client):
    create_all(client, ["something"])
    error = client.error_of("memo/update", {"id": "00000000-0000-4000-8000-000000000001", "text": "x"})
    assert error["code"] == MEMO_NOT_FOUND
    client.check_mirror()


# -- rule S4: delete -------------------------------------------------------------------------------------

def test_delete_of_the_selected_memo_selects_the_memo_now_at_the_same_index(client):
    a, b, c, d = create_all(client, ["a", "b", "c", "d"])   # list: d c b a
    client.call("memo/select", {"id": c["id"]})            # index 1
    notes, result = client.call_notes("memo/delete", {"id": c["id"]})
    assert params_of(notes, "list/didRemove") == [{"index": 1, "id": c["id"]}]
    assert_selected_and_shown(notes, b, 1)
    assert result["selected"]["id"] == b["id"]
    assert result["selected"] == params_of(notes, "detail/didShow")[-1]["memo"]
    client.check_mirror()


def test_delete_of_the_selected_bottom_row_selects_the_one_above(client):
    a, b, c = create_all(client, ["a", "b", "c"])   # list: c b a
    client.call("memo/select", {"id": a["id"]})     # bottom row, index 2
    notes, result = client.call_notes("memo/delete", {"id": a["id"]})
    assert params_of(notes, "list/didRemove") == [{"index": 2, "id": a["id"]}]
    assert params_of(notes, "selection/didChange")[-1] == {"id": b["id"], "index": 1}
    assert result["selected"]["id"] == b["id"]
    client.check_mirror()


def test_delete_of_the_last_memo_clears_the_detail(client):
    a, b = create_all(client, ["a", "b"])            # b selected at 0
    notes, result = client.call_notes("memo/delete", {"id": b["id"]})
    assert result["selected"]["id"] == a["id"]
    client.check_mirror()
    notes, result = client.call_notes("memo/delete", {"id": a["id"]})
    assert result == {"selected": None}
    assert params_of(notes, "list/didRemove") == [{"index": 0, "id": a["id"]}]
    assert params_of(notes, "detail/didClear") == [{"editable": False}]
    assert params_of(notes, "selection/didChange")[-1] == {"id": None, "index": None}
    assert "detail/didShow" not in methods_of(notes)
    assert client.check_mirror()["total"] == 0


def test_delete_of_an_unselected_memo_leaves_the_selection_and_says_when_its_index_shifts(client):
    a, b, c, d = create_all(client, ["a", "b", "c", "d"])   # list: d c b a
    client.call("memo/select", {"id": b["id"]})            # index 2
    notes, result = client.call_notes("memo/delete", {"id": d["id"]})   # above: b moves up
    assert params_of(notes, "list/didRemove") == [{"index": 0, "id": d["id"]}]
    assert params_of(notes, "selection/didChange") == [{"id": b["id"], "index": 1}]
    assert "detail/didShow" not in methods_of(notes) and "detail/didClear" not in methods_of(notes)
    assert result["selected"]["id"] == b["id"]
    client.check_mirror()
    notes, result = client.call_notes("memo/delete", {"id": a["id"]})   # below: b stays at 1
    assert params_of(notes, "list/didRemove") == [{"index": 2, "id": a["id"]}]
    assert "selection/didChange" not in methods_of(notes)
    assert "detail/didShow" not in methods_of(notes)
    assert result["selected"]["id"] == b["id"]
    client.check_mirror()


def test_delete_of_an_unknown_or_deleted_memo(client):
    a, = create_all(client, ["a"])
    client.call("memo/delete", {"id": a["id"]})
    for memo_id in (a["id"], "00000000-0000-4000-8000-000000000002"):
        error = client.error_of("memo/delete", {"id": memo_id})
        assert error["code"] == MEMO_NOT_FOUND
    assert client.error_of("memo/select", {"id": a["id"]})["code"] == MEMO_NOT_FOUND
    assert client.error_of("memo/update", {"id": a["id"], "text": "back?"})["code"] == MEMO_NOT_FOUND
    client.check_mirror()


# -- rule S5: blank memos --------------------------------------------------------------------------------

def test_blank_memo_is_discarded_when_the_selection_moves(client):
    keep, = create_all(client, ["keep me"])
    for blank_text in ["", "   \n\t  \r\n "]:
        blank = client.create(blank_text)
        notes, _ = client.call_notes("memo/select", {"id": keep["id"]})
        assert params_of(notes, "list/didRemove") == [{"index": 0, "id": blank["id"]}]
        assert_selected_and_shown(notes, keep, 0)
        assert client.error_of("memo/select", {"id": blank["id"]})["code"] == MEMO_NOT_FOUND
        assert client.check_mirror()["total"] == 1


def test_blank_memo_is_discarded_when_another_memo_is_created(client):
    blank = client.create("")
    notes, result = client.call_notes("memo/create", {"text": "real text"})
    assert methods_of(notes)[:2] == ["list/didRemove", "list/didInsert"]
    assert params_of(notes, "list/didRemove") == [{"index": 0, "id": blank["id"]}]
    assert params_of(notes, "list/didInsert")[0]["index"] == 0
    listing = client.check_mirror()
    assert [r["id"] for r in listing["rows"]] == [result["memo"]["id"]]
    # Two blank memos in a row: only the latest one remains.
    first_blank = client.create("")
    second_blank = client.create("")
    listing = client.check_mirror()
    ids = [r["id"] for r in listing["rows"]]
    assert first_blank["id"] not in ids and second_blank["id"] in ids


def test_memo_edited_to_blank_is_discarded_when_the_selection_moves(client):
    a, b = create_all(client, ["a", "b"])
    client.call("memo/update", {"id": b["id"], "text": "  \n "})
    client.check_mirror()
    notes, _ = client.call_notes("memo/select", {"id": a["id"]})
    assert params_of(notes, "list/didRemove") == [{"index": 0, "id": b["id"]}]
    listing = client.check_mirror()
    assert [r["id"] for r in listing["rows"]] == [a["id"]]


def test_blank_memo_is_kept_while_it_stays_selected_or_gets_text(client):
    other, = create_all(client, ["other"])
    blank = client.create("")
    # Searching, listing and re-selecting it do not move the selection away.
    client.call("memo/search", {"query": "oth"})
    client.call("memo/search", {"query": ""})
    client.call("memo/select", {"id": blank["id"]})
    assert blank["id"] in [r["id"] for r in client.check_mirror()["rows"]]
    # Once it has text, moving away keeps it.
    client.call("memo/update", {"id": blank["id"], "text": "not blank any more"})
    notes, _ = client.call_notes("memo/select", {"id": other["id"]})
    assert "list/didRemove" not in methods_of(notes)
    assert client.check_mirror()["total"] == 2


def test_a_blank_memo_that_is_not_selected_is_not_discarded(client):
    a, b = create_all(client, ["a", "b"])   # b selected
    client.call("memo/update", {"id": a["id"], "text": ""})   # a blank, but not selected
    client.call("memo/select", {"id": b["id"]})
    client.create("c")
    listing = client.check_mirror()
    assert a["id"] in [r["id"] for r in listing["rows"]]


# -- rule S6: the filter follows every change --------------------------------------------------------------

def test_filter_reflects_update_and_delete_at_once(client):
    apple1, banana, apple2 = create_all(client, ["apple one", "banana", "apple two"])
    result = client.call("memo/search", {"query": "APPLE"})
    assert result["total"] == 2 and result["query"] == "APPLE"
    client.check_mirror()
    # A memo that starts matching enters the filtered list.
    notes, _ = client.call_notes("memo/update", {"id": banana["id"], "text": "banana with apple"})
    assert params_of(notes, "list/didInsert") == [{"index": 0, "row": params_of(notes, "list/didInsert")[0]["row"]}]
    assert params_of(notes, "list/didInsert")[0]["row"]["id"] == banana["id"]
    assert client.check_mirror()["total"] == 3
    # A memo that stops matching leaves it.
    notes, _ = client.call_notes("memo/update", {"id": apple1["id"], "text": "cherry"})
    removed = params_of(notes, "list/didRemove")
    assert removed and removed[0]["id"] == apple1["id"]
    assert "list/didInsert" not in methods_of(notes) and "list/didUpdate" not in methods_of(notes)
    assert client.check_mirror()["total"] == 2
    # A matching memo that changes but still matches moves within it.
    notes, _ = client.call_notes("memo/update", {"id": apple2["id"], "text": "apple two!"})
    assert params_of(notes, "list/didUpdate")[0]["row"]["id"] == apple2["id"]
    assert params_of(notes, "list/didUpdate")[0]["toIndex"] == 0
    client.check_mirror()
    # A change to a memo outside the filter says nothing about the list.
    notes, _ = client.call_notes("memo/update", {"id": apple1["id"], "text": "cherry pie"})
    assert [m for m in methods_of(notes) if m.startswith("list/")] == []
    client.check_mirror()
    # A delete inside the filter removes the row.
    notes, _ = client.call_notes("memo/delete", {"id": banana["id"]})
    assert params_of(notes, "list/didRemove")[0]["id"] == banana["id"]
    assert client.check_mirror()["total"] == 1
    # A delete outside the filter says nothing about the list.
    notes, _ = client.call_notes("memo/delete", {"id": apple1["id"]})
    assert [m for m in methods_of(notes) if m.startswith("list/")] == []
    client.check_mirror()
    # Clearing the filter shows everything left.
    result = client.call("memo/search", {"query": ""})
    assert result["total"] == 1
    assert client.check_mirror()["total"] == 1


def test_selected_memo_leaving_the_filter_stays_selected_with_index_null(client):
    alpha, beta = create_all(client, ["alpha", "beta"])     # beta selected at 0
    notes, result = client.call_notes("memo/search", {"query": "alpha"})
    assert params_of(notes, "list/didReset") == [{"total": 1}]
    assert params_of(notes, "selection/didChange") == [{"id": beta["id"], "index": None}]
    assert "detail/didClear" not in methods_of(notes) and "detail/didShow" not in methods_of(notes)
    assert [r["id"] for r in result["rows"]] == [alpha["id"]]
    client.check_mirror()
    # It can still be edited, and it enters the list when it starts matching.
    notes, _ = client.call_notes("memo/update", {"id": beta["id"], "text": "beta, now with alpha"})
    assert params_of(notes, "list/didInsert")[0]["row"]["id"] == beta["id"]
    assert params_of(notes, "selection/didChange") == [{"id": beta["id"], "index": 0}]
    client.check_mirror()
    # Editing it out of the filter again: it leaves the list, stays selected, index null.
    notes, _ = client.call_notes("memo/update", {"id": beta["id"], "text": "beta alone"})
    assert params_of(notes, "list/didRemove")[0]["id"] == beta["id"]
    assert params_of(notes, "selection/didChange") == [{"id": beta["id"], "index": None}]
    assert "detail/didClear" not in methods_of(notes)
    client.check_mirror()
    notes, _ = client.call_notes("memo/search", {"query": ""})
    assert params_of(notes, "selection/didChange") == [{"id": beta["id"], "index": 0}]
    client.check_mirror()


def test_search_results_are_the_first_page_of_the_filtered_list(client):
    create_all(client, [f"note {i}" for i in range(120)] + ["other"])
    result = client.call("memo/search", {"query": "note"})
    assert result["total"] == 120
    assert len(result["rows"]) == 100
    assert result["rows"] == client.call("memo/list", {})["rows"]
    client.check_mirror()

"""The mirror (rule S7) and the notification queue: current when a request returns, re-fetched after a
reset, self-checking against notifications that do not fit, and safe to use from several threads."""

from __future__ import annotations

import threading

import pytest

from cloudnotes_client import Mirror, Notification, RequestTimeoutError, Selection
from conftest import make_entries, mirror_matches_list


def test_the_mirror_equals_the_list_after_every_kind_of_request(client):
    a = client.create("alpha\nfirst")
    mirror_matches_list(client)
    b = client.create("beta\nsecond")
    mirror_matches_list(client)
    client.update(a.id, "alpha\nedited")
    mirror_matches_list(client)
    client.select(b.id)
    mirror_matches_list(client)
    client.search("alpha")
    mirror_matches_list(client)
    client.update(b.id, "beta matches alpha now")
    mirror_matches_list(client)
    client.import_memos(make_entries(3, "alpha import"))
    mirror_matches_list(client)
    client.delete(a.id)
    mirror_matches_list(client)
    client.clear_search()
    mirror_matches_list(client)
    client.delete(b.id)
    mirror_matches_list(client)


def test_notifications_are_applied_before_the_response_completes(client):
    seen = []
    pending = client.connection.request(
        "memo/create", {"text": "ordered"},
        on_response=lambda request, response: seen.append((client.mirror.ids, client.mirror.selection)))
    memo_id = pending.result(10)["memo"]["id"]
    assert seen == [((memo_id,), Selection(memo_id, 0))]


def test_a_reset_is_refetched_before_the_request_returns_even_beyond_one_page(client):
    client.import_memos(make_entries(2500))
    assert not client.mirror.stale and client.mirror.total == 2500
    result = client.search("generated")          # 2500 matches: more than the 100 rows of the answer
    assert len(result.rows) == 100 and client.mirror.total == 2500
    assert client.mirror.rows[:100] == result.rows
    mirror_matches_list(client)


def test_a_background_import_leaves_the_mirror_stale_until_sync(client):
    call = client.begin_import_memos(make_entries(5))
    reset = client.wait_for_notification("list/didReset", timeout=30)
    assert reset.params == {"total": 5}
    assert client.mirror.stale and client.mirror.rows is None and client.mirror.total == 5
    client.sync()
    assert not client.mirror.stale and len(client.mirror.rows) == 5
    assert call.result().imported == 5
    mirror_matches_list(client)


def test_the_queue_can_be_waited_on_and_drained(client):
    client.drain_notifications()
    memo = client.create("queued")
    shown = client.wait_for_notification("detail/didShow", timeout=1)
    assert shown.params["memo"]["id"] == memo.id
    first = client.next_notification(timeout=1)
    assert first.method == "list/didInsert", "wait_for_notification leaves the others queued, in order"
    assert [n.method for n in client.drain_notifications()] == ["selection/didChange"]
    assert client.drain_notifications() == []
    with pytest.raises(RequestTimeoutError):
        client.next_notification(timeout=0.05)


def test_a_full_queue_drops_the_oldest_notifications(make_client):
    client = make_client(queue_size=3)
    client.create("one")
    client.create("two")
    assert [n.method for n in client.drain_notifications()] == ["list/didInsert", "selection/didChange",
                                                                "detail/didShow"]
    assert client.mirror.total == 2, "the mirror does not depend on the queue"


def test_requests_from_several_threads_are_matched_to_their_responses(client):
    failures = []

    def work(worker):
        try:
            for n in range(10):
                memo = client.create(f"worker {worker} memo {n}")
                assert memo.text == f"worker {worker} memo {n}"
                again = client.update(memo.id, memo.text + "\nedited", base_version=1)
                assert (again.id, again.version) == (memo.id, 2)
        except Exception as error:  # collected: an assert in a thread would be lost
            failures.append(error)
    threads = [threading.Thread(target=work, args=(w,)) for w in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert failures == []
    assert client.mirror.total == 40
    mirror_matches_list(client)


# ---------------------------------------------------------------------------------------------------
# The mirror on its own, fed notifications by hand
# ---------------------------------------------------------------------------------------------------

def _row(memo_id, title):
    return {"id": memo_id, "title": title, "preview": "", "modifiedAt": "2026-01-01T00:00:00.000Z",
            "displayDate": "January 1, 2026"}


def _loaded_mirror():
    mirror = Mirror()
    mirror.observe_response("memo/list", {}, {"result": {"total": 2, "rows": [_row("a", "A"), _row("b", "B")]}})
    assert mirror.ids == ("a", "b")
    return mirror


def test_a_mirror_applies_inserts_updates_and_removes():
    mirror = _loaded_mirror()
    mirror.apply(Notification("list/didInsert", {"index": 1, "row": _row("c", "C")}))
    mirror.apply(Notification("list/didUpdate", {"fromIndex": 2, "toIndex": 0, "row": _row("b", "B2")}))
    mirror.apply(Notification("list/didRemove", {"index": 1, "id": "a"}))
    mirror.apply(Notification("selection/didChange", {"id": "c", "index": 1}))
    assert [(r.id, r.title) for r in mirror.rows] == [("b", "B2"), ("c", "C")]
    assert mirror.selection == Selection("c", 1)
    assert mirror.problems == []


@pytest.mark.parametrize("note", [
    Notification("list/didRemove", {"index": 5, "id": "a"}),
    Notification("list/didRemove", {"index": 0, "id": "b"}),
    Notification("list/didUpdate", {"fromIndex": 0, "toIndex": 0, "row": _row("b", "B")}),
    Notification("list/didInsert", {"index": 0, "row": _row("a", "A again")}),
    Notification("list/didInsert", {"index": 3, "row": _row("z", "Z")}),
    Notification("list/didInsert", {"index": 0}),
])
def test_a_mirror_records_list_notifications_that_do_not_fit_and_goes_stale(note):
    mirror = _loaded_mirror()
    mirror.apply(note)
    assert mirror.problems and mirror.stale


@pytest.mark.parametrize("note", [
    Notification("selection/didChange", {"id": "a", "index": 1}),
    Notification("selection/didChange", {"id": "a", "index": None}),
    Notification("detail/didShow", {"editable": True, "memo": {"id": "a"}}),
    Notification("detail/didClear", {"editable": True}),
    Notification("list/didShuffle", {}),
])
def test_a_mirror_records_other_notifications_that_do_not_fit(note):
    mirror = _loaded_mirror()
    mirror.apply(note)
    assert mirror.problems


def test_a_reset_makes_the_mirror_stale_and_a_wrong_total_is_recorded():
    mirror = _loaded_mirror()
    mirror.apply(Notification("list/didReset", {"total": 3}))
    assert mirror.stale and mirror.total == 3
    rows = [_row("a", "A"), _row("b", "B")]
    mirror.observe_response("memo/list", {"offset": 0}, {"result": {"total": 2, "rows": rows}})
    assert not mirror.stale
    assert any("list/didReset said 3" in problem for problem in mirror.problems)

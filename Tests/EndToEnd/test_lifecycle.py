"""The LSP-style lifecycle: initialize, initialized, shutdown, exit, end of input, cancellation, progress."""

import time

from cnsupport.schema import (CLIENT_NOTIFICATIONS, IMPORT_INVALID, INVALID_PARAMS, INVALID_REQUEST,
                              REQUEST_CANCELLED, REQUEST_METHODS, SERVER_NOTIFICATIONS, SERVER_NOT_INITIALIZED)
from cnsupport.session import make_entries, methods_of, params_of, wait_for_progress_report, write_entries


def send_file_import(srv, folder, count: int, prefix: str, **params):
    """Sends memo/import of a file of `count` generated memos (written in `folder`); returns its id."""
    path = write_entries(folder / f"{prefix}.json", make_entries(count, prefix))
    return srv.send_request("memo/import", {"path": str(path), **params})


def seed(servers, texts):
    """Creates memos in the default store through a first server, which then shuts down cleanly."""
    first = servers.session()
    memos = [first.create(text) for text in texts]
    assert first.shutdown_and_exit() == 0
    return memos


# -- before initialize ---------------------------------------------------------------------------------

def test_requests_before_initialize_get_server_not_initialized(server):
    for method, params in [("memo/list", {}), ("memo/create", {"text": "x"}), ("shutdown", None),
                           ("memo/search", {"query": "a"}), ("no/such/method", {})]:
        error = server.error_of(method, params)
        assert error["code"] == SERVER_NOT_INITIALIZED, (method, error)
    # Nothing was created by the refused memo/create.
    server.initialize()
    assert server.list_all()["total"] == 0


def test_notifications_before_initialize_are_ignored(server):
    server.notify("initialized", {})
    server.notify("some/unknown", {"x": 1})
    assert server.error_of("memo/list", {})["code"] == SERVER_NOT_INITIALIZED
    result, _ = server.initialize()
    assert result["serverInfo"]["name"]


def test_initialize_result_lists_every_method(server):
    result, _ = server.initialize(initialized=False)
    assert result["protocolVersion"]
    assert result["serverInfo"]["name"] == "cloudnotes"
    assert result["serverInfo"]["version"]
    capabilities = result["capabilities"]
    assert set(capabilities["requests"]) == REQUEST_METHODS
    assert set(capabilities["notifications"]) == CLIENT_NOTIFICATIONS
    assert set(capabilities["serverNotifications"]) == SERVER_NOTIFICATIONS
    assert set(capabilities["shareFormats"]) == {"text", "markdown", "json"}
    assert set(capabilities["exportFormats"]) == {"json", "markdown"}
    # Every advertised request is answered (not -32601) once initialized.
    server.notify("initialized", {})
    for method in capabilities["requests"]:
        if method in ("initialize", "shutdown"):
            continue
        _, response = server.request(method, {})
        if "error" in response:
            assert response["error"]["code"] != -32601, (method, response)


def test_initialize_refuses_an_unknown_time_zone(server):
    error = server.error_of("initialize", {"timeZone": "Mars/Olympus_Mons"})
    assert error["code"] == INVALID_PARAMS
    assert error["data"]["param"] == "timeZone"
    # The failed initialize did not start a session; a correct one still can.
    server.initialize()


# -- rule S1 ---------------------------------------------------------------------------------------------

def test_rule_s1_empty_store_clears_the_detail(server):
    _, notes = server.initialize()
    assert "detail/didClear" in methods_of(notes)
    assert params_of(notes, "detail/didClear") == [{"editable": False}]
    assert "detail/didShow" not in methods_of(notes)
    for change in params_of(notes, "selection/didChange"):
        assert change == {"id": None, "index": None}


def test_rule_s1_newest_memo_selected_and_shown_after_initialized(servers):
    memos = seed(servers, ["oldest memo", "middle memo", "newest memo"])
    second = servers.start()
    second.initialize(initialized=False)
    # Nothing is selected before `initialized`.
    notes, _ = second.request("memo/list", {})
    assert methods_of(notes) == []
    second.notify("initialized", {})
    notes, listing = second.request("memo/list", {})
    newest = memos[-1]
    assert listing["result"]["rows"][0]["id"] == newest["id"]
    assert params_of(notes, "selection/didChange") == [{"id": newest["id"], "index": 0}]
    shows = params_of(notes, "detail/didShow")
    assert len(shows) == 1 and shows[0]["editable"] is True
    assert shows[0]["memo"]["id"] == newest["id"]
    assert shows[0]["memo"]["text"] == "newest memo"
    assert "detail/didClear" not in methods_of(notes)
    # A second `initialized` changes nothing.
    second.notify("initialized", {})
    notes, _ = second.request("memo/list", {})
    assert methods_of(notes) == []


def test_locale_and_time_zone_shape_display_dates_and_placeholders(servers):
    korean = servers.start()
    korean.initialize(locale="ko-KR", time_zone="Asia/Seoul")
    korean.call("memo/import", {"memos": [{"title": "날짜", "body": "", "last_modified": 1608651333}]})
    row = korean.call("memo/list", {})["rows"][0]
    # 2020-12-22T15:35:33Z is 2020-12-23 00:35 in Seoul.
    assert row["modifiedAt"] == "2020-12-22T15:35:33.000Z"
    assert "2020년 12월 23일" in row["displayDate"], row["displayDate"]
    blank = korean.create("")
    assert blank["title"] == "새로운 메모"
    assert korean.shutdown_and_exit() == 0

    english = servers.start()
    english.initialize(locale="en-US", time_zone="UTC")
    rows = english.call("memo/list", {})["rows"]
    dated = [r for r in rows if r["title"] == "날짜"][0]
    assert "December 22, 2020" in dated["displayDate"], dated["displayDate"]
    assert english.create("")["title"] == "New Memo"


# -- initialize twice, shutdown, exit ----------------------------------------------------------------

def test_second_initialize_is_refused(server):
    server.initialize()
    error = server.error_of("initialize", {"locale": "ko-KR"})
    assert error["code"] == INVALID_REQUEST
    # The session goes on, still in English.
    assert server.create("")["title"] == "New Memo"


def test_requests_after_shutdown_are_refused_and_exit_code_is_0(server):
    server.initialize()
    server.create("kept")
    assert server.call("shutdown") is None
    for method, params in [("memo/list", {}), ("memo/create", {"text": "late"}), ("initialize", {}),
                           ("shutdown", None)]:
        error = server.error_of(method, params)
        assert error["code"] == INVALID_REQUEST, (method, error)
    server.notify("exit")
    assert server.wait() == 0


def test_exit_without_shutdown_exits_1(server):
    server.initialize()
    server.notify("exit")
    assert server.wait() == 1


def test_exit_before_initialize_exits_1(server):
    server.notify("exit")
    assert server.wait() == 1


def test_no_subcommand_serves_too(servers):
    plain = servers.session(use_serve=False)
    plain.create("via the default subcommand")
    assert plain.shutdown_and_exit() == 0
    assert servers.session().list_all()["total"] == 1  # a fresh server on the same store


def test_end_of_input_exits_0(server):
    server.initialize()
    server.create("before the end")
    server.close_stdin()
    assert server.read_until_eof() == []
    assert server.wait() == 0


def test_end_of_input_finishes_an_in_flight_import(servers, tmp_root):
    first = servers.session()
    request_id = send_file_import(first, tmp_root, 10_000, "inflight")
    first.close_stdin()
    messages = first.read_until_eof(timeout=90)
    replies = [m for m in messages if m.get("id") == request_id]
    assert len(replies) == 1 and replies[0].get("result") == {"imported": 10_000}, replies
    assert first.wait(30) == 0
    assert servers.session().list_all()["total"] == 10_000  # a fresh server on the same store


def test_shutdown_waits_for_a_running_import(servers, tmp_root):
    srv = servers.session()
    import_id = send_file_import(srv, tmp_root, 10_000, "shutdown")
    shutdown_id = srv.send_request("shutdown")
    order = []
    deadline = time.monotonic() + 90
    while len(order) < 2:
        message = srv.next_message(max(0.1, deadline - time.monotonic()))
        if "id" in message:
            order.append(message["id"])
            if message["id"] == import_id:
                assert message.get("result") == {"imported": 10_000}, message
    assert order == [import_id, shutdown_id]
    srv.notify("exit")
    assert srv.wait() == 0
    assert servers.session().list_all()["total"] == 10_000  # a fresh server on the same store


# -- cancellation ----------------------------------------------------------------------------------------

def expect_cancelled_or_complete(srv, request_id, count: int) -> int:
    """A cancelled import is answered: -32800 with nothing imported, or (too late to cancel) all of it."""
    _, response = srv.wait_response(request_id, timeout=120)
    total = srv.list_all()["total"]
    if "error" in response:
        assert response["error"]["code"] == REQUEST_CANCELLED, response
        assert total == 0, "a cancelled import must import nothing"
    else:
        assert response["result"] == {"imported": count}
        assert total == count
    return total


def test_cancel_a_running_import_still_gets_a_reply(servers, big_import_file):
    srv = servers.session()
    request_id = srv.send_request("memo/import", {"path": str(big_import_file)})
    srv.notify("$/cancelRequest", {"id": request_id})
    total = expect_cancelled_or_complete(srv, request_id, 100_000)
    # The server goes on.
    srv.create("after the cancel")
    assert srv.list_all()["total"] == total + 1


def test_cancel_while_an_import_stores_memos(servers, tmp_root):
    srv = servers.session()
    request_id = send_file_import(srv, tmp_root, 30_000, "cancel", workDoneToken="cancel-me")
    wait_for_progress_report(srv, "cancel-me", minimum=1)
    srv.notify("$/cancelRequest", {"id": request_id})
    expect_cancelled_or_complete(srv, request_id, 30_000)


def test_cancel_an_inline_import_still_gets_a_reply(client):
    request_id = client.send_request("memo/import", {"memos": make_entries(30_000, "inline")})
    client.notify("$/cancelRequest", {"id": request_id})
    expect_cancelled_or_complete(client, request_id, 30_000)


def test_cancel_sent_before_the_request_still_gets_a_reply(client):
    client.notify("$/cancelRequest", {"id": "later-request"})
    _, response = client.request("memo/list", {}, id="later-request")
    if "error" in response:
        assert response["error"]["code"] == REQUEST_CANCELLED
    else:
        assert response["result"]["total"] == 0
    # Exactly one reply, and the next request with a new id is answered normally.
    assert client.call("memo/list", {})["total"] == 0


def test_cancel_of_an_answered_or_unknown_request_is_harmless(client):
    memo = client.create("finished")
    client.notify("$/cancelRequest", {"id": 1})
    client.notify("$/cancelRequest", {"id": "never-sent"})
    client.notify("$/cancelRequest", {"id": {"bad": "id"}})
    client.notify("$/cancelRequest", {})
    assert client.call("memo/select", {"id": memo["id"]})["memo"]["text"] == "finished"
    client.check_mirror()


# -- work-done progress ------------------------------------------------------------------------------

def check_progress(notes, token):
    progress = [n["params"] for n in notes if n["method"] == "$/progress"]
    assert progress, "no $/progress before the reply"
    assert all(p["token"] == token for p in progress)
    kinds = [p["value"]["kind"] for p in progress]
    assert kinds[0] == "begin" and kinds[-1] == "end", kinds
    assert set(kinds[1:-1]) <= {"report"}, kinds
    assert isinstance(progress[0]["value"].get("title"), str) and progress[0]["value"]["title"]
    percentages = [p["value"]["percentage"] for p in progress[1:-1] if "percentage" in p["value"]]
    assert percentages == sorted(percentages), percentages
    assert all(0 <= p <= 100 for p in percentages)
    return kinds


def test_import_reports_work_done_progress(client):
    notes, result = client.call_notes(
        "memo/import", {"memos": make_entries(5_000, "progress"), "workDoneToken": "import-token-1"}, timeout=60)
    assert result == {"imported": 5_000}
    kinds = check_progress(notes, "import-token-1")
    assert "report" in kinds
    # Without a token there is no progress.
    notes, _ = client.call_notes("memo/import", {"memos": make_entries(3, "quiet")})
    assert "$/progress" not in methods_of(notes, include_progress=True)
    client.check_mirror()


def test_progress_that_began_always_ends_also_on_failure_or_cancel(servers, tmp_root):
    """LSP work-done progress: every `begin` is closed by an `end`, or the client's progress UI never goes away."""
    srv = servers.session()
    notes, response = srv.request("memo/import", {"memos": [{"title": "ok", "body": "", "last_modified": 1}, {"bad": 1}],
                                                  "workDoneToken": "failing"})
    assert response["error"]["code"] == IMPORT_INVALID
    kinds = [n["params"]["value"]["kind"] for n in notes if n["method"] == "$/progress"]
    assert kinds == [] or (kinds[0] == "begin" and kinds[-1] == "end"), f"a failed import's progress: {kinds}"

    request_id = send_file_import(srv, tmp_root, 30_000, "cancelled", workDoneToken="cancelled")
    wait_for_progress_report(srv, "cancelled", minimum=1)
    srv.notify("$/cancelRequest", {"id": request_id})
    _, response = srv.wait_response(request_id, timeout=60)
    kinds = [m["params"]["value"]["kind"] for m in srv.received
             if m.get("method") == "$/progress" and m["params"]["token"] == "cancelled"]
    assert kinds[0] == "begin" and kinds[-1] == "end", f"a cancelled import's progress: {kinds}; reply {response}"


def test_export_reports_work_done_progress(client, tmp_root):
    client.call("memo/import", {"memos": make_entries(50, "exported")})
    notes, result = client.call_notes(
        "memo/export", {"path": str(tmp_root / "progress.json"), "format": "json", "workDoneToken": 42})
    assert result["exported"] == 50
    check_progress(notes, 42)


# -- long work never blocks interactive requests ---------------------------------------------------------

def still_pending(srv, request_id) -> bool:
    """True while `request_id` has not been answered (its reply is not among the messages read so far)."""
    return not any(m.get("id") == request_id and "method" not in m for m in srv.received)


def test_interactive_requests_are_answered_while_a_big_import_runs(servers, big_import_file):
    srv = servers.session()
    memo = srv.create("interactive memo")
    import_id = srv.send_request("memo/import", {"path": str(big_import_file), "workDoneToken": "big"})
    wait_for_progress_report(srv, "big", minimum=1)
    # Reads first, then writes: each must be answered while the import is still storing memos.
    for method, params in [("memo/list", {}), ("memo/search", {"query": "interactive"}), ("memo/search", {"query": ""}),
                           ("memo/select", {"id": memo["id"]}), ("memo/share", {"id": memo["id"]}),
                           ("memo/create", {"text": "typed during the import"}),
                           ("memo/update", {"id": memo["id"], "text": "edited during the import"}),
                           ("memo/list", {"limit": 5})]:
        request_id = srv.send_request(method, params)
        _, response = srv.wait_response(request_id, timeout=120)
        assert "result" in response, response
        assert still_pending(srv, import_id), (
            f"{method} was answered only when the import had stored everything: interactive requests wait "
            f"behind the import")
    _, response = srv.wait_response(import_id, timeout=120)
    assert response["result"] == {"imported": 100_000}
    listing = srv.list_all()
    assert listing["total"] == 100_002

"""The lifecycle (section 2): initialize, initialized (rule S1), shutdown, exit, and their errors."""

from __future__ import annotations

import pytest

from cloudnotes_client import (InvalidParams, InvalidRequest, Limits, Selection, ServerDiedError,
                               ServerNotInitialized)
from conftest import collect, methods


def test_initialize_reports_the_protocol_capabilities_and_limits(client, schema):
    info = client.server_info
    assert info.protocol_version == schema["protocolVersion"] == "1.2"
    assert info.server_name == "cloudnotes" and info.server_version
    by_kind = {(d["kind"], d["direction"].startswith("server")): set() for d in schema["methods"].values()}
    for name, description in schema["methods"].items():
        by_kind[(description["kind"], description["direction"].startswith("server"))].add(name)
    assert set(info.requests) == by_kind[("request", False)]
    assert set(info.notifications) == by_kind[("notification", False)]
    assert set(info.server_notifications) == by_kind[("notification", True)]
    assert set(info.share_formats) == {"text", "markdown", "json"}
    assert set(info.export_formats) == {"json", "markdown"}
    assert info.limits == Limits(max_message_bytes=33554432, max_memo_bytes=16777216, max_nesting_depth=64,
                                 max_list_limit=1000)


def test_initialized_on_an_empty_store_clears_the_detail_pane(make_client):
    client = make_client(initialize=False)
    client.initialize(send_initialized=False)
    assert client.drain_notifications() == [], "nothing may happen before `initialized`"
    _, notes = collect(client, client.send_initialized)
    assert methods(notes) == ["detail/didClear"]
    assert notes[0].params == {"editable": False}
    assert client.mirror.selection == Selection(None, None)
    assert client.mirror.detail is None and client.mirror.rows == ()


def test_initialized_selects_and_shows_the_newest_memo(make_client):
    with make_client() as first:
        first.create("older")
        newer = first.create("newer")
    client = make_client()
    notes = client.drain_notifications()
    assert methods(notes) == ["selection/didChange", "detail/didShow"]
    assert client.mirror.selection == Selection(newer.id, 0)
    assert client.mirror.detail == newer
    assert [row.title for row in client.mirror.rows] == ["newer", "older"]


def test_requests_before_initialize_are_refused(make_client):
    client = make_client(initialize=False)
    with pytest.raises(ServerNotInitialized) as refused:
        client.list()
    assert refused.value.code == -32002 and refused.value.message
    client.initialize()
    assert client.list().total == 0


def test_a_refused_initialize_leaves_the_server_uninitialized(make_client):
    client = make_client(initialize=False)
    with pytest.raises(InvalidParams) as refused:
        client.initialize(time_zone="Mars/Olympus_Mons")
    assert refused.value.code == -32602 and refused.value.param == "timeZone"
    with pytest.raises(ServerNotInitialized):
        client.list()
    client.initialize(time_zone="Asia/Seoul")
    assert client.list().total == 0


def test_a_second_initialize_is_refused_and_the_session_goes_on(client):
    with pytest.raises(InvalidRequest) as refused:
        client.initialize()
    assert refused.value.code == -32600
    assert client.create("still works").title == "still works"


def test_after_shutdown_only_exit_is_accepted(client):
    client.create("x")
    client.shutdown()
    with pytest.raises(InvalidRequest) as refused:
        client.list()
    assert refused.value.code == -32600
    with pytest.raises(InvalidRequest):
        client.shutdown()
    client.exit()
    assert client.transport.wait(10) == 0


def test_close_shuts_down_and_exits_with_code_0_then_requests_fail(client):
    client.create("x")
    assert client.close() == 0
    assert client.close() == 0, "close() is idempotent"
    with pytest.raises(ServerDiedError):
        client.list()


def test_exit_without_shutdown_ends_with_code_1(client):
    client.exit()
    assert client.transport.wait(10) == 1
    with pytest.raises(ServerDiedError):
        client.create("too late")


def test_end_of_input_before_initialize_ends_with_code_0(make_client):
    client = make_client(initialize=False)
    assert client.close() == 0


def test_the_context_manager_closes_and_the_memos_persist(make_client):
    with make_client() as client:
        memo = client.create("kept\nacross restarts")
    assert client.returncode == 0
    with make_client() as again:
        assert again.list().ids == (memo.id,)
        assert again.share(memo.id).text == "kept\nacross restarts"


def test_the_session_locale_and_time_zone_shape_dates_and_placeholders(make_client, tmp_path):
    entry = {"title": "장보기 목록", "body": "우유", "last_modified": 1608651333}
    korean = make_client(tmp_path / "ko.sqlite", locale="ko-KR", time_zone="Asia/Seoul")
    korean.import_memos([entry])
    assert korean.list().rows[0].display_date == "2020년 12월 23일 오전 12:35"
    assert korean.create("").title == "새로운 메모"
    english = make_client(tmp_path / "en.sqlite")
    english.import_memos([entry, {"title": "t", "body": "", "last_modified": 1767225600}])
    assert [r.display_date for r in english.list().rows] == ["January 1, 2026 at 12:00\u202fAM",
                                                             "December 22, 2020 at 3:35\u202fPM"]
    assert english.create(" \n").title == "New Memo"

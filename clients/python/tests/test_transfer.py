"""Import and export (inline, files, folders), work-done progress, cancellation and background work."""

from __future__ import annotations

import json
import os
import threading
from datetime import datetime, timezone

import pytest

from cloudnotes_client import (ExportFailed, ImportInvalid, InvalidParams, Progress, RequestCancelled,
                               RequestTimeoutError, Selection)
from conftest import BIG_IMPORT_SIZE, collect, methods, mirror_matches_list

SAMPLE = [
    {"title": "장보기 목록", "body": "우유 2통\n계란 한 판", "last_modified": 1608651333},
    {"title": "Reading list", "body": "", "last_modified": 1608651333},
    {"title": "ignored", "body": "ignored", "last_modified": 1767225600, "text": "Alpha\r\nfirst ✅\r\n",
     "id": "0b6a3b47-0000-4000-8000-000000000000"},
]


def test_an_inline_import_reports_progress_and_resets_the_list(client):
    reports = []
    result, notes = collect(client, client.import_memos, SAMPLE, progress=reports.append)
    assert result.imported == 3
    assert [p.kind for p in reports][0] == "begin" and [p.kind for p in reports][-1] == "end"
    assert set(p.kind for p in reports[1:-1]) == {"report"}
    begin, last_report, end = reports[0], reports[-2], reports[-1]
    assert (begin.title, begin.percentage, begin.cancellable) == ("Importing memos", 0, True)
    assert (last_report.message, last_report.percentage) == ("3 of 3", 100)
    assert end.message == "Imported 3 memos"
    assert all(isinstance(p, Progress) and p.token == begin.token for p in reports)
    # The split-view step comes between the last report and the end, and nothing was selected before.
    kinds = [n.params["value"]["kind"] if n.method == "$/progress" else n.method for n in notes]
    assert kinds[-5:] == ["report", "list/didReset", "selection/didChange", "detail/didShow", "end"]
    assert notes[-4].params == {"total": 3}

    rows = client.mirror.rows
    assert [r.title for r in rows] == ["Alpha", "장보기 목록", "Reading list"], "newest first, then import order"
    newest = client.select(rows[0].id)
    assert newest.text == "Alpha\r\nfirst ✅\r\n" and newest.id != SAMPLE[2]["id"], "text preferred, id never reused"
    assert newest.created_at == newest.modified_at == "2026-01-01T00:00:00.000Z"
    assert client.select(rows[1].id).text == "장보기 목록\n우유 2통\n계란 한 판"
    assert client.select(rows[2].id).text == "Reading list", "the title alone when the body is empty"
    mirror_matches_list(client)


def test_an_import_without_a_token_sends_no_progress(client):
    _, notes = collect(client, client.import_memos, SAMPLE[:1])
    assert "$/progress" not in methods(notes, progress=True)


def test_an_import_keeps_the_selection_and_reports_its_shift(client):
    mine = client.create("typed now")
    client.import_memos([{"title": "later", "body": "", "last_modified": 4102444800}])
    assert client.mirror.selection == Selection(mine.id, 1)
    assert client.mirror.detail.id == mine.id
    mirror_matches_list(client)


def test_import_is_all_or_nothing(client, tmp_path):
    client.create("existing")
    bad = [SAMPLE[0], {"title": "no body", "last_modified": 1}, SAMPLE[1]]
    with pytest.raises(ImportInvalid) as refused:
        client.import_memos(bad)
    assert refused.value.code == -33003 and refused.value.index == 1 and refused.value.reason
    missing = tmp_path / "missing.json"
    with pytest.raises(ImportInvalid) as refused:
        client.import_file(missing)
    assert refused.value.path == str(missing)
    not_an_array = tmp_path / "object.json"
    not_an_array.write_text('{"title": "x"}', encoding="utf-8")
    with pytest.raises(ImportInvalid) as refused:
        client.import_file(not_an_array)
    assert refused.value.path == str(not_an_array)
    assert [r.title for r in client.list().rows] == ["existing"]


def test_import_needs_exactly_one_source(client):
    with pytest.raises(InvalidParams):
        client.request("memo/import", {})
    with pytest.raises(InvalidParams):
        client.request("memo/import", {"path": "/tmp/x.json", "memos": []})
    with pytest.raises(InvalidParams):
        client.request("memo/import", {"memos": "not an array"})


def test_export_to_json_round_trips_through_import(client, make_client, tmp_path):
    client.import_memos(SAMPLE)
    client.create("made here\n\twith a tab")
    target = tmp_path / "out" / "memos.json"
    target.parent.mkdir()
    reports = []
    result = client.export(target, "json", progress=reports.append)
    assert result.exported == 4 and result.path == str(target)
    assert [p.kind for p in reports][0] == "begin" and reports[0].title == "Exporting memos"
    assert reports[-1].kind == "end" and reports[-1].message == "Exported 4 memos"
    entries = json.loads(target.read_text(encoding="utf-8"))
    assert [e["text"] for e in entries] == [client.share(r.id).text for r in client.list().rows], "newest first"
    assert all(set(e) == {"title", "body", "last_modified", "text", "id"} for e in entries)
    assert entries[1]["last_modified"] == 1767225600

    other = make_client(tmp_path / "other.sqlite")
    assert other.import_file(target).imported == 4
    assert [other.share(r.id).text for r in other.list().rows] == [e["text"] for e in entries]


def test_export_never_replaces_a_file_without_overwrite(client, tmp_path):
    client.create("one")
    target = tmp_path / "memos.json"
    target.write_text("precious", encoding="utf-8")
    with pytest.raises(ExportFailed) as refused:
        client.export(target)
    assert refused.value.code == -33004 and refused.value.path == str(target) and refused.value.reason
    assert target.read_text(encoding="utf-8") == "precious"
    assert client.export(target, overwrite=True).exported == 1
    assert json.loads(target.read_text(encoding="utf-8"))[0]["text"] == "one"


def test_export_to_markdown_writes_one_file_per_memo(client, tmp_path):
    first = client.create("Same title\nfirst")
    second = client.create("Same title\nsecond")
    folder = tmp_path / "markdown"
    result = client.export(folder, "markdown")
    assert result.exported == 2 and result.path == str(folder)
    assert sorted(os.listdir(folder)) == ["Same title 2.md", "Same title.md"]
    # Newest first: the later file name goes to the older memo.
    assert (folder / "Same title.md").read_text(encoding="utf-8") == second.text
    assert (folder / "Same title 2.md").read_text(encoding="utf-8") == first.text
    modified = datetime.fromtimestamp(os.stat(folder / "Same title.md").st_mtime, timezone.utc)
    assert abs((modified - second.modified).total_seconds()) < 0.01
    with pytest.raises(ExportFailed):
        client.export(folder, "markdown")
    assert client.export(folder, "markdown", overwrite=True).exported == 2


def test_export_refuses_an_unknown_format(client, tmp_path):
    with pytest.raises(InvalidParams) as refused:
        client.export(tmp_path / "x.docx", "docx")
    assert refused.value.param == "format"


def test_a_running_import_can_be_cancelled_and_stores_nothing(client, big_import_file):
    client.create("before")
    started = threading.Event()
    call = client.begin_import_file(big_import_file,
                                    progress=lambda p: started.set() if p.kind == "report" else None)
    assert started.wait(30), "no progress report from the import"
    call.cancel()
    with pytest.raises(RequestCancelled) as cancelled:
        call.result()
    assert cancelled.value.code == -32800
    assert client.list().total == 1, "a cancelled import stores nothing"
    mirror_matches_list(client)


def test_interactive_requests_overtake_a_running_import(client, big_import_file):
    started = threading.Event()
    call = client.begin_import_file(big_import_file,
                                    progress=lambda p: started.set() if p.kind == "report" else None)
    assert started.wait(30)
    typed = client.create("typed while importing")
    assert not call.done(), "the create waited for the import"
    assert client.list().ids == (typed.id,), "imported memos stay hidden until the import is done"
    assert call.result().imported == BIG_IMPORT_SIZE
    assert client.mirror.total == BIG_IMPORT_SIZE + 1
    assert client.mirror.selection == Selection(typed.id, 0), "the newest memo stays selected"
    mirror_matches_list(client)


def test_a_cancellation_after_the_answer_is_ignored(client):
    pending = client.request_async("memo/create", {"text": "done"})
    pending.result(10)
    client.cancel(pending)
    client.cancel("never-used")
    assert client.create("next").title == "next"
    assert client.list().total == 2


def test_a_timeout_cancels_the_request(make_client, big_import_file):
    client = make_client()
    call = client.begin_import_file(big_import_file)
    with pytest.raises(RequestTimeoutError) as timed_out:
        call.result(timeout=0.05)       # sends $/cancelRequest
    assert isinstance(timed_out.value, TimeoutError) and timed_out.value.method == "memo/import"
    # The server still answers. The cancel races the import's commit, and the protocol promises one of
    # two outcomes, never a part: cancelled and nothing stored, or done and everything stored.
    try:
        stored = call.result(timeout=60).imported
    except RequestCancelled:
        stored = 0
    assert stored in (0, BIG_IMPORT_SIZE)
    client.shutdown()
    client.exit()
    assert client.transport.wait(10) == 0
    again = make_client()
    assert again.list().total == stored

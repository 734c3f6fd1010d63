"""memo/share, memo/import (file, inline, malformed) and memo/export (JSON round trip, Markdown folder)."""

import json
import os
from pathlib import Path

import pytest
from cloudnotes_client import Selection

from cnsupport.paths import REPO, sample_path
from cnsupport.schema import EXPORT_FAILED, IMPORT_INVALID, INVALID_PARAMS, MEMO_NOT_FOUND, REQUEST_CANCELLED
from cnsupport.session import methods_of, params_of, wait_for_progress_report


def entry_text(entry) -> str:
    """The memo text an import entry stands for: the title line, then the body."""
    if "text" in entry:
        return entry["text"]
    return entry["title"] + ("\n" + entry["body"] if entry["body"] else "")


def all_texts(client) -> list[str]:
    return [client.memo_text(row["id"]) for row in client.list_all()["rows"]]


# -- share ------------------------------------------------------------------------------------------------

def test_share_formats(client):
    memo = client.create("Shopping / errands\nmilk\r\neggs")
    text = client.call("memo/share", {"id": memo["id"]})
    assert text == client.call("memo/share", {"id": memo["id"], "format": "text"})
    assert text["text"] == "Shopping / errands\nmilk\r\neggs"
    assert text["title"] == "Shopping / errands"
    assert text["mimeType"].startswith("text/plain")
    assert text["filename"].endswith(".txt")
    assert "/" not in text["filename"] and "\\" not in text["filename"]
    assert text["filename"] != ".txt"

    markdown = client.call("memo/share", {"id": memo["id"], "format": "markdown"})
    assert markdown["mimeType"].startswith("text/markdown")
    assert markdown["filename"].endswith(".md") and "/" not in markdown["filename"]
    assert markdown["text"].startswith("# Shopping / errands\n")
    assert "milk\r\neggs" in markdown["text"]

    shared = client.call("memo/share", {"id": memo["id"], "format": "json"})
    assert shared["mimeType"] == "application/json"
    assert shared["filename"].endswith(".json")
    document = json.loads(shared["text"])
    assert document["id"] == memo["id"]
    assert document["text"] == memo["text"]
    assert document["title"] == memo["title"]
    assert document["body"] == memo["body"]
    # Sharing changes nothing.
    notes, _ = client.call_notes("memo/share", {"id": memo["id"], "format": "json"})
    assert notes == []
    client.check_mirror()


def test_share_of_blank_korean_and_odd_titles(servers):
    srv = servers.start()
    srv.initialize(locale="ko-KR", time_zone="Asia/Seoul")
    blank = srv.create("")
    shared = srv.call("memo/share", {"id": blank["id"]})
    assert shared["title"] == "새로운 메모"
    assert shared["filename"] and not shared["filename"].startswith(".")
    dotted = srv.create("../../etc/passwd\nbody")
    shared = srv.call("memo/share", {"id": dotted["id"], "format": "markdown"})
    assert "/" not in shared["filename"] and not shared["filename"].startswith(".")


def test_share_errors(client):
    memo = client.create("x")
    error = client.error_of("memo/share", {"id": memo["id"], "format": "pdf"})
    assert error["code"] == INVALID_PARAMS and error["data"]["param"] == "format"
    error = client.error_of("memo/share", {"id": "00000000-0000-4000-8000-000000000003"})
    assert error["code"] == MEMO_NOT_FOUND
    error = client.error_of("memo/share", {})
    assert error["code"] == INVALID_PARAMS and error["data"]["param"] == "id"


# -- import -----------------------------------------------------------------------------------------------

def test_import_the_sample_file(client):
    path = sample_path()
    entries = json.loads(path.read_text(encoding="utf-8"))
    notes, result = client.call_notes("memo/import", {"path": str(path)})
    assert result == {"imported": len(entries)}
    # Nothing was selected: the list is reset and the newest memo is selected and shown.
    assert params_of(notes, "list/didReset") == [{"total": len(entries)}]
    assert params_of(notes, "selection/didChange")[-1] == {"id": params_of(notes, "detail/didShow")[-1]["memo"]["id"],
                                                          "index": 0}
    listing = client.check_mirror()
    assert listing["total"] == len(entries)
    assert len({row["id"] for row in listing["rows"]}) == len(entries), "each entry is a new memo"
    assert sorted(all_texts(client)) == sorted(entry_text(e) for e in entries)
    # Titles that repeat are separate memos.
    repeated = [r for r in listing["rows"] if r["title"] == "이것은 리스트의 아이템입니다"]
    assert len(repeated) == 3
    # The entry without a title shows the first line of its body as the title.
    assert any(r["title"].startswith("제목이 빈 메모") for r in listing["rows"])
    # The timestamps are the file's.
    assert {r["modifiedAt"] for r in listing["rows"]} == {"2020-12-22T15:35:33.000Z"}
    # Importing the same file again makes new memos, never merges.
    client.call("memo/import", {"path": str(path)})
    assert client.check_mirror()["total"] == 2 * len(entries)
    # Korean search over the imported memos (each entry is there twice now).
    for query in ("메모장", "메모", "메", "동기", "우유", "Busan", "busan", "KIMCHI"):
        expected = 2 * sum(query.lower() in entry_text(e).lower() for e in entries)
        assert expected > 0
        assert client.search_total(query) == expected, query


def test_import_keeps_an_existing_selection(client):
    kept = client.create("selected before the import")
    future = 4_102_444_800   # 2100-01-01: newer than the selected memo
    notes, result = client.call_notes("memo/import", {"memos": [
        {"title": "from the future", "body": "a", "last_modified": future},
        {"title": "from the past", "body": "b", "last_modified": 1_000_000_000},
    ]})
    assert result == {"imported": 2}
    assert "list/didReset" in methods_of(notes)
    assert "detail/didShow" not in methods_of(notes), "an import leaves the selection as it was"
    assert params_of(notes, "selection/didChange") == [{"id": kept["id"], "index": 1}]
    listing = client.check_mirror()
    assert client.mirror.selection == Selection(kept["id"], 1)
    assert listing["total"] == 3


def test_import_under_a_filter_selects_the_newest_when_nothing_was_selected(client):
    client.call("memo/import", {"memos": [{"title": "older", "body": "", "last_modified": 1_000}]})
    client.check_mirror()
    client.call("memo/search", {"query": "zzz"})
    client.check_mirror()
    notes, _ = client.call_notes("memo/import", {"memos": [{"title": "newest", "body": "", "last_modified": 2_000}]})
    client.check_mirror()
    assert client.mirror.detail is not None


def test_import_inline_memos_with_exact_text(client):
    entries = [
        {"title": "Plain", "body": "body line", "last_modified": 1_600_000_000},
        {"title": "Ignored title", "body": "ignored body", "last_modified": 1_600_000_001,
         "text": "\r\n  Exact text wins\r\nwith CRLF\u0000"},
        {"title": "제목", "body": "", "last_modified": 1_600_000_002},
        {"title": "", "body": "only a body", "last_modified": 1_600_000_003},
        {"title": "With id", "body": "x", "last_modified": 1_600_000_004, "id": "00000000-0000-4000-8000-000000000009"},
    ]
    assert client.call("memo/import", {"memos": entries}) == {"imported": 5}
    assert sorted(all_texts(client)) == sorted(entry_text(e) for e in entries)
    rows = client.list_all()["rows"]
    assert [r["title"] for r in rows] == ["With id", "only a body", "제목", "Exact text wins", "Plain"]
    # The id in an entry is not reused.
    assert "00000000-0000-4000-8000-000000000009" not in [r["id"] for r in rows]
    assert client.call("memo/import", {"memos": []}) == {"imported": 0}
    client.check_mirror()


@pytest.mark.parametrize("bad_entry, index", [
    ({"title": "no body", "last_modified": 1}, 2),
    ({"body": "no title", "last_modified": 1}, 2),
    ({"title": "no date", "body": ""}, 2),
    ({"title": "string date", "body": "", "last_modified": "yesterday"}, 2),
    ({"title": "fraction", "body": "", "last_modified": 1.5}, 2),
    ({"title": "negative", "body": "", "last_modified": -1}, 2),
    ({"title": 5, "body": "", "last_modified": 1}, 2),
    ({"title": "t", "body": None, "last_modified": 1}, 2),
    ({"title": "t", "body": "b", "last_modified": 1, "text": 7}, 2),
    ("a string", 2),
    (None, 2),
    ([1, 2], 2),
])
def test_malformed_inline_import_names_the_entry_and_imports_nothing(client, bad_entry, index):
    client.create("existing")
    before = client.snapshot()
    good = {"title": "good", "body": "fine", "last_modified": 1}
    _, response = client.request("memo/import", {"memos": [good, good, bad_entry, good]})
    error = response["error"]
    assert error["code"] == IMPORT_INVALID, error
    assert error["data"]["index"] == index
    assert client.snapshot() == before, "a malformed import must import nothing"
    client.check_mirror()


def test_malformed_import_file_names_the_entry_and_imports_nothing(client, tmp_root):
    entries = json.loads(sample_path().read_text(encoding="utf-8"))
    broken = list(entries)
    broken[7] = {"title": "broken", "body": "missing its date"}
    path = tmp_root / "broken.json"
    path.write_text(json.dumps(broken, ensure_ascii=False), encoding="utf-8")
    error = client.error_of("memo/import", {"path": str(path)})
    assert error["code"] == IMPORT_INVALID
    assert error["data"]["index"] == 7
    assert client.check_mirror()["total"] == 0


def test_malformed_entry_chunks_into_a_file_names_it_and_takes_back_what_was_stored(client, tmp_root):
    # A file is stored a chunk at a time while the next is read: an entry several chunks in still
    # names its index, and the chunks stored before it are taken back.
    entries = [{"title": f"memo {i}", "body": "x" * 300, "last_modified": 1} for i in range(5000)]
    entries[4321] = {"title": "broken", "body": "missing its date"}
    path = tmp_root / "late-break.json"
    path.write_text(json.dumps(entries), encoding="utf-8")
    client.create("existing")
    before = client.snapshot()
    error = client.error_of("memo/import", {"path": str(path)})
    assert error["code"] == IMPORT_INVALID, error
    assert error["data"]["index"] == 4321
    assert client.snapshot() == before, "a malformed import must import nothing"
    client.check_mirror()


@pytest.mark.parametrize("content", [
    b"not json at all",
    b'{"title": "an object, not an array", "body": "", "last_modified": 1}',
    b"[1, 2",
    b"\xff\xfe[]",
    b"",
])
def test_import_file_that_is_not_an_array_of_memos(client, tmp_root, content):
    path = tmp_root / "bad.json"
    path.write_bytes(content)
    error = client.error_of("memo/import", {"path": str(path)})
    assert error["code"] == IMPORT_INVALID, error
    assert client.check_mirror()["total"] == 0


def test_import_errors_for_missing_files_and_bad_params(client, tmp_root):
    assert client.error_of("memo/import", {"path": str(tmp_root / "missing.json")})["code"] == IMPORT_INVALID
    assert client.error_of("memo/import", {"path": str(tmp_root)})["code"] == IMPORT_INVALID
    assert client.error_of("memo/import", {})["code"] == INVALID_PARAMS
    both = client.error_of("memo/import", {"path": str(sample_path()), "memos": []})
    assert both["code"] == INVALID_PARAMS
    error = client.error_of("memo/import", {"memos": "not an array"})
    assert error["code"] == INVALID_PARAMS and error["data"]["param"] == "memos"
    error = client.error_of("memo/import", {"path": 7})
    assert error["code"] == INVALID_PARAMS and error["data"]["param"] == "path"
    assert client.check_mirror()["total"] == 0


# -- export -----------------------------------------------------------------------------------------------

EXPORT_TEXTS = [
    "Plain title\nbody",
    "\r\n\r\nCRLF memo\r\nline two\r\n",
    "같은 제목\n첫 번째",
    "같은 제목\n두 번째",
    "emoji 😀\n🇰🇷",
    "NUL\u0000inside",
    "Slash / in: title?\nbody",
]


def test_export_json_round_trips_into_a_fresh_store(servers, tmp_root):
    first = servers.session()
    for text in EXPORT_TEXTS:
        first.create(text)
    target = tmp_root / "out" / "memos.json"
    target.parent.mkdir()
    result = first.call("memo/export", {"path": str(target), "format": "json"})
    assert result["exported"] == len(EXPORT_TEXTS)
    assert Path(result["path"]).is_absolute() and Path(result["path"]) == target
    document = json.loads(target.read_text(encoding="utf-8"))
    assert isinstance(document, list) and len(document) == len(EXPORT_TEXTS)
    listed_ids = {r["id"] for r in first.list_all()["rows"]}
    for entry in document:
        assert {"title", "body", "last_modified", "id"} <= set(entry)
        assert isinstance(entry["last_modified"], int)
        assert entry["id"] in listed_ids
    # Export changes nothing.
    assert first.list_all()["total"] == len(EXPORT_TEXTS)

    fresh = servers.session(store=tmp_root / "fresh" / "notes.sqlite")
    assert fresh.call("memo/import", {"path": str(target)}) == {"imported": len(EXPORT_TEXTS)}
    assert sorted(all_texts(fresh)) == sorted(EXPORT_TEXTS)
    # Same order (same timestamps, seconds) and new ids.
    assert not ({r["id"] for r in fresh.list_all()["rows"]} & listed_ids)


def peak_rss_mb(pid: int) -> float:
    """The process's peak resident memory (VmHWM), in MB."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmHWM:")) / 1024


def test_export_json_streams_the_memos_rather_than_holding_them(client, tmp_root):
    # 20 MB of text: built whole, the file's entries (each text twice, as title/body and text) and its
    # bytes took several times that (115 MB more); written as the memos are read, a few MB.
    line = "회의록 meeting notes, \"quoted\" and a tab\t, line after line\n"
    entries = [{"title": f"memo {i}", "body": line * 300, "last_modified": 1_700_000_000 + i} for i in range(1_000)]
    source = tmp_root / "big-import.json"
    source.write_text(json.dumps(entries, ensure_ascii=False), encoding="utf-8")
    assert client.call("memo/import", {"path": str(source)}, timeout=60) == {"imported": len(entries)}
    before = peak_rss_mb(client.proc.pid)
    target = tmp_root / "big-export.json"
    assert client.call("memo/export", {"path": str(target), "format": "json"}, timeout=60)["exported"] == len(entries)
    grown = peak_rss_mb(client.proc.pid) - before
    assert grown < 20, f"the export raised the server's peak RSS by {grown:.0f} MB for 20 MB of text"
    exported = json.loads(target.read_text(encoding="utf-8"))
    assert sorted(e["text"] for e in exported) == sorted(f"{e['title']}\n{e['body']}" for e in entries)

    # Cancelled part-way, the export leaves neither the target nor the file it was writing beside it.
    cancelled = tmp_root / "cancelled.json"
    request_id = client.send_request("memo/export", {"path": str(cancelled), "format": "json", "workDoneToken": "export"})
    wait_for_progress_report(client, "export", minimum=1)
    client.notify("$/cancelRequest", {"id": request_id})
    _, response = client.wait_response(request_id, timeout=60)
    if "error" in response:
        assert response["error"]["code"] == REQUEST_CANCELLED, response
        assert not cancelled.exists()
    else:
        assert response["result"]["exported"] == len(entries)  # it finished before the cancel came
    assert not [p.name for p in tmp_root.iterdir() if p.name.endswith(".tmp")]


def test_export_markdown_folder(client, tmp_root):
    for text in EXPORT_TEXTS:
        client.create(text)
    target = tmp_root / "markdown"
    result = client.call("memo/export", {"path": str(target), "format": "markdown"})
    assert result["exported"] == len(EXPORT_TEXTS)
    files = sorted(target.iterdir())
    assert len(files) == len(EXPORT_TEXTS), [f.name for f in files]
    assert all(f.suffix == ".md" for f in files)
    assert all(not f.name.startswith(".") for f in files)
    contents = sorted(f.read_bytes() for f in files)
    # Each file holds its memo's exact text (a title heading may be added, never text lost).
    for text in EXPORT_TEXTS:
        assert any(text.encode("utf-8") in content for content in contents), text


def test_export_json_refuses_to_overwrite_unless_asked(client, tmp_root):
    client.create("first version")
    target = tmp_root / "existing.json"
    target.write_text("precious", encoding="utf-8")
    error = client.error_of("memo/export", {"path": str(target), "format": "json"})
    assert error["code"] == EXPORT_FAILED
    assert target.read_text(encoding="utf-8") == "precious"
    _, response = client.request("memo/export", {"path": str(target), "format": "json", "overwrite": True})
    assert target.exists(), f"the export with overwrite: true deleted the existing file and answered {response}"
    assert "result" in response, response
    assert response["result"]["exported"] == 1
    assert json.loads(target.read_text(encoding="utf-8"))[0]["title"] == "first version"
    # A folder is not a file, even with overwrite.
    folder = tmp_root / "a-folder"
    folder.mkdir()
    assert client.error_of("memo/export", {"path": str(folder), "format": "json", "overwrite": True})["code"] \
        == EXPORT_FAILED
    assert folder.is_dir()


def test_export_markdown_refuses_an_existing_folder_unless_asked(client, tmp_root):
    client.create("first version")
    folder = tmp_root / "existing-folder"
    folder.mkdir()
    (folder / "keep.txt").write_text("keep", encoding="utf-8")
    error = client.error_of("memo/export", {"path": str(folder), "format": "markdown"})
    assert error["code"] == EXPORT_FAILED
    assert sorted(os.listdir(folder)) == ["keep.txt"]
    result = client.call("memo/export", {"path": str(folder), "format": "markdown", "overwrite": True})
    assert result["exported"] == 1
    assert (folder / "keep.txt").read_text(encoding="utf-8") == "keep"
    assert (folder / "first version.md").exists() or len(os.listdir(folder)) == 2
    # A file is not a folder, even with overwrite.
    target = tmp_root / "existing.json"
    target.write_text('[{"title": "first version"}]', encoding="utf-8")
    assert client.error_of("memo/export", {"path": str(target), "format": "markdown", "overwrite": True})["code"] \
        == EXPORT_FAILED
    assert json.loads(target.read_text(encoding="utf-8"))[0]["title"] == "first version"


def test_export_errors(client, tmp_root):
    client.create("x")
    error = client.error_of("memo/export", {"path": str(tmp_root / "no" / "such" / "dir" / "x.json"), "format": "json"})
    assert error["code"] == EXPORT_FAILED
    error = client.error_of("memo/export", {"path": str(tmp_root / "x.pdf"), "format": "pdf"})
    assert error["code"] == INVALID_PARAMS and error["data"]["param"] == "format"
    error = client.error_of("memo/export", {"format": "json"})
    assert error["code"] == INVALID_PARAMS and error["data"]["param"] == "path"
    assert not (tmp_root / "x.pdf").exists()


def test_repository_sample_is_where_the_tests_expect_it():
    assert REPO.exists()
    assert sample_path().exists()

"""The store: exact text, derived title and body, timestamps, durability across restarts and crashes,
file permissions, and refusing files that are not CloudNotes stores."""

import datetime
import os
import signal
import sqlite3
import stat

import pytest

from cnsupport.schema import ISO_MS

TRICKY_TEXTS = [
    "Windows line\r\nendings\r\nkept\r\n",
    "\n\n\n   \nleading blank lines\nbody",
    "emoji 😀👩‍👩‍👧‍👦 and flags 🇰🇷\nbody ✈️",
    "한국어 메모\n두 번째 줄\n\n세 번째 문단",
    "NUL in\u0000the middle\u0000",
    "trailing spaces   \n\t tabs\t\n",
    "\ufeffBOM first and \u200b zero width, combining e\u0301",
    "lone CR\rinside\r",
    "",
]


def parse_ms(text: str) -> datetime.datetime:
    assert ISO_MS.match(text), text
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)


def test_text_is_kept_byte_for_byte(servers):
    first = servers.session()
    ids = []
    for text in TRICKY_TEXTS:
        memo = first.create(text)
        assert memo["text"] == text
        assert first.memo_text(memo["id"]) == text
        ids.append(memo["id"])
    # `memo/update` keeps text as exactly.
    updated = first.call("memo/update", {"id": ids[0], "text": TRICKY_TEXTS[0] + "\r\n\u0000"})["memo"]
    assert updated["text"] == TRICKY_TEXTS[0] + "\r\n\u0000"
    expected = dict(zip(ids, TRICKY_TEXTS))
    expected[ids[0]] = TRICKY_TEXTS[0] + "\r\n\u0000"
    # The blank one is discarded by rule S5 once another memo gets the selection: select a real one last.
    first.call("memo/select", {"id": ids[1]})
    expected.pop(ids[-1])
    assert first.shutdown_and_exit() == 0
    second = servers.session()
    for memo_id, text in expected.items():
        memo = second.call("memo/select", {"id": memo_id})["memo"]
        assert memo["text"] == text, memo_id
        assert memo["text"].encode("utf-8") == text.encode("utf-8")


def test_a_5_mb_text_is_kept_exactly(servers):
    line = "다섯 메가바이트 memo line with emoji 😀 and CRLF\r\n"
    text = "Big memo\n" + line * (5 * 1024 * 1024 // len(line.encode("utf-8")) + 1)
    assert len(text.encode("utf-8")) >= 5 * 1024 * 1024
    first = servers.session()
    memo = first.call("memo/create", {"text": text}, timeout=60)["memo"]
    assert memo["text"] == text
    assert memo["title"] == "Big memo"
    assert first.shutdown_and_exit() == 0
    second = servers.session()
    assert second.call("memo/select", {"id": memo["id"]}, timeout=60)["memo"]["text"] == text
    assert second.search_total("메가바이트 memo") == 1


@pytest.mark.parametrize("text, title, body", [
    ("Title\nbody line 1\nbody line 2", "Title", "body line 1\nbody line 2"),
    ("   Padded title   \nbody", "Padded title", "body"),
    ("\n\n \t \nFirst real line\n\nrest", "First real line", "\nrest"),
    ("only a title", "only a title", ""),
    ("Title\n", "Title", ""),
    ("CRLF title\r\nCRLF body\r\nmore", "CRLF title", "CRLF body\r\nmore"),
    ("\r\n\r\n  Spaced CRLF  \r\nbody", "Spaced CRLF", "body"),
    ("제목입니다\n본문입니다", "제목입니다", "본문입니다"),
    ("", "New Memo", ""),
    ("  \n\t\n", "New Memo", ""),
])
def test_title_and_body_are_derived_from_the_text(client, text, title, body):
    memo = client.create(text)
    assert (memo["title"], memo["body"]) == (title, body), memo
    row = client.call("memo/list", {})["rows"][0]
    assert row["title"] == title
    # The preview is the body on one line.
    assert "\n" not in row["preview"] and "\r" not in row["preview"]
    assert row["preview"] == " ".join(body.split())


def test_preview_is_the_body_on_one_line_cut_to_about_100_characters(client):
    body = "word " * 100
    memo = client.create("Title\n" + body + "\nnext line\n\nparagraph")
    row = client.call("memo/list", {})["rows"][0]
    assert row["id"] == memo["id"]
    assert "\n" not in row["preview"]
    assert 90 <= len(row["preview"]) <= 110, len(row["preview"])
    assert row["preview"].startswith("word word")
    short = client.create("Short\nline one\n\n  line   two\r\nthree")
    row = client.call("memo/list", {})["rows"][0]
    assert row["id"] == short["id"]
    assert row["preview"] == "line one line two three"


def test_timestamps_have_milliseconds_and_version_grows(client):
    before = datetime.datetime.now(datetime.timezone.utc)
    memo = client.create("timestamps")
    after = datetime.datetime.now(datetime.timezone.utc)
    created = parse_ms(memo["createdAt"])
    assert memo["createdAt"] == memo["modifiedAt"]
    slack = datetime.timedelta(seconds=2)
    assert before - slack <= created <= after + slack
    assert memo["version"] == 1
    updated = client.call("memo/update", {"id": memo["id"], "text": "timestamps, edited"})["memo"]
    assert updated["createdAt"] == memo["createdAt"]
    assert parse_ms(updated["modifiedAt"]) >= created
    assert updated["version"] > memo["version"]
    row = client.call("memo/list", {})["rows"][0]
    assert row["modifiedAt"] == updated["modifiedAt"]
    # An update with the same text is not a change.
    same = client.call("memo/update", {"id": memo["id"], "text": "timestamps, edited"})["memo"]
    assert same["version"] == updated["version"]
    assert same["modifiedAt"] == updated["modifiedAt"]


def test_restart_finds_every_acknowledged_change(servers):
    first = servers.session()
    kept = first.create("kept as created")
    edited = first.create("edited once")
    deleted = first.create("deleted soon")
    edited = first.call("memo/update", {"id": edited["id"], "text": "edited twice"})["memo"]
    first.call("memo/delete", {"id": deleted["id"]})
    first.call("memo/import", {"memos": [{"title": "imported", "body": "body", "last_modified": 1600000000}]})
    expected = first.snapshot()
    assert first.shutdown_and_exit() == 0

    second = servers.session()
    assert second.snapshot() == expected
    assert second.call("memo/select", {"id": edited["id"]})["memo"]["version"] == edited["version"]
    assert second.error_of("memo/select", {"id": deleted["id"]})["code"] == -33001
    assert second.search_total("twice") == 1
    assert second.search_total("deleted") == 0
    assert kept["id"] in [r["id"] for r in second.call("memo/search", {"query": ""})["rows"]]


def test_sigkill_right_after_an_acknowledged_update_loses_nothing(servers):
    first = servers.session()
    memo = first.create("before the crash")
    other = first.create("another memo")
    first.call("memo/delete", {"id": other["id"]})
    updated = first.call("memo/update", {"id": memo["id"], "text": "acknowledged just before SIGKILL 충돌"})["memo"]
    first.proc.send_signal(signal.SIGKILL)
    assert first.wait() == -signal.SIGKILL

    second = servers.session()
    listing = second.list_all()
    assert [r["id"] for r in listing["rows"]] == [memo["id"]]
    again = second.call("memo/select", {"id": memo["id"]})["memo"]
    assert again["text"] == "acknowledged just before SIGKILL 충돌"
    assert again["version"] == updated["version"]
    # The search index is not stale after the crash either.
    expected = {"SIGKILL": 1, "충돌": 1, "before the crash": 0, "another": 0}
    assert second.search_totals(expected) == expected


def test_sigkill_after_many_acknowledged_creates(servers):
    first = servers.session()
    ids = [first.create(f"memo {i}")["id"] for i in range(30)]
    first.kill()
    first.wait()
    second = servers.session()
    assert sorted(r["id"] for r in second.list_all()["rows"]) == sorted(ids)


# -- file permissions --------------------------------------------------------------------------------------

def mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def assert_private(folder, store_file):
    assert mode(folder) == 0o700, f"{folder} has mode {oct(mode(folder))}"
    assert mode(store_file) == 0o600, f"{store_file} has mode {oct(mode(store_file))}"
    for suffix in ("-wal", "-shm"):
        companion = str(store_file) + suffix
        if os.path.exists(companion):
            assert mode(companion) & 0o077 == 0, f"{companion} has mode {oct(mode(companion))}"


def start_and_use(servers, **kwargs):
    srv = servers.session(**kwargs)
    srv.create("private")
    return srv


def test_default_store_under_xdg_data_home_is_private(servers, tmp_root):
    data_home = tmp_root / "xdg" / "data"
    srv = start_and_use(servers, store=None, env={"XDG_DATA_HOME": str(data_home), "CLOUDNOTES_STORE": ""})
    folder = data_home / "cloudnotes"
    store_file = folder / "notes.sqlite"
    assert store_file.exists()
    assert_private(folder, store_file)
    assert srv.shutdown_and_exit() == 0


def test_default_store_without_xdg_data_home_is_under_home(servers, tmp_root):
    home = tmp_root / "home"
    home.mkdir()
    environment = {"HOME": str(home), "XDG_DATA_HOME": "", "CLOUDNOTES_STORE": ""}
    srv = start_and_use(servers, store=None, env=environment)
    store_file = home / ".local" / "share" / "cloudnotes" / "notes.sqlite"
    assert store_file.exists()
    assert_private(store_file.parent, store_file)
    assert srv.shutdown_and_exit() == 0


def test_store_flag_creates_a_private_folder_and_file(servers, tmp_root):
    store_file = tmp_root / "flag" / "nested" / "notes.sqlite"
    srv = start_and_use(servers, store=store_file)
    assert_private(store_file.parent, store_file)
    assert srv.shutdown_and_exit() == 0


def test_cloudnotes_store_variable_sets_the_store(servers, tmp_root):
    store_file = tmp_root / "from-env" / "mine.sqlite"
    srv = start_and_use(servers, store=None, env={"CLOUDNOTES_STORE": str(store_file),
                                                   "XDG_DATA_HOME": str(tmp_root / "unused")})
    assert store_file.exists()
    assert not (tmp_root / "unused").exists()
    assert_private(store_file.parent, store_file)
    assert srv.shutdown_and_exit() == 0
    # --store wins over the variable.
    flag_file = tmp_root / "flag-wins" / "notes.sqlite"
    srv = servers.session(store=flag_file, env={"CLOUDNOTES_STORE": str(store_file)})
    assert srv.list_all()["total"] == 0
    assert srv.shutdown_and_exit() == 0
    assert flag_file.exists()


# -- foreign files -----------------------------------------------------------------------------------------

def foreign_files(folder):
    text_file = folder / "notes.txt"
    text_file.write_bytes(b"These are my notes, not a database.\n" * 100)
    sqlite_file = folder / "other-app.sqlite"
    connection = sqlite3.connect(sqlite_file)
    connection.execute("CREATE TABLE contacts (name TEXT, phone TEXT)")
    connection.execute("INSERT INTO contacts VALUES ('Kim', '010-1234-5678')")
    connection.commit()
    connection.close()
    empty_header = folder / "garbage.sqlite"
    empty_header.write_bytes(b"SQLite format 3\x00" + b"\xff" * 4000)
    return [text_file, sqlite_file, empty_header]


@pytest.mark.parametrize("which", [0, 1, 2], ids=["text-file", "other-sqlite-db", "corrupt-header"])
def test_a_file_that_is_not_a_cloudnotes_store_is_refused_and_left_untouched(servers, tmp_root, which):
    path = foreign_files(tmp_root)[which]
    before = path.read_bytes()
    listing_before = sorted(os.listdir(tmp_root))
    srv = servers.start(store=path)
    code = srv.wait(timeout=20)
    assert code != 0
    assert srv.read_until_eof() == [], "nothing may reach stdout"
    srv.stop()
    assert srv.stderr.strip(), "the refusal must be explained on stderr"
    assert str(path) in srv.stderr or "not a CloudNotes store" in srv.stderr
    assert path.read_bytes() == before, f"{path.name} was modified"
    assert sorted(os.listdir(tmp_root)) == listing_before, "files were left beside the refused store"

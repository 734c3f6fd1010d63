"""The shell subcommands (`cloudnotes list|show|new|rm|share`), run as a person or a script would: the
real binary, its stdout, stderr and exit status, on a terminal (a pseudo-terminal) or in a pipe. `edit`
has test_shell_edit.py, `import` and `export` test_shell_transfer.py."""

from __future__ import annotations

import json
import re

from cnsupport.schema import UUID_LOWER
from cnsupport.session import write_entries

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


# -- new, show, list -------------------------------------------------------------------------------

def test_new_takes_text_or_stdin_and_prints_the_id(shell):
    first = shell.ok("new", "Groceries\nmilk, eggs").out.strip()
    assert UUID_LOWER.match(first)
    piped = shell.ok("new", input="From stdin\n한국어 본문\n")
    second = piped.out.strip()
    assert UUID_LOWER.match(second)
    assert "Created" in piped.err  # the note for people goes to stderr, never into the id a script reads
    assert shell.text(second) == "From stdin\n한국어 본문\n"
    assert [row["id"] for row in shell.rows()] == [second, first]
    created = json.loads(shell.ok("new", "--json", "Third").out)
    assert created["title"] == "Third" and created["version"] >= 1


def test_new_refuses_stdin_that_is_not_utf8(shell):
    shell.fails("new", input=b"\xff\xfe bad")
    assert shell.rows() == []


def test_show_prints_the_exact_text_and_accepts_an_8_character_prefix(shell):
    text = "Title line\n\n  indented\ttab\nno newline at the end"
    memo_id = shell.new(text)
    assert shell.ok("show", memo_id[:8]).out == text  # in a pipe: the bytes as stored, nothing added
    assert shell.ok("show", memo_id.upper()).out == text
    shown = shell.memo(memo_id[:8])
    assert shown["id"] == memo_id and shown["title"] == "Title line" and shown["text"] == text


def test_unknown_ambiguous_and_malformed_ids_are_explained(shell):
    ids = [shell.new(f"memo {index}") for index in range(17)]  # 17 ids over 16 hex digits: two share a first one
    first_characters = [memo_id[0] for memo_id in ids]
    shared = next(c for c in first_characters if first_characters.count(c) > 1)
    ambiguous = shell.fails("show", shared)
    assert "ambiguous" in ambiguous.err
    assert all(memo_id in ambiguous.err for memo_id in ids if memo_id.startswith(shared))  # to pick from
    missing = shell.fails("show", "00000000-0000-4000-8000-000000000000")
    assert "No memo" in missing.err
    malformed = shell.fails("rm", "not-an-id")
    assert "not a memo id" in malformed.err
    assert len(shell.rows()) == 17  # nothing was deleted by the failed rm


def test_list_on_a_terminal_is_aligned_in_columns(shell):
    shell.new("Short\n" + "word " * 60)
    shell.new("A much longer title than the other one\nsecond line")
    shell.new("한국어 제목\n본문")
    lines = shell.ok("list", tty_out=True, env={"NO_COLOR": "1"}).out.splitlines()
    assert len(lines) == 3
    # Columns: short id, date in the user's locale, then the title padded to one display width on each row.
    assert all(re.match(r"^[0-9a-f]{8,}-?[0-9a-f]*  \d{1,2}/\d{1,2}/\d{4}, \d{1,2}:\d{2}\s?[AP]M  ", line) for line in lines), lines
    preview_starts = [_display_width(line[:line.index(p)]) for line, p in zip(lines, ["본문", "second line", "word"])]
    assert len(set(preview_starts)) == 1, lines


def _display_width(text: str) -> int:
    return sum(2 if "\uac00" <= c <= "\ud7a3" or "\u3131" <= c <= "\u318e" else 1 for c in text)


def test_list_on_a_terminal_is_coloured_and_cut_to_its_width(shell):
    shell.new("Title\n" + "long preview " * 30)
    result = shell.ok("list", tty_out=True)
    assert "\x1b[33m" in result.out  # the id in colour
    line = ANSI.sub("", result.out).splitlines()[0]
    assert len(line) <= 100 and line.endswith("…")
    plain = shell.ok("list", tty_out=True, env={"NO_COLOR": "1"})
    assert not ANSI.search(plain.out)


def test_list_never_lets_a_memo_drive_the_terminal(shell):
    shell.new("\x1b[31mred\x1b]0;owned\x07 title\nbody\x1b[2J")
    out = shell.ok("list", tty_out=True, env={"NO_COLOR": "1"}).out
    assert "\x1b" not in out and "\x07" not in out
    assert "red" in out and "title" in out


def test_list_search_limit_and_json(shell):
    shell.new("Groceries\nmilk")
    kimchi = shell.new("김치찌개 레시피\n돼지고기")
    shell.new("Meeting notes\n김치 is on the agenda")
    found = shell.rows("--search", "김치")
    assert {row["id"] for row in found} >= {kimchi} and len(found) == 2
    assert set(found[0]) == {"id", "title", "preview", "modifiedAt", "displayDate"}
    assert len(shell.rows("--limit", "2")) == 2
    assert shell.rows("--search", "nothing matches this") == []
    assert shell.ok("list", "--search", "nothing matches this").out == ""
    bad = shell.run("list", "--limit", "0")
    assert bad.code != 0 and "--limit" in bad.err


def test_list_pages_through_more_than_one_protocol_page(shell):
    memos = [{"title": f"memo {index}", "body": "", "last_modified": 1_600_000_000 + index} for index in range(2500)]
    source = write_entries(shell.home / "many.json", memos)
    shell.ok("import", str(source))
    rows = shell.rows()
    assert len(rows) == 2500
    assert rows[0]["title"] == "memo 2499" and rows[-1]["title"] == "memo 0"
    assert len(shell.ok("list").out.splitlines()) == 2500


def test_dates_follow_the_users_locale_and_time_zone(shell):
    shell.new("Locale")
    on_terminal = {"NO_COLOR": "1"}  # in a pipe, dates are ISO 8601 (test_shell_unix.py)
    korean = shell.ok("list", tty_out=True, env={**on_terminal, "LANG": "ko_KR.UTF-8"}).out
    assert "오전" in korean or "오후" in korean, korean
    english = shell.ok("list", tty_out=True, env={**on_terminal, "LANG": "en_US.UTF-8"}).out
    assert "AM" in english or "PM" in english, english
    utc = json.loads(shell.ok("show", "--json", shell.rows()[0]["id"]).out)["modifiedAt"]
    hour = int(utc[11:13])
    seoul = shell.ok("list", tty_out=True, env={**on_terminal, "LANG": "en_US.UTF-8", "TZ": "Asia/Seoul"}).out
    expected = (hour + 9) % 24
    shown = int(re.search(r", (\d{1,2}):\d{2}\s?([AP]M)", seoul).group(1))
    assert shown % 12 == expected % 12, (utc, seoul)


# -- rm, share -------------------------------------------------------------------------------------

def test_rm_deletes_one_memo(shell):
    keep = shell.new("Keep")
    gone = shell.new("Gone")
    result = shell.ok("rm", gone[:8])
    assert "to the trash" in result.err and result.out == ""
    assert [row["id"] for row in shell.rows()] == [keep]
    shell.fails("rm", gone)
    assert json.loads(shell.ok("rm", "--json", keep).out) == {"deleted": keep}
    assert shell.rows() == []


def test_share_in_each_format(shell):
    memo_id = shell.new("Trip plan\nBusan on Friday")
    assert shell.ok("share", memo_id[:8]).out == "Trip plan\nBusan on Friday"
    assert shell.ok("share", memo_id[:8], "--format", "markdown").out == "# Trip plan\n\nBusan on Friday\n"
    shared = json.loads(shell.ok("share", memo_id, "--format", "json").out)
    assert shared["id"] == memo_id and shared["body"] == "Busan on Friday"
    bad = shell.run("share", memo_id, "--format", "pdf")
    assert bad.code != 0 and "pdf" in bad.err


# -- the same store as a running server ------------------------------------------------------------

def test_a_running_server_sees_what_the_shell_wrote(shell, servers):
    server = servers.session(shell.store)
    assert server.call("memo/list", {})["total"] == 0
    memo_id = shell.new("Written in the shell")
    listed = server.call("memo/list", {})
    assert [row["id"] for row in listed["rows"]] == [memo_id]
    created = server.call("memo/create", {"text": "Written in the editor"})["memo"]
    assert shell.rows()[0]["id"] == created["id"]
    assert server.shutdown_and_exit() == 0


def test_a_missing_store_folder_is_created_private_and_an_unopenable_store_explained(shell):
    nested = shell.home / "deep" / "er" / "notes.sqlite"
    memo_id = shell.ok("new", "x", env={"CLOUDNOTES_STORE": str(nested)}).out.strip()
    assert UUID_LOWER.match(memo_id)
    not_a_store = shell.home / "text.txt"
    not_a_store.write_text("hello, not SQLite")
    result = shell.fails("list", env={"CLOUDNOTES_STORE": str(not_a_store)})
    assert "cannot open the store" in result.err
    assert not_a_store.read_text() == "hello, not SQLite"

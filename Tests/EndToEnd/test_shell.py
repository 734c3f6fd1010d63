"""The shell subcommands (`cloudnotes list|show|new|edit|rm|share|import|export`), run as a person or a
script would: the real binary, its stdout, stderr and exit status, on a terminal (a pseudo-terminal) or
in a pipe."""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import stat
import subprocess
import termios
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from conftest import BINARY, UUID_LOWER, Server, make_entries, sample_path

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


@dataclass
class Run:
    code: int
    out: str
    err: str


class Shell:
    """Runs `cloudnotes` subcommands on one store, with a clean environment (no user locale, no colour
    settings) that each call may extend."""

    def __init__(self, root: Path):
        self.root = root
        self.store = root / "notes.sqlite"
        self.env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root), "LANG": "C.UTF-8", "TZ": "UTC",
            "CLOUDNOTES_STORE": str(self.store),
            # `cloudnotes edit` writes the memo there, and keeps it when an editor fails after a change.
            "TMPDIR": str(root),
        }

    def run(self, *args: str, input: str | bytes | None = None, env: dict | None = None,
            tty_out: bool = False, tty_err: bool = False, timeout: float = 60) -> Run:
        environment = {**self.env, **(env or {})}
        command = [BINARY, *args]
        data = input.encode() if isinstance(input, str) else input
        if not (tty_out or tty_err):
            proc = subprocess.run(command, input=data if data is not None else b"", capture_output=True,
                                  env=environment, cwd=self.root, timeout=timeout)
            return Run(proc.returncode, proc.stdout.decode(), proc.stderr.decode())
        return self._run_on_terminal(command, environment, data, tty_out, tty_err, timeout)

    def _run_on_terminal(self, command, environment, data, tty_out, tty_err, timeout) -> Run:
        master, slave = pty.openpty()
        proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, env={**environment, "TERM": "xterm", "COLUMNS": "100"},
            stdout=slave if tty_out else subprocess.PIPE, stderr=slave if tty_err else subprocess.PIPE,
            cwd=self.root)
        os.close(slave)
        if data is not None:
            proc.stdin.write(data)
        proc.stdin.close()
        captured = bytearray()
        while True:  # the terminal's output, until the child closes it
            ready, _, _ = select.select([master], [], [], timeout)
            if not ready:
                proc.kill()
                raise AssertionError(f"{command} did not finish")
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every writer is gone
                break
            if not chunk:
                break
            captured += chunk
        os.close(master)
        piped_out = proc.stdout.read().decode() if proc.stdout else ""
        piped_err = proc.stderr.read().decode() if proc.stderr else ""
        code = proc.wait(timeout)
        terminal = captured.decode().replace("\r\n", "\n")
        return Run(code, terminal if tty_out else piped_out, terminal if tty_err and not tty_out else piped_err)

    def ok(self, *args: str, **kwargs) -> Run:
        result = self.run(*args, **kwargs)
        assert result.code == 0, f"cloudnotes {' '.join(args)} failed ({result.code}): {result.err}"
        return result

    def fails(self, *args: str, **kwargs) -> Run:
        """Runs a command that must fail: status 1, nothing on stdout, one `cloudnotes: error:` line."""
        result = self.run(*args, **kwargs)
        assert result.code == 1, f"expected failure, got {result.code}: {result.out!r} {result.err!r}"
        assert result.out == "", result.out
        assert result.err.startswith("cloudnotes: error: "), result.err
        assert "Error(" not in result.err and "ResponseError" not in result.err, result.err
        return result

    def new(self, text: str) -> str:
        memo_id = self.ok("new", text).out.strip()
        assert UUID_LOWER.match(memo_id), memo_id
        return memo_id

    def rows(self, *args: str) -> list[dict]:
        return json.loads(self.ok("list", "--json", *args).out)

    def memo(self, memo_id: str) -> dict:
        return json.loads(self.ok("show", memo_id, "--json").out)


@pytest.fixture
def shell(tmp_root) -> Shell:
    return Shell(tmp_root)


def write_script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + textwrap.dedent(body))
    path.chmod(0o700)
    return path


# -- new, show, list -------------------------------------------------------------------------------

def test_new_takes_text_or_stdin_and_prints_the_id(shell):
    first = shell.new("Groceries\nmilk, eggs")
    piped = shell.ok("new", input="From stdin\n한국어 본문\n")
    second = piped.out.strip()
    assert UUID_LOWER.match(second)
    assert "Created" in piped.err  # the note for people goes to stderr, never into the id a script reads
    assert shell.memo(second)["text"] == "From stdin\n한국어 본문\n"
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


def test_list_in_a_pipe_is_aligned_plain_and_uncut(shell):
    long_preview = "word " * 60
    shell.new("Short\n" + long_preview)
    shell.new("A much longer title than the other one\nsecond line")
    shell.new("한국어 제목\n본문")
    lines = shell.ok("list").out.splitlines()
    assert len(lines) == 3
    assert not any(ANSI.search(line) for line in lines)  # no colour in a pipe
    # Columns: short id, date, then the title column padded to the same display width on each row.
    assert all(re.match(r"^[0-9a-f]{8}  \d{1,2}/\d{1,2}/\d{4}, \d{1,2}:\d{2}\s?[AP]M  ", line) for line in lines), lines
    preview_starts = [_display_width(line[:line.index(p)]) for line, p in zip(lines, ["본문", "second line", "word"])]
    assert len(set(preview_starts)) == 1, lines
    assert lines[2].endswith(shell.rows()[2]["preview"])  # a pipe gets the whole preview


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
    source = shell.root / "many.json"
    source.write_text(json.dumps(memos))
    shell.ok("import", str(source))
    rows = shell.rows()
    assert len(rows) == 2500
    assert rows[0]["title"] == "memo 2499" and rows[-1]["title"] == "memo 0"
    assert len(shell.ok("list").out.splitlines()) == 2500


def test_dates_follow_the_users_locale_and_time_zone(shell):
    shell.new("Locale")
    korean = shell.ok("list", env={"LANG": "ko_KR.UTF-8"}).out
    assert "오전" in korean or "오후" in korean, korean
    english = shell.ok("list", env={"LANG": "en_US.UTF-8"}).out
    assert "AM" in english or "PM" in english, english
    utc = json.loads(shell.ok("show", "--json", shell.rows()[0]["id"]).out)["modifiedAt"]
    hour = int(utc[11:13])
    seoul = shell.ok("list", env={"LANG": "en_US.UTF-8", "TZ": "Asia/Seoul"}).out
    expected = (hour + 9) % 24
    shown = int(re.search(r", (\d{1,2}):\d{2}\s?([AP]M)", seoul).group(1))
    assert shown % 12 == expected % 12, (utc, seoul)


# -- edit --------------------------------------------------------------------------------------------

def test_edit_saves_what_the_editor_wrote(shell):
    memo_id = shell.new("Draft\nold line")
    editor = write_script(shell.root / "editor", """\
        printf 'Final\\nnew line\\n' > "$1"
        """)
    result = shell.ok("edit", memo_id[:8], env={"EDITOR": str(editor)})
    assert "Saved" in result.err
    memo = shell.memo(memo_id)
    # The memo had no final newline; the one the editor adds on save is not the user's.
    assert memo["text"] == "Final\nnew line"
    assert memo["version"] == 2
    assert shell.rows()[0]["id"] == memo_id


def test_edit_prefers_visual_and_passes_the_path_as_one_argument(shell):
    memo_id = shell.new("Spaces")
    editor = write_script(shell.root / "my editor", """\
        [ "$#" -eq 2 ] && [ "$1" = "--flag" ] && printf 'edited by visual' > "$2"
        """)
    # VISUAL may carry arguments, as `code --wait` does; the file's path is never split or expanded.
    shell.ok("edit", memo_id, env={"VISUAL": f"'{editor}' --flag", "EDITOR": "false"})
    assert shell.memo(memo_id)["text"] == "edited by visual"


def test_edit_works_with_an_editor_that_takes_the_terminal(shell):
    # A terminal editor (vi, nano) sets the terminal's modes: outside the terminal's foreground
    # process group it would be stopped by SIGTTOU, and `cloudnotes edit` would hang.
    memo_id = shell.new("on a terminal")
    editor = write_script(shell.root / "tty-editor", """\
        stty -echo < /dev/tty && stty echo < /dev/tty || exit 9
        printf 'edited on a terminal' > "$1"
        """)
    master, slave = pty.openpty()

    def take_the_terminal():  # as a login shell would: a new session with the pty as its terminal
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen([BINARY, "edit", memo_id], stdin=slave, stdout=slave, stderr=slave,
                            env={**shell.env, "EDITOR": str(editor)}, cwd=shell.root,
                            preexec_fn=take_the_terminal, pass_fds=(slave,))
    os.close(slave)
    output = b""
    while True:
        ready, _, _ = select.select([master], [], [], 20)
        if not ready:
            proc.kill()
            raise AssertionError(f"cloudnotes edit hung on a terminal editor: {output!r}")
        try:
            chunk = os.read(master, 4096)
        except OSError:
            break
        if not chunk:
            break
        output += chunk
    os.close(master)
    assert proc.wait(10) == 0, output
    assert shell.memo(memo_id)["text"] == "edited on a terminal"


def test_edit_keeps_the_users_text_when_the_editor_fails_after_a_change(shell):
    memo_id = shell.new("Keep me")
    failed = shell.fails("edit", memo_id, env={"EDITOR": "sh -c 'printf typed > \"$0\"; exit 3'"})
    kept = Path(re.search(r"your text is in (\S+)", failed.err).group(1))
    assert kept.read_text() == "typed"
    assert kept.is_relative_to(shell.root)  # in $TMPDIR
    assert shell.memo(memo_id)["text"] == "Keep me"


def test_edit_without_a_change_or_with_a_failing_editor_changes_nothing(shell):
    memo_id = shell.new("Keep me")
    unchanged = shell.ok("edit", memo_id, env={"EDITOR": "true"})
    assert "No change" in unchanged.err
    failed = shell.fails("edit", memo_id, env={"EDITOR": "false"})
    assert "not changed" in failed.err and "your text" not in failed.err
    memo = shell.memo(memo_id)
    assert memo["text"] == "Keep me" and memo["version"] == 1


def test_edit_never_overwrites_a_change_made_meanwhile(shell):
    memo_id = shell.new("original")
    # While "the user" edits, another front end (here a nested `cloudnotes edit`) changes the memo.
    editor = write_script(shell.root / "editor", f"""\
        EDITOR="sed -i s/original/theirs/" "{BINARY}" edit {memo_id}
        printf 'mine' > "$1"
        """)
    result = shell.run("edit", memo_id, env={"EDITOR": str(editor)})
    assert result.code == 1 and result.out == ""
    assert "cloudnotes: error: the memo changed elsewhere" in result.err
    kept = Path(re.search(r"your text is in (\S+)", result.err).group(1))
    assert kept.read_text() == "mine"  # the user's text survives, in a file only they can read
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert shell.memo(memo_id)["text"] == "theirs"


# -- rm, share -------------------------------------------------------------------------------------

def test_rm_deletes_one_memo(shell):
    keep = shell.new("Keep")
    gone = shell.new("Gone")
    result = shell.ok("rm", gone[:8])
    assert "Deleted" in result.err and result.out == ""
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


# -- import, export ----------------------------------------------------------------------------------

def test_import_the_sample_file(shell):
    sample = sample_path()
    result = shell.ok("import", str(sample))
    expected = len(json.loads(sample.read_text()))
    assert re.search(rf"Imported {expected} memos", result.err)
    assert "\r" not in result.err  # no progress bar in a pipe
    assert len(shell.rows()) == expected


def test_import_and_export_show_a_progress_bar_on_a_terminal(shell):
    memos = make_entries(5000)
    source = shell.root / "memos.json"
    source.write_text(json.dumps(memos))
    result = shell.run("import", str(source), tty_err=True)
    assert result.code == 0, result.err
    assert "Importing" in result.err and "100%" in result.err
    assert "Imported 5000 memos" in result.err
    exported = shell.run("export", str(shell.root / "out.json"), tty_err=True)
    assert exported.code == 0, exported.err
    assert "Exporting" in exported.err and "100%" in exported.err and "Exported 5000 memos" in exported.err
    assert "Exporting" not in shell.ok("export", str(shell.root / "again.json")).err  # no bar in a pipe


def test_a_bad_import_file_is_refused_and_changes_nothing(shell):
    keep = shell.new("Already here")
    source = shell.root / "bad.json"
    source.write_text('[{"title": "ok", "body": "", "last_modified": 1}, {"title": 5}]')
    result = shell.fails("import", str(source))
    assert "entry 1" in result.err
    shell.fails("import", str(shell.root / "missing.json"))
    assert [row["id"] for row in shell.rows()] == [keep]


def test_export_json_round_trips_and_never_overwrites_unasked(shell):
    shell.new("One\nfirst")
    shell.new("Two\nsecond")
    target = shell.root / "out.json"
    assert "Exported 2 memos" in shell.ok("export", str(target)).err
    exported = json.loads(target.read_text())
    assert sorted(entry["title"] for entry in exported) == ["One", "Two"]
    refused = shell.fails("export", str(target))
    assert "--overwrite" in refused.err
    shell.new("Three")
    assert json.loads(shell.ok("export", str(target), "--overwrite", "--json").out)["exported"] == 3
    other = Shell(shell.root / "other")
    (shell.root / "other").mkdir(mode=0o700)
    other.ok("import", str(target))
    assert sorted(row["title"] for row in other.rows()) == ["One", "Three", "Two"]


def traced_calls(shell, *args: str) -> list[tuple[str, str, str]]:
    """Runs `cloudnotes *args` under strace: its file calls, in order, as (call, arguments, result)."""
    probe = subprocess.run(["strace", "-qq", "-o", os.devnull, "true"], capture_output=True)
    if probe.returncode != 0:  # a container without ptrace: nothing here can be traced
        pytest.skip(f"strace cannot trace here: {probe.stderr.decode().strip()}")
    trace = shell.root / "strace.txt"
    calls = "openat,close,fsync,fdatasync,syncfs,link,linkat,unlink,unlinkat,rename,renameat,renameat2"
    command = ["strace", "-f", "-qq", "-o", str(trace), "-e", f"trace={calls}", BINARY, *args]
    run = subprocess.run(command, capture_output=True, env=shell.env, cwd=shell.root, timeout=60)
    assert run.returncode == 0, run.stderr.decode()
    traced = []
    for line in trace.read_text().splitlines():
        match = re.match(r"(?:\d+ +)?(\w+)\((.*)\) += (.*)$", line)
        if match:  # a call split by another thread's ("<unfinished ...>") is left out: none here are
            traced.append(match.groups())
    return traced


def folder_descriptor(calls, folder: Path, before: int) -> tuple[int, str, int]:
    """Where `folder` was last opened as a folder before call `before` (others open it too: the store's
    folder, say), its descriptor, and where that descriptor was closed."""
    opened = [(i, result) for i, (call, arguments, result) in enumerate(calls[:before])
              if call == "openat" and f'"{folder}"' in arguments and "O_DIRECTORY" in arguments]
    assert opened, calls
    start, descriptor = opened[-1]
    closed = next((i for i, (call, arguments, _) in enumerate(calls) if i > start and call == "close" and arguments == descriptor),
                  len(calls))
    return start, descriptor, closed


def test_export_json_is_on_disk_before_it_takes_its_name_and_the_name_after(shell):
    shell.new("One\nfirst")
    for extra in ([], ["--overwrite"]):  # link(2) for a new file, rename(2) over an old one
        target = shell.root / "out.json"
        calls = traced_calls(shell, "export", str(target), *extra)
        opened = [(i, result) for i, (call, arguments, result) in enumerate(calls)
                  if call == "openat" and ".out.json." in arguments and "O_EXCL" in arguments]
        assert len(opened) == 1, calls
        written, descriptor = opened[0]
        named = [i for i, (call, arguments, _) in enumerate(calls)
                 if call in ("link", "linkat", "rename", "renameat", "renameat2") and f'"{target}"' in arguments]
        assert len(named) == 1, calls
        synced = [i for i, (call, arguments, _) in enumerate(calls)
                  if call in ("fsync", "fdatasync") and arguments == descriptor and written < i < named[0]]
        assert synced, f"the file was not synced between its creation and its naming: {calls[written:]}"
        start, folder, closed = folder_descriptor(calls, shell.root, before=written)
        folder_synced = [i for i, (call, arguments, _) in enumerate(calls)
                         if named[0] < i < closed and call in ("fsync", "fdatasync") and arguments == folder]
        assert folder_synced, f"the folder was not synced after the naming: {calls[start:]}"
        temporary = calls[written][1].split('"')[1]
        removed = [i for i, (call, arguments, result) in enumerate(calls)
                   if call.startswith("unlink") and f'"{temporary}"' in arguments and result == "0"]
        assert not removed or removed[0] < folder_synced[0], f"the temporary name was removed after the folder's sync: {calls[named[0]:]}"
        assert json.loads(target.read_text())[0]["title"] == "One"
        assert [p.name for p in shell.root.iterdir() if p.name.endswith(".tmp")] == []


def test_export_markdown_syncs_its_files_at_once_after_the_last(shell):
    for title in ("One", "Two", "Three"):
        shell.new(f"{title}\nbody")
    folder = shell.root / "notes"
    calls = traced_calls(shell, "export", str(folder), "--format", "markdown")
    created = [(i, result) for i, (call, arguments, result) in enumerate(calls)
               if call == "openat" and f'"{folder}/' in arguments and "O_CREAT" in arguments]
    assert len(created) == 3, calls
    start, descriptor, closed = folder_descriptor(calls, folder, before=created[0][0])
    synced = [i for i, (call, arguments, result) in enumerate(calls)
              if call == "syncfs" and arguments == descriptor and result == "0" and start < i < closed]
    assert synced and synced[-1] > created[-1][0], f"no sync of the folder's file system after the last file: {calls[start:]}"
    # Each file's calls run from its opening to the next file's (the last one's, to the sync).
    ends = [i for i, _ in created[1:]] + [synced[-1]]
    for (opened, file), end in zip(created, ends):
        alone = [c for c in calls[opened + 1:end] if c[0] in ("fsync", "fdatasync") and c[1] == file]
        assert not alone, f"a file was synced on its own: {calls[opened:end]}"
    assert sorted(p.name for p in folder.iterdir()) == ["One.md", "Three.md", "Two.md"]

    # Into the same folder again: each file is replaced in one step, synced before it takes the name.
    shell.new("One\nchanged")
    calls = traced_calls(shell, "export", str(folder), "--format", "markdown", "--overwrite")
    renamed = [i for i, (call, arguments, _) in enumerate(calls)
               if call.startswith("rename") and f'"{folder}/One.md"' in arguments]
    assert len(renamed) == 1, calls
    temporary = calls[renamed[0]][1].split('"')[1]
    opened = [(i, result) for i, (call, arguments, result) in enumerate(calls) if call == "openat" and f'"{temporary}"' in arguments]
    assert len(opened) == 1, calls
    assert any(call in ("fsync", "fdatasync") and arguments == opened[0][1] for call, arguments, _ in calls[opened[0][0]:renamed[0]]), \
        f"the replacement was not synced before it took the name: {calls[opened[0][0]:renamed[0] + 1]}"
    assert (folder / "One.md").read_text() == "One\nchanged"


def test_export_markdown_writes_a_folder(shell):
    shell.new("Recipe\nstep one")
    folder = shell.root / "notes"
    shell.ok("export", str(folder), "--format", "markdown")
    assert (folder / "Recipe.md").read_text() == "Recipe\nstep one"
    shell.fails("export", str(folder), "--format", "markdown")


# -- the same store as a running server ------------------------------------------------------------

def test_a_running_server_sees_what_the_shell_wrote(shell):
    server = Server(shell.store)
    try:
        server.initialize()
        assert server.call("memo/list", {})["total"] == 0
        memo_id = shell.new("Written in the shell")
        listed = server.call("memo/list", {})
        assert [row["id"] for row in listed["rows"]] == [memo_id]
        created = server.call("memo/create", {"text": "Written in the editor"})["memo"]
        assert shell.rows()[0]["id"] == created["id"]
        assert server.shutdown_and_exit() == 0
    finally:
        server.proc.kill()


def test_a_missing_store_folder_is_created_private_and_an_unopenable_store_explained(shell):
    nested = shell.root / "deep" / "er" / "notes.sqlite"
    memo_id = shell.ok("new", "x", env={"CLOUDNOTES_STORE": str(nested)}).out.strip()
    assert UUID_LOWER.match(memo_id)
    not_a_store = shell.root / "text.txt"
    not_a_store.write_text("hello, not SQLite")
    result = shell.fails("list", env={"CLOUDNOTES_STORE": str(not_a_store)})
    assert "cannot open the store" in result.err
    assert not_a_store.read_text() == "hello, not SQLite"


# -- completion --------------------------------------------------------------------------------------

@pytest.mark.parametrize("shell_name", ["bash", "zsh", "fish"])
def test_completion_scripts_are_generated(shell, shell_name):
    script = shell.ok("--generate-completion-script", shell_name).out
    for subcommand in ["list", "show", "new", "edit", "rm", "share", "import", "export", "serve"]:
        assert subcommand in script
    if shell_name == "bash":
        check = subprocess.run(["bash", "-n"], input=script.encode(), capture_output=True)
        assert check.returncode == 0, check.stderr


def test_ids_complete_from_the_store(shell):
    memo_id = shell.new("Complete me")
    words = ["cloudnotes", "show", memo_id[:2]]
    result = shell.ok("---completion", "show", "--", "positional@0", "2", "2", *words)
    assert memo_id[:8] in result.out.split()
    with_flag = shell.ok("---completion", "show", "--", "positional@0", "4", "1",
                         "cloudnotes", "show", "--store", str(shell.store), memo_id[:1],
                         env={"CLOUDNOTES_STORE": str(shell.root / "elsewhere.sqlite")})
    assert memo_id[:8] in with_flag.out.split()
    assert not (shell.root / "elsewhere.sqlite").exists()  # completing never creates a store

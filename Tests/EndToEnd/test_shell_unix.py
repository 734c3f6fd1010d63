"""The shell as Unix users expect it, through the real binary: `search`, unknown subcommands, `-` for
stdin and stdout, several ids at once, short ids that stay unique, output made for pipes and templates,
a missing store, the permissions warning said once, and the exit codes (0, 1, 64)."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess

from cnsupport.cli import Cli
from cnsupport.paths import BINARY
from cnsupport.session import write_entries

ISO_LOCAL = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(Z|[+-]\d{2}:\d{2})$")


def fields(line: str) -> list[str]:
    return line.split("\t")


# -- search ----------------------------------------------------------------------------------------

def test_search_finds_memos_in_any_language_from_one_character(shell):
    meeting = shell.new("회의록\n동기화 설계")
    shell.new("Groceries\nmilk")
    other = shell.new("Plan\n회의 준비")
    for query in ("회의", "회", "MILK"):
        rows = [fields(line) for line in shell.ok("search", query).out.splitlines()]
        assert len(rows) == (1 if query == "MILK" else 2), (query, rows)
        assert all(len(row) == 4 for row in rows)
    found = json.loads(shell.ok("search", "회의", "--json").out)
    assert {row["id"] for row in found} == {meeting, other}
    assert found == shell.rows("--search", "회의")  # list --search and search agree
    assert shell.ok("search", "nothing matches").out == ""


# -- unknown subcommands and exit codes ------------------------------------------------------------

def test_an_unknown_subcommand_is_named_with_a_suggestion_and_exits_64(shell):
    typo = shell.run("lsit")
    assert typo.code == 64 and typo.out == ""
    assert typo.err == "cloudnotes: unknown command 'lsit' (did you mean 'list'?)\n"
    assert shell.run("serach", "x").err.startswith("cloudnotes: unknown command 'serach' (did you mean 'search'?)")
    far = shell.run("frobnicate")
    assert far.code == 64 and "unknown command 'frobnicate'" in far.err and "did you mean" not in far.err


def test_plain_cloudnotes_still_serves(tmp_root):
    session = ('{"jsonrpc":"2.0","id":1,"method":"initialize"}\n{"jsonrpc":"2.0","id":2,"method":"shutdown"}\n'
               '{"jsonrpc":"2.0","method":"exit"}\n')
    result = subprocess.run([BINARY], input=session.encode(), capture_output=True, timeout=60,
                            env={"HOME": str(tmp_root), "CLOUDNOTES_STORE": str(tmp_root / "s.sqlite"), "PATH": "/usr/bin:/bin"})
    assert result.returncode == 0
    assert [json.loads(line)["id"] for line in result.stdout.splitlines()] == [1, 2]


def test_exit_codes_are_0_1_and_64(shell):
    memo = shell.new("One")
    assert shell.run("show", memo).code == 0
    assert shell.run("show", "00000000").code == 1          # an error: no such memo
    assert shell.run("show").code == 64                     # a usage error: no id
    assert shell.run("list", "--limit", "0").code == 64
    assert shell.run("list", "--no-such-flag").code == 64
    assert shell.run("export", "-", "--format", "markdown").code == 64


# -- - and several ids -----------------------------------------------------------------------------

def test_import_reads_stdin_and_export_writes_stdout(shell, tmp_root):
    entries = [{"title": "장보기", "body": "우유", "last_modified": 1608651333}, {"title": "Two", "body": "", "last_modified": 1608651334}]
    imported = shell.ok("import", "-", input=json.dumps(entries))
    assert "Imported 2 memos" in imported.err
    exported = shell.ok("export", "-")
    array = json.loads(exported.out)
    assert [entry["title"] for entry in array] == ["Two", "장보기"]
    assert not list(shell.home.glob("-"))  # no file named '-'
    again = Cli(tmp_root / "second" / "notes.sqlite")
    again.ok("import", "-", input=exported.out)
    assert [row["title"] for row in again.rows()] == ["Two", "장보기"]


def test_share_writes_stdout_or_a_file(shell):
    memo = shell.new("Title\nbody")
    assert shell.ok("share", memo, "-", "--format", "markdown").out == "# Title\n\nbody\n"
    assert shell.ok("share", memo).out == "Title\nbody"
    target = shell.home / "shared.txt"
    shell.ok("share", memo, str(target))
    assert target.read_text() == "Title\nbody"
    refused = shell.fails("share", memo, str(target))
    assert "--overwrite" in refused.err


def test_show_and_rm_take_several_ids_and_ids_on_stdin(shell):
    first, second, third = (shell.new(f"memo {index}\nbody") for index in range(3))
    both = shell.ok("show", first, second).out
    assert both == "memo 0\nbody\nmemo 1\nbody\n"
    from_stdin = shell.ok("show", "-", input=f"{third}\n{first}\n").out
    assert from_stdin == "memo 2\nbody\nmemo 0\nbody\n"
    listed = shell.ok("list").out  # list's lines, as they are, give the ids
    assert shell.ok("show", "-", input=listed).out.count("body") == 3
    shell.ok("rm", first, second)
    assert shell.ids() == [third]


def test_a_failing_id_is_named_the_others_still_happen_and_the_exit_code_is_1(shell):
    keep, drop = shell.new("keep"), shell.new("drop")
    result = shell.run("rm", "00000000-0000-4000-8000-000000000000", drop, "not-an-id")
    assert result.code == 1
    errors = [line for line in result.err.splitlines() if line.startswith("cloudnotes: error: ")]
    assert len(errors) == 2 and "00000000-0000-4000-8000-000000000000" in errors[0] and "not-an-id" in errors[1]
    assert shell.ids() == [keep]
    shown = shell.run("show", keep, "0000000000")
    assert shown.code == 1 and shown.out == "keep\n"


# -- short ids -------------------------------------------------------------------------------------

def test_short_ids_of_a_big_import_are_distinct_and_each_works(shell):
    count = 20_000
    entries = [{"title": f"bulk {index}", "body": "", "last_modified": 1_600_000_000} for index in range(count)]
    shell.ok("import", str(write_entries(shell.home / "bulk.json", entries)), timeout=600)
    listed = [fields(line) for line in shell.ok("list").out.splitlines()]
    short = [row[0] for row in listed]
    assert len(short) == count and len(set(short)) == count
    assert min(map(len, short)) >= 8 and not any(s.endswith("-") for s in short)
    full = [row["id"] for row in shell.rows()]
    assert all(memo_id.startswith(prefix) for memo_id, prefix in zip(full, short))
    # Every one of them names its memo: all shown at once, in order.
    texts = shell.ok("show", "-", input="\n".join(short), timeout=600).out.splitlines()
    assert texts == [row[2] for row in listed]
    assert sorted(texts) == sorted(f"bulk {index}" for index in range(count))


def test_an_ambiguous_prefix_lists_the_candidates(shell):
    ids = [shell.new(f"memo {index}") for index in range(17)]
    firsts = [memo_id[0] for memo_id in ids]
    shared = next(c for c in firsts if firsts.count(c) > 1)
    ambiguous = shell.fails("show", shared)
    assert all(memo_id in ambiguous.err for memo_id in ids if memo_id.startswith(shared))


# -- output for pipes ------------------------------------------------------------------------------

def test_a_pipe_gets_tab_separated_fields_uncut_uncoloured_and_escaped(shell):
    long_title = "A title longer than any terminal column would leave it " * 3
    shell.new(long_title.strip() + "\n" + "word " * 60)
    shell.new("tab\there and a \x1b[31mred\x1b[0m escape\nline one\nline two")
    lines = shell.ok("list", env={"TZ": "Asia/Seoul"}).out.splitlines()
    assert len(lines) == 2 and all(len(fields(line)) == 4 for line in lines)
    escaped, uncut = (fields(line) for line in lines)
    assert escaped[2] == "tab\\there and a \\x1b[31mred\\x1b[0m escape" and "\x1b" not in "".join(lines)
    assert uncut[2] == long_title.strip() and uncut[3] == ("word " * 60).strip()
    assert ISO_LOCAL.match(uncut[1]) and uncut[1].endswith("+09:00")
    row = shell.rows()[1]
    assert uncut[0] == row["id"][:len(uncut[0])]


def test_a_template_prints_the_fields_asked_for(shell):
    memo = shell.new("Templated\nbody text")
    out = shell.ok("list", "--format", "{uuid}\\t{title}|{preview}").out
    assert out == f"{memo}\tTemplated|body text\n"
    assert shell.ok("search", "body", "--format", "{title}").out == "Templated\n"
    assert shell.run("list", "--json", "--format", "{id}").code == 64


def test_on_a_terminal_the_columns_fit_its_width(shell):
    shell.new("Title\n" + "long preview " * 30)
    result = shell.ok("list", tty_out=True, env={"NO_COLOR": "1"})
    lines = result.out.splitlines()
    assert lines and all(len(line) <= 100 for line in lines) and lines[0].endswith("…")
    assert "\t" not in result.out


# -- a missing store -------------------------------------------------------------------------------

def test_a_named_store_that_does_not_exist_is_named_and_nothing_is_created(tmp_root):
    missing = tmp_root / "no" / "such" / "folder" / "notes.sqlite"
    clis = (Cli(missing, home=tmp_root / "home"), Cli(missing, home=tmp_root / "home", store_flag=False))
    shutil.rmtree(tmp_root / "no")  # made by Cli, for stores that are to be made
    for named in clis:
        for command in (["list"], ["search", "x"], ["show", "00000000"], ["export", "-"], ["share", "00000000"]):
            result = named.run(*command)
            assert result.code == 1, (command, result)
            assert str(missing) in result.err, (command, result.err)
    assert not (tmp_root / "no").exists()


def test_the_default_store_not_made_yet_lists_nothing_and_is_not_made(tmp_root):
    home = tmp_root / "home"
    home.mkdir()
    env = {"HOME": str(home), "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"}
    for command in (["list"], ["search", "x"], ["export", "-"]):
        result = subprocess.run([BINARY, *command], capture_output=True, text=True, env=env, timeout=60)
        assert result.returncode == 0, (command, result.stderr)
    assert json.loads(subprocess.run([BINARY, "export", "-"], capture_output=True, text=True, env=env).stdout) == []
    assert not (home / ".local" / "share" / "cloudnotes").exists()
    created = subprocess.run([BINARY, "new", "made now"], capture_output=True, text=True, env=env, timeout=60)
    assert created.returncode == 0 and (home / ".local" / "share" / "cloudnotes" / "notes.sqlite").exists()


# -- the permissions warning -----------------------------------------------------------------------

def test_the_permissions_warning_is_said_once_and_again_when_they_change(shell):
    shell.new("memo")
    folder = shell.store.parent
    os.chmod(folder, 0o755)
    first = shell.ok("list")
    assert "readable by other users" in first.err
    assert "readable by other users" not in shell.ok("list").err
    assert "readable by other users" not in shell.ok("search", "memo").err
    os.chmod(folder, 0o750)
    assert "mode 750" in shell.ok("list").err
    assert "readable by other users" not in shell.ok("list").err
    os.chmod(folder, 0o700)
    assert "readable by other users" not in shell.ok("list").err
    os.chmod(folder, 0o755)
    assert "readable by other users" in shell.ok("list").err  # opened up again: said again
    assert stat.S_IMODE(folder.stat().st_mode) == 0o755


def test_serve_still_logs_the_permissions_warning_every_time(shell, tmp_root):
    shell.new("memo")
    os.chmod(shell.store.parent, 0o755)
    for _ in range(2):
        result = subprocess.run([BINARY, "serve", "--store", str(shell.store)], input=b"", capture_output=True,
                                env=shell.environment(), timeout=60)
        assert "readable by other users" in result.stderr.decode()

"""The recipes in clients/shell/README.md, run as written against the real binary, so that the
documentation cannot drift from the command line."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from datetime import date

import pytest

from cnsupport.paths import REPO, path_with_binary

RECIPES = REPO / "clients" / "shell" / "README.md"


def recipe(containing: str, language: str = "sh") -> str:
    """The one ```sh (or other `language`) block of the shell README that contains `containing`."""
    blocks = re.findall(rf"```{language}\n(.*?)```", RECIPES.read_text(encoding="utf-8"), re.S)
    matching = [block for block in blocks if containing in block]
    assert len(matching) == 1, f"{len(matching)} recipes contain {containing!r}"
    return matching[0]


@pytest.fixture
def sh(tmp_root):
    """Runs a recipe in bash with `cloudnotes` on PATH and a fresh store."""
    env = {"PATH": path_with_binary(tmp_root), "HOME": str(tmp_root), "LANG": "C.UTF-8",
           "CLOUDNOTES_STORE": str(tmp_root / "notes.sqlite")}

    def run(script: str, input: str | None = None, **extra_env) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", "-e", "-c", script], input=input, capture_output=True, text=True,
                              timeout=60, env={**env, **extra_env}, cwd=tmp_root)

    run.env = env
    run.bin_dir = tmp_root / "bin"
    run.memos = lambda: json.loads(run("cloudnotes list --json").stdout)
    run.new = lambda text: run("cloudnotes new", input=text).stdout.strip()
    return run


def test_here_document_recipe(sh):
    result = sh(recipe("cloudnotes serve <<'EOF'"))
    assert result.returncode == 0, result.stderr
    messages = [json.loads(line) for line in result.stdout.splitlines()]
    responses = {message["id"]: message for message in messages if "id" in message}
    assert set(responses) == {1, 2, 3, 4} and not any("error" in r for r in responses.values())
    assert responses[3]["result"]["rows"][0]["title"] == "Written by a here-document"
    assert [row["title"] for row in sh.memos()] == ["Written by a here-document"]


def test_clipboard_recipe(sh):
    fake = sh.bin_dir / "wl-paste"
    fake.write_text("#!/bin/sh\nprintf 'From the clipboard\\n클립보드'\n")
    fake.chmod(0o755)
    result = sh(recipe("wl-paste |"))
    assert result.returncode == 0, result.stderr
    assert [row["title"] for row in sh.memos()] == ["From the clipboard"]


def test_journal_recipe_creates_the_entry_once_then_edits_it(sh, tmp_root):
    editor = tmp_root / "append"
    editor.write_text('#!/bin/sh\nprintf "\\n- %s" "$(date +%s%N)" >> "$1"\n')
    editor.chmod(0o755)
    script = recipe("Journal $(date +%F)")
    for _ in range(2):
        result = sh(script, EDITOR=str(editor))
        assert result.returncode == 0, result.stderr
    memos = sh.memos()
    assert len(memos) == 1 and memos[0]["title"].startswith("Journal ")
    text = sh(f"cloudnotes show {memos[0]['id']}").stdout
    assert text.count("\n- ") == 2  # both runs edited the same entry


def test_fzf_recipe_prints_the_memos_picked_by_title_or_preview(sh):
    sh.new("회의록\n동기화 설계")
    sh.new("Groceries\nmilk")
    sh.new("Plan\n회의 준비")
    script = recipe("| fzf --delimiter")
    # fzf, told by FZF_DEFAULT_OPTS to pick every line that matches without asking, stands for a person.
    picked = sh(script, FZF_DEFAULT_OPTS="--filter 회의")
    assert picked.returncode == 0, picked.stderr
    assert sorted(picked.stdout.splitlines()) == sorted(["회의록", "동기화 설계", "Plan", "회의 준비"])
    year = sh("cloudnotes list --format '{date}'").stdout[:4]
    assert sh(script, FZF_DEFAULT_OPTS=f"--filter {year}").stdout == ""  # ids and dates are not searched
    # The preview: fzf puts a line's first field, quoted, in place of {1}.
    first_line = sh("cloudnotes list").stdout.splitlines()[0]
    preview = re.search(r"--preview '([^']*)'", script).group(1).replace("{1}", shlex.quote(first_line.split("\t")[0]))
    assert sh(preview).stdout == "Plan\n회의 준비"


def test_grep_recipe_finds_every_line_that_mentions_the_word(sh, tmp_root):
    sh.new("Invoices\nsend the INVOICE to Kim\nnothing here")
    sh.new("Groceries\nmilk")
    result = sh(recipe("grep -rn"))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2 and all(line.startswith(str(tmp_root / "notes-md")) for line in lines)
    assert lines[-1].endswith(":send the INVOICE to Kim")


def test_cron_recipe_makes_todays_note_once(sh, tmp_root):
    local_bin = tmp_root / ".local" / "bin"
    local_bin.mkdir(parents=True)
    script = local_bin / "daily-note"
    script.write_text(recipe("daily-note"))
    script.chmod(0o755)
    (local_bin / "cloudnotes").symlink_to(sh.bin_dir / "cloudnotes")
    line = recipe("daily-note", language="crontab").strip()
    command = line.split(None, 5)[5]
    cron_env = {"HOME": str(tmp_root), "LOGNAME": "cron", "SHELL": "/bin/sh", "PATH": "/usr/bin:/bin"}
    for _ in range(2):  # as cron runs a line: with /bin/sh, a bare PATH and no CLOUDNOTES_STORE
        result = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True, env=cron_env, timeout=60)
        assert result.returncode == 0 and result.stdout == "", result
    store = tmp_root / ".local" / "share" / "cloudnotes" / "notes.sqlite"
    listed = sh("cloudnotes list --json", CLOUDNOTES_STORE=str(store))
    titles = [row["title"] for row in json.loads(listed.stdout)]
    assert titles == [f"Daily {date.today():%Y-%m-%d}"]


def test_backup_recipe_restores_every_memo(sh, tmp_root):
    for index in range(5):
        sh.new(f"memo {index}\n백업 {index}")
    backup = sh(recipe("cloudnotes export - | gzip"))
    assert backup.returncode == 0 and backup.stdout == "", backup.stderr
    made = tmp_root / "backups" / f"notes-{date.today():%Y-%m-%d}.json.gz"
    restore = recipe("| cloudnotes import -")
    named = tmp_root / "backups" / re.search(r"notes-[0-9-]+\.json\.gz", restore).group(0)
    if named != made:
        made.rename(named)
    restored = sh(restore, CLOUDNOTES_STORE=str(tmp_root / "restored.sqlite"))
    assert restored.returncode == 0, restored.stderr
    every_text = "cloudnotes list | cloudnotes show -"
    assert sh(every_text, CLOUDNOTES_STORE=str(tmp_root / "restored.sqlite")).stdout == sh(every_text).stdout
    assert sh(every_text).stdout.count("백업") == 5

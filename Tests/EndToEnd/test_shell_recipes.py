"""The recipes in clients/shell/README.md, run as written against the real binary, so that the
documentation cannot drift from the command line."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from cnsupport.paths import REPO, path_with_binary

RECIPES = REPO / "clients" / "shell" / "README.md"


def recipe(containing: str) -> str:
    """The ```sh block of the shell README that contains `containing`."""
    blocks = re.findall(r"```sh\n(.*?)```", RECIPES.read_text(encoding="utf-8"), re.S)
    matching = [block for block in blocks if containing in block]
    assert len(matching) == 1, f"{len(matching)} recipes contain {containing!r}"
    return matching[0]


@pytest.fixture
def sh(tmp_root):
    """Runs a recipe in bash with `cloudnotes` on PATH and a fresh store."""
    env = {"PATH": path_with_binary(tmp_root), "HOME": str(tmp_root), "LANG": "C.UTF-8",
           "CLOUDNOTES_STORE": str(tmp_root / "notes.sqlite")}

    def run(script: str, **extra_env) -> subprocess.CompletedProcess:
        return subprocess.run(["bash", "-e", "-c", script], capture_output=True, text=True, timeout=60,
                              env={**env, **extra_env}, cwd=tmp_root)

    run.bin_dir = tmp_root / "bin"
    run.memos = lambda: json.loads(run("cloudnotes list --json").stdout)
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

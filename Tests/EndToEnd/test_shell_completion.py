"""Completion in bash, zsh and fish, judged by the shells themselves: each one loads the script the
binary generates and is asked what it offers on Tab (cnsupport/completion.py). And the man page, which
`scripts/man` generates from the same parser."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from cnsupport.completion import offers
from cnsupport.paths import BINARY, path_with_binary

SHELLS = ["bash", "zsh", "fish"]
COMMANDS = {"list", "search", "show", "new", "edit", "rm", "history", "restore", "trash", "undelete", "share", "import",
            "export", "sync", "serve"}


@pytest.fixture
def complete(shell, tmp_root):
    """What a shell offers after a command line, with the store of `shell` as the default store."""
    env = shell.environment({"PATH": path_with_binary(tmp_root)})
    folder = tmp_root / "completion"
    folder.mkdir()
    return lambda shell_name, line: offers(shell_name, line, folder, env)


@pytest.mark.parametrize("shell_name", SHELLS)
def test_every_command_is_offered(complete, shell_name):
    assert COMMANDS <= set(complete(shell_name, "cloudnotes "))
    assert set(complete(shell_name, "cloudnotes se")) == {"search", "serve"}


@pytest.mark.parametrize("shell_name", SHELLS)
def test_the_new_options_are_offered(complete, shell_name):
    for command in ("list", "search"):
        assert {"--format", "--limit", "--json"} <= set(complete(shell_name, f"cloudnotes {command} --")), command
    assert "--overwrite" in complete(shell_name, "cloudnotes share --")
    assert set(complete(shell_name, "cloudnotes export --format ")) == {"json", "markdown"}


@pytest.mark.parametrize("shell_name", SHELLS)
def test_memo_ids_are_offered_as_list_prints_them(shell, complete, shell_name):
    for index in range(3):
        shell.new(f"memo {index}")
    short = dict(line.split("\t") for line in shell.ok("list", "--format", "{uuid}\t{id}").out.splitlines())
    for command in ("show", "rm", "edit", "share", "history", "restore"):
        assert sorted(complete(shell_name, f"cloudnotes {command} ")) == sorted(short.values()), command
    # undelete offers the memos in the trash, as `trash` prints them
    gone = shell.new("gone")
    shell.rm(gone)
    trashed = shell.ok("trash").out.split("\t")[0]
    assert complete(shell_name, "cloudnotes undelete ") == [trashed]
    memo_id, its_short = next(iter(short.items()))
    typed = next(memo_id[:n] for n in range(1, 37) if sum(m.startswith(memo_id[:n]) for m in short) == 1)
    assert complete(shell_name, f"cloudnotes show {typed}") == [its_short]


def test_completing_reads_the_store_on_the_command_line_and_creates_none(shell, tmp_root):
    memo_id = shell.new("Complete me")
    elsewhere = shell.home / "elsewhere.sqlite"
    env = shell.environment({"PATH": path_with_binary(tmp_root), "CLOUDNOTES_STORE": str(elsewhere)})
    folder = tmp_root / "completion"
    folder.mkdir()
    assert offers("bash", "cloudnotes show ", folder, env) == []
    with_flag = offers("bash", f"cloudnotes show --store {shell.store} ", folder, env)
    assert len(with_flag) == 1 and memo_id.startswith(with_flag[0])
    assert not elsewhere.exists()  # completing never creates a store


def test_the_man_page_documents_every_command_and_option():
    manual = os.environ.get("CLOUDNOTES_MANUAL")
    if not manual:
        pytest.skip("CLOUDNOTES_MANUAL is not set: scripts/test generates the man page with scripts/man")
    rendered = subprocess.run(["man", "-l", manual], capture_output=True, text=True, check=True, timeout=60,
                              env={**os.environ, "MANWIDTH": "200", "MAN_KEEP_FORMATTING": ""}).stdout
    assert "cloudnotes" in Path(manual).read_text()
    parser = json.loads(subprocess.run([BINARY, "--experimental-dump-help"], capture_output=True, check=True,
                                       timeout=60).stdout)["command"]
    for command in parser["subcommands"]:
        if command["commandName"] == "help":
            continue
        assert f"\n     {command['commandName']}" in rendered, command["commandName"]
        for argument in command.get("arguments", []):
            if argument.get("shouldDisplay") and argument["kind"] != "positional":
                name = argument["preferredName"]
                flag = ("--" if name["kind"] == "long" else "-") + name["name"]
                assert flag in rendered, (command["commandName"], flag)

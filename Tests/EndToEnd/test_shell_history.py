"""Versions and the trash from the shell: `history`, `restore`, `rm` to the trash, `trash`, `undelete`
and `trash --empty`, in pipes (tab-separated), as JSON (checked against the protocol's schema) and
with short ids."""

from __future__ import annotations

import json

from cnsupport.schema import validator_for


def history_lines(shell, memo_id: str) -> list[list[str]]:
    return [line.split("\t") for line in shell.ok("history", memo_id).out.splitlines()]


def test_each_shell_edit_keeps_the_text_it_replaces_and_history_lists_it(shell):
    memo_id = shell.new("Recipe\nflour")
    shell.edit(memo_id, "Recipe\nflour\nsugar")
    shell.edit(memo_id, "Recipe\nflour\nsugar\neggs")
    lines = history_lines(shell, memo_id)
    # number, date, origin, size, title: tab-separated in a pipe, newest first
    assert [(line[0], line[2], line[3], line[4]) for line in lines] == [
        ("2", "shell", str(len("Recipe\nflour\nsugar")), "Recipe"), ("1", "shell", str(len("Recipe\nflour")), "Recipe")]
    assert shell.ok("history", memo_id[:8], "1").out == "Recipe\nflour"
    versions = shell.history(memo_id)
    validator_for("memo/history", "result").validate({"id": memo_id, "total": 2, "versions": versions})
    shown = json.loads(shell.ok("history", memo_id, "2", "--json").out)
    validator_for("memo/version", "result").validate(shown)
    assert shown["text"] == "Recipe\nflour\nsugar"


def test_restore_brings_an_earlier_text_back_and_can_be_undone(shell):
    memo_id = shell.new("Plan A")
    shell.edit(memo_id, "Plan B")
    run = shell.ok("restore", memo_id[:8], "1")
    assert "Restored version 1 of “Plan A”." in run.err
    assert shell.text(memo_id) == "Plan A"
    assert [v["title"] for v in shell.history(memo_id)] == ["Plan B", "Plan A"]
    shell.ok("restore", memo_id, "2")
    assert shell.text(memo_id) == "Plan B"
    failed = shell.fails("restore", memo_id, "42")
    assert "keeps no version 42" in failed.err
    assert shell.text(memo_id) == "Plan B"


def test_rm_puts_memos_in_the_trash_and_undelete_takes_them_back_by_short_id(shell):
    first = shell.new("Groceries\nmilk")
    second = shell.new("Errands\nbank")
    run = shell.ok("rm", first, second)
    assert "to the trash" in run.err
    assert shell.ids() == []
    rows = shell.trash()
    assert [row["id"] for row in rows] == [second, first]
    validator_for("trash/list", "result").validate({"total": 2, "rows": rows})
    lines = [line.split("\t") for line in shell.ok("trash").out.splitlines()]
    assert [(line[2], line[3]) for line in lines] == [("Errands", "bank"), ("Groceries", "milk")]
    assert all(second.startswith(line[0]) or first.startswith(line[0]) for line in lines)
    shell.ok("undelete", lines[1][0])
    assert shell.ids() == [first]
    assert shell.text(first) == "Groceries\nmilk"
    failed = shell.run("undelete", first, second)
    errors = [line for line in failed.err.splitlines() if line.startswith("cloudnotes: error: ")]
    assert failed.code == 1 and len(errors) == 1 and first in errors[0], "a memo that is not in the trash is named"
    assert shell.trash() == [] and set(shell.ids()) == {first, second}, "the other one still came back"


def test_trash_empty_purges_everything_in_it(shell):
    memo_id = shell.new("Short-lived")
    shell.rm(memo_id)
    run = shell.ok("trash", "--empty")
    assert "Purged 1 memo." in run.err
    assert shell.trash() == []
    assert shell.fails("undelete", memo_id).code == 1


def test_reading_the_trash_or_history_never_creates_a_store(tmp_root):
    from cnsupport.cli import Cli
    missing = Cli(tmp_root / "nowhere" / "notes.sqlite")
    assert missing.fails("trash").code == 1
    assert not missing.store.exists()

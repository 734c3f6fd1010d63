"""`cloudnotes import` and `export`: the sample file and generated ones, a progress bar on a terminal
only, bad files refused with nothing changed, and exports on disk (synced) before they take their name."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from cnsupport.cli import Cli
from cnsupport.paths import sample_path
from cnsupport.session import make_entries, write_entries


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
    source = write_entries(shell.home / "memos.json", memos)
    result = shell.run("import", str(source), tty_err=True)
    assert result.code == 0, result.err
    assert "Importing" in result.err and "100%" in result.err
    assert "Imported 5000 memos" in result.err
    exported = shell.run("export", str(shell.home / "out.json"), tty_err=True)
    assert exported.code == 0, exported.err
    assert "Exporting" in exported.err and "100%" in exported.err and "Exported 5000 memos" in exported.err
    assert "Exporting" not in shell.ok("export", str(shell.home / "again.json")).err  # no bar in a pipe


def test_a_bad_import_file_is_refused_and_changes_nothing(shell):
    keep = shell.new("Already here")
    source = shell.home / "bad.json"
    source.write_text('[{"title": "ok", "body": "", "last_modified": 1}, {"title": 5}]')
    result = shell.fails("import", str(source))
    assert "entry 1" in result.err
    shell.fails("import", str(shell.home / "missing.json"))
    assert [row["id"] for row in shell.rows()] == [keep]


def test_export_json_round_trips_and_never_overwrites_unasked(shell):
    shell.new("One\nfirst")
    shell.new("Two\nsecond")
    target = shell.home / "out.json"
    assert "Exported 2 memos" in shell.ok("export", str(target)).err
    exported = json.loads(target.read_text())
    assert sorted(entry["title"] for entry in exported) == ["One", "Two"]
    refused = shell.fails("export", str(target))
    assert "--overwrite" in refused.err
    shell.new("Three")
    assert json.loads(shell.ok("export", str(target), "--overwrite", "--json").out)["exported"] == 3
    other = Cli(shell.home / "other" / "notes.sqlite", store_flag=False)
    other.ok("import", str(target))
    assert sorted(row["title"] for row in other.rows()) == ["One", "Three", "Two"]


def traced_calls(shell, *args: str) -> list[tuple[str, str, str]]:
    """Runs `cloudnotes *args` under strace: its file calls, in order, as (call, arguments, result)."""
    probe = subprocess.run(["strace", "-qq", "-o", os.devnull, "true"], capture_output=True)
    if probe.returncode != 0:  # a container without ptrace: nothing here can be traced
        pytest.skip(f"strace cannot trace here: {probe.stderr.decode().strip()}")
    trace = shell.home / "strace.txt"
    calls = "openat,close,fsync,fdatasync,syncfs,link,linkat,unlink,unlinkat,rename,renameat,renameat2"
    command = ["strace", "-f", "-qq", "-o", str(trace), "-e", f"trace={calls}", *shell.command(*args)]
    run = subprocess.run(command, capture_output=True, env=shell.environment(), cwd=shell.home, timeout=60)
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
        target = shell.home / "out.json"
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
        start, folder, closed = folder_descriptor(calls, shell.home, before=written)
        folder_synced = [i for i, (call, arguments, _) in enumerate(calls)
                         if named[0] < i < closed and call in ("fsync", "fdatasync") and arguments == folder]
        assert folder_synced, f"the folder was not synced after the naming: {calls[start:]}"
        temporary = calls[written][1].split('"')[1]
        removed = [i for i, (call, arguments, result) in enumerate(calls)
                   if call.startswith("unlink") and f'"{temporary}"' in arguments and result == "0"]
        assert not removed or removed[0] < folder_synced[0], f"the temporary name was removed after the folder's sync: {calls[named[0]:]}"
        assert json.loads(target.read_text())[0]["title"] == "One"
        assert [p.name for p in shell.home.iterdir() if p.name.endswith(".tmp")] == []


def test_export_markdown_syncs_its_files_at_once_after_the_last(shell):
    for title in ("One", "Two", "Three"):
        shell.new(f"{title}\nbody")
    folder = shell.home / "notes"
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
    folder = shell.home / "notes"
    shell.ok("export", str(folder), "--format", "markdown")
    assert (folder / "Recipe.md").read_text() == "Recipe\nstep one"
    shell.fails("export", str(folder), "--format", "markdown")

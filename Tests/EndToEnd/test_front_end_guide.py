"""The smallest correct client of protocol/README.md §12 works as it is written there.

The code block is taken from the specification and run twice: as the script it is (it creates a memo,
shows its window and exits 0), and as a module whose front end keeps a window of ten rows while the shell,
another process, adds and deletes memos around it. Its window must then be the server's first rows.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

from cnsupport.cli import Cli
from cnsupport.paths import REPO, path_with_binary

SPEC = REPO / "protocol" / "README.md"


def guide_code(tmp_path: Path) -> Path:
    """The Python block under "The smallest correct client", written to a file."""
    text = SPEC.read_text(encoding="utf-8")
    section = text[text.index("### The smallest correct client"):]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    path = tmp_path / "smallest.py"
    path.write_text(code, encoding="utf-8")
    return path


def test_the_script_runs_as_written(tmp_path):
    script = guide_code(tmp_path)
    env = dict(os.environ, PATH=path_with_binary(tmp_path))
    result = subprocess.run([sys.executable, str(script), str(tmp_path / "notes.sqlite")], capture_output=True,
                            text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0].startswith("Hello")
    assert result.stdout.splitlines()[-1] == "1 memos; the detail pane shows 'Hello'"


def test_its_window_follows_another_process(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", path_with_binary(tmp_path))
    spec = importlib.util.spec_from_file_location("smallest", guide_code(tmp_path))
    smallest = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(smallest)
    store = tmp_path / "notes.sqlite"
    shell = Cli(store)
    front_end = smallest.FrontEnd(str(store))
    try:
        front_end.request("initialize", clientInfo={"name": "guide test"})
        front_end.send({"method": "initialized"})
        ids = [shell.new(f"memo {index}") for index in range(14)]
        front_end.show()
        shell.rm(ids[-1])      # inside the window: it is short until shown again
        shell.rm(ids[0])       # below it
        shell.new("newest")    # above everything
        # This client reads its stdout only while it waits for a response; the notifications are there.
        front_end.request("memo/list", offset=0, limit=1)
        front_end.show()
        listed = shell.rows()
        assert front_end.total == len(listed) == 13
        assert [row["id"] for row in front_end.rows] == [row["id"] for row in listed[:10]]
        front_end.request("shutdown")
        front_end.send({"method": "exit"})
        assert front_end.server.wait(timeout=30) == 0
    finally:
        if front_end.server.poll() is None:
            front_end.server.kill()

"""The README's two-machine sync walkthrough, run as written against the real binary, so that a new
user who follows it gets what it promises: both edits, made apart, on both stores."""

from __future__ import annotations

import re
import subprocess

from cnsupport.paths import REPO, path_with_binary


def walkthrough() -> str:
    """The ```sh block of the README's section "Sync between machines"."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Sync between machines", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    assert len(blocks) == 1, "the sync section should hold exactly one shell block"
    return blocks[0]


def test_readme_walkthrough_merges_both_machines_edits(tmp_path):
    env = {"PATH": path_with_binary(tmp_path), "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    result = subprocess.run(["bash", "-e", "-c", walkthrough()], capture_output=True, text=True, timeout=120,
                            env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    merged = "Packing list for the lake\ntent\nstove and gas\n"
    assert result.stdout.count(merged) == 2, result.stdout  # `show` on the laptop, then on the desktop
    assert "Packing list" in result.stdout.split(merged)[0], "the desktop's list shows the memo"
    status = result.stdout.rsplit(merged, 1)[1]
    assert "file:///tmp/walkthrough/remote" in status and "conflicts: 0" in status, status

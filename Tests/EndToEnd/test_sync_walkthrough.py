"""The README's two-machine sync walkthrough, run as written against the real binary, so that a new
user who follows it gets what it promises: both edits, made apart, on both stores."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from cnsupport.paths import REPO, path_with_binary


def walkthrough(index: int) -> str:
    """The `index`th ```sh block of the README's section "Sync between machines": two machines, an
    encrypted remote, an S3 bucket."""
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Sync between machines", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    assert len(blocks) == 3, "the sync section should hold three shell blocks: two machines, encrypted, S3"
    return blocks[index]


def run_walkthrough(index: int, tmp_path) -> subprocess.CompletedProcess:
    """The walkthrough run as written by bash -e, with the binary first on PATH and HOME in `tmp_path`."""
    env = {"PATH": path_with_binary(tmp_path), "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    result = subprocess.run(["bash", "-e", "-c", walkthrough(index)], capture_output=True, text=True, timeout=120,
                            env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    return result


def test_readme_walkthrough_merges_both_machines_edits(tmp_path):
    result = run_walkthrough(0, tmp_path)
    merged = "Packing list for the lake\ntent\nstove and gas\n"
    assert result.stdout.count(merged) == 2, result.stdout  # `show` on the laptop, then on the desktop
    assert "Packing list" in result.stdout.split(merged)[0], "the desktop's list shows the memo"
    status = result.stdout.rsplit(merged, 1)[1]
    assert "file:///tmp/walkthrough/remote" in status and "conflicts: 0" in status, status


def test_readme_encrypted_walkthrough_syncs_sealed_files_and_changes_the_passphrase(tmp_path):
    result = run_walkthrough(1, tmp_path)
    assert "nothing readable on the remote" in result.stdout, result.stdout
    listed, status = result.stdout.split("nothing readable on the remote", 1)[1].split("remote:", 1)
    assert "Doctor" in listed, result.stdout
    assert "encrypted: yes" in status and "conflicts: 0" in status, status
    assert "passphrase" in result.stderr and "changed" in result.stderr, result.stderr
    marker = (Path("/tmp/walkthrough-private/remote") / "cloudnotes-sync.json").read_text()
    assert '"version":3' in marker.replace(" ", ""), marker


def test_readme_s3_walkthrough_syncs_two_machines_through_a_bucket(tmp_path):
    result = run_walkthrough(2, tmp_path)
    assert "\tBread\t" in result.stdout, result.stdout  # the desktop's list
    keys = result.stdout.split("\tBread\t", 1)[1]
    assert "cloudnotes/cloudnotes-sync.json" in keys and keys.count("/head.json") == 2, keys

"""The fuzzer's seed corpus and every input it ever found to crash the server (Tests/Fuzz/regressions),
replayed through the message path by the fuzz target built without libFuzzer. The target replays each
input in both framings itself (Sources/CloudNotesFuzz/FuzzMain.swift): as JSON lines, and with each of
its lines as a Content-Length body, whose answers must all come back as Content-Length bodies."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from cnsupport.paths import REPO

FUZZ_BIN = Path(os.environ.get("CLOUDNOTES_FUZZ_BIN", str(REPO / ".build" / "debug" / "CloudNotesFuzz")))
CORPORA = [REPO / "Tests" / "Fuzz" / "seeds", REPO / "Tests" / "Fuzz" / "regressions"]


def test_the_seed_and_regression_corpora_replay_cleanly():
    assert FUZZ_BIN.exists(), f"{FUZZ_BIN} is missing: run `swift build` first"
    inputs = sorted(str(path) for corpus in CORPORA for path in corpus.iterdir() if path.name != "README.md")
    assert len(inputs) >= 10, inputs
    result = subprocess.run([str(FUZZ_BIN), *inputs], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, f"an input broke an invariant:\n{result.stderr[-3000:]}"
    assert f"replayed {len(inputs)} inputs" in result.stdout


def test_an_unreadable_input_fails_the_replay_rather_than_passing(tmp_path):
    # A corpus file that cannot be read must fail the run, never be skipped.
    bad = tmp_path / "input"
    bad.write_bytes(b'{"jsonrpc":"2.0","id":1,"method":"memo/list"}\n')
    missing = tmp_path / "does-not-exist"
    result = subprocess.run([str(FUZZ_BIN), str(bad), str(missing)], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0 and "cannot read" in result.stderr

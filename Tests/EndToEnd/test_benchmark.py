"""The benchmark (`bench/cloudnotes_bench.py`, which `bench/run` runs) against the real binary, at a
size small enough for the test suite: every scenario and baseline that issue 3 names is measured and
written, and each baseline is taken where the benchmark says it is. Nothing here looks at a time: the
figures are the benchmark's business, not the tests'."""

import json
import subprocess
import sys

import pytest

from conftest import BINARY, REPO

sys.path.insert(0, str(REPO / "bench"))
from benchlib.driver import BenchError, Driver, pipelined  # noqa: E402
from benchlib.scenarios import PIPELINED_ROUNDS  # noqa: E402

SIZES = (200, 400)

# Each latency scenario the table prints, with p50, p99 and max.
LATENCY_SCENARIOS = (
    "startup_initialize", "startup_didshow", "select", "list_first", "list_offset90",
    "update_1kb", "update_100kb", "edit_1kb", "edit_100kb",
    "search_rare", "search_rare_list", "search_common", "search_common_list",
    "search_ko2", "search_ko2_list", "search_en2", "search_en2_list",
)
# The baselines measured in the same run: the pipe's floor, the same searches on SQLite directly, and
# the raw insert of the same rows.
BASELINES = (
    "pipe_floor", "pipe_100kb", "cat_start", "cat_pipelined", "fsync", "raw_insert",
    "sqlite_search_rare", "sqlite_search_common", "sqlite_search_ko2", "sqlite_search_en2",
)


@pytest.fixture(scope="module")
def bench_run(tmp_path_factory):
    """One small run of the benchmark, for every test here: its process, its JSON figures, its folder."""
    tmp_path = tmp_path_factory.mktemp("bench")
    results = tmp_path / "results"
    result = subprocess.run(
        [sys.executable, str(REPO / "bench" / "cloudnotes_bench.py"), "--bin", BINARY,
         "--sizes", ",".join(map(str, SIZES)), "--ops", "20", "--warmup", "5", "--starts", "2",
         "--pipelined", "50", "--no-rebuild-baseline", "--results-dir", str(results),
         "--work-dir", str(tmp_path / "work")],
        capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-4000:] + result.stdout[-4000:]
    return result, json.loads((results / "latest.json").read_text(encoding="utf-8")), results


def test_benchmark_measures_every_scenario_and_baseline(bench_run):
    result, figures, results = bench_run
    assert sorted(figures["sizes"]) == sorted(map(str, SIZES))
    for size in SIZES:
        measured = figures["sizes"][str(size)]
        for name in LATENCY_SCENARIOS:
            scenario = measured["scenarios"][name]
            assert scenario["n"] > 0, (size, name)
            assert 0 < scenario["p50_ns"] <= scenario["p99_ns"] <= scenario["max_ns"], (size, name, scenario)
        assert measured["scenarios"]["throughput"]["per_second"] > 0
        assert measured["scenarios"]["import"]["elapsed_ns"] > 0
        assert measured["baselines"]["raw_insert"]["rows"] == size
        for name in BASELINES:
            assert name in measured["baselines"], (size, name)
        assert measured["peak_rss"]["kb"] > 0
    table = (results / "latest.txt").read_text(encoding="utf-8")
    for size in SIZES:
        assert f"memo/import of {size:,} memos" in table
    assert "ratio" in table and "target" in table and "== scaling" in table
    assert result.stdout.strip(), "the tables go to stdout"


def test_the_imports_baseline_is_measured_just_before_the_import(bench_run):
    # The machine's speed moves within minutes; the raw insert is compared with the import, so it is
    # measured in the same minute, between the data and the import of each size.
    result, _, _ = bench_run
    log = result.stderr
    for size in SIZES:
        block = log.split(f"=== {size:,} memos: data, import, indexing ===", 1)[1].split("\n===", 1)[0]
        lines = block.splitlines()
        raw = lines.index("baseline: raw SQLite insert of the same rows (no full-text index, as the server's import)")
        assert lines[raw + 2] == "import", block


def test_pipelined_rounds_take_turns_across_sizes_and_send_the_same_texts(bench_run):
    # One pipelined run lasts about half a second, as long as this machine's speed takes to move: the
    # figure of each size is the median of rounds taken in turns with the other sizes.
    result, figures, _ = bench_run
    for size in SIZES:
        throughput = figures["sizes"][str(size)]["scenarios"]["throughput"]
        rates = throughput["rounds_per_second"]
        assert len(rates) == PIPELINED_ROUNDS
        assert throughput["per_second"] == sorted(rates)[len(rates) // 2]
        assert len(set(throughput["rounds_start_bytes"])) == 1, throughput["rounds_start_bytes"]
    headings = [line for line in result.stderr.splitlines() if "pipelined round" in line]
    order = [(int(line.split()[1].replace(",", "")), int(line.split("round ")[1].split()[0])) for line in headings]
    # Each round begins with the size after the one the last round began with.
    expected = [(SIZES[(r + i) % len(SIZES)], r + 1) for r in range(PIPELINED_ROUNDS) for i in range(len(SIZES))]
    assert order == expected, headings


# A peer that answers each line with a notification and a response, as the server answers an update,
# and writes them a few bytes at a time, so that reads end inside the marks the reader counts.
DRIBBLING_PEER = r"""
import os, sys, time
for line in sys.stdin.buffer:
    rid = line.split(b'"id":', 1)[1].split(b",", 1)[0]
    out = (b'{"jsonrpc":"2.0","method":"list/didUpdate","params":{"id":' + rid + b'}}\n'
           + b'{"jsonrpc":"2.0","id":' + rid + b',"result":{"text":"' + b"x" * int(rid) + b'"}}\n')
    for start in range(0, len(out), 7):
        os.write(1, out[start:start + 7])
        time.sleep(0.0002)
"""

# Forty updates, numbered from 1, for the peers above.
UPDATE_LINES = [b'{"jsonrpc":"2.0","id":%d,"method":"memo/update"}\n' % i for i in range(1, 41)]


def test_pipelined_counts_responses_that_arrive_in_pieces():
    peer = Driver([sys.executable, "-c", DRIBBLING_PEER], timeout=60, label="dribbling peer")
    received = []
    try:
        _, responses = pipelined(peer, UPDATE_LINES, received=received)
    finally:
        peer.proc.stdin.close()
        peer.proc.wait(timeout=10)
    assert [json.loads(r)["id"] for r in responses] == list(range(1, 41))
    assert json.loads(responses[-1])["result"]["text"] == "x" * 40, "the last response is read whole"
    assert len(received) == 80 and b"list/didUpdate" in received[0]


def test_pipelined_refuses_responses_it_would_not_count():
    # Responses whose keys come in another order never match the reader's mark: it says so after the
    # first lines, instead of waiting for its watchdog.
    reordered = DRIBBLING_PEER.replace("""b'{"jsonrpc":"2.0","id":' + rid""", """b'{"id":' + rid + b',"jsonrpc":"2.0"'""")
    assert reordered != DRIBBLING_PEER
    peer = Driver([sys.executable, "-c", reordered], timeout=60, label="reordering peer")
    try:
        with pytest.raises(BenchError, match="which the pipelined reader counts"):
            pipelined(peer, UPDATE_LINES)
        assert not peer.killed_by_watchdog
    finally:
        peer.proc.stdin.close()
        peer.proc.kill()
        peer.proc.wait(timeout=10)


def test_pipelined_through_cat_counts_every_line():
    lines = [b'{"id":%d,"text":"%s"}\n' % (i, b"y" * (i % 97)) for i in range(3000)]
    cat = Driver(["cat"], timeout=60, label="cat")
    try:
        _, echoed = pipelined(cat, lines, count_every_line=True)
    finally:
        cat.close_cat()
    assert [line + b"\n" for line in echoed] == lines

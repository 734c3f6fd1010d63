"""bench/compare.py's request modes: typing and pipelined updates (wall time, or instructions with
--callgrind), and --reads (list pages and selects)."""

from __future__ import annotations

import os
import statistics
import tempfile
import time

from .compare_base import WARMUP, counted_instructions, in_turns, pipelined_rate, typing, write_benchmark_memos
from .driver import BenchError, log, start_initialized
from .stores import unindexed_count

def wall_time(binaries: dict, store: str, texts: dict, args) -> None:
    results = {name: {"100 KB": [], "1 KB": [], "pipelined": []} for name in binaries}
    names = list(binaries)
    for r in range(args.rounds):
        for name in in_turns(names, r):
            d = start_initialized([binaries[name], "serve", "--store", store], name)
            results[name]["100 KB"].append(statistics.median(typing(d, texts["100 KB"], args.ops)))
            results[name]["1 KB"].append(statistics.median(typing(d, texts["1 KB"], args.ops * 3)))
            if args.pipelined > 0:  # 0 leaves them out
                results[name]["pipelined"].append(pipelined_rate(d, texts["1 KB"], args.pipelined))
            d.shutdown()
            log(f"round {r + 1}/{args.rounds} {name} done")
    base = names[0]
    print(f"medians of {args.rounds} alternating runs (each run's p50 for typing)")
    for scenario, unit in (("100 KB", "µs"), ("1 KB", "µs"), ("pipelined", "/s")):
        if not results[base][scenario]:
            continue
        label = f"memo/update {scenario}" if scenario != "pipelined" else f"{args.pipelined} pipelined 1 KB updates"
        for name in names:
            runs = results[name][scenario]
            value = statistics.median(runs)
            shown = [f"{x / 1e3:.0f}" if unit == "µs" else f"{x:.0f}" for x in runs]
            ratio = value / statistics.median(results[base][scenario])
            figure = f"{value / 1e3:8.0f} µs" if unit == "µs" else f"{value:8.0f}/s"
            print(f"{label:34} {name:>8} {figure}  {ratio:5.2f}x {base}   runs: {' '.join(shown)}")


def callgrind(binaries: dict, store: str, texts: dict, args) -> None:
    with tempfile.TemporaryDirectory(prefix="compare-") as work:
        print(f"instructions per memo/update (callgrind, {args.ops} timed after {WARMUP})")
        for name, binary in binaries.items():
            for scenario, text in texts.items():
                total, sqlite = counted_instructions(
                    binary, store, work, lambda d, zero, text=text: typing(d, text, args.ops, on_warm=zero))
                print(f"memo/update {scenario:7} {name:>8}: {total // args.ops:>11,} in all, {(total - sqlite) // args.ops:>11,} "
                      f"outside sqlite3_step")


def indexed_store(binary: str, folder: str, count: int) -> str:
    """A store of the benchmark's `count` memos, imported by `binary`, its background indexing done."""
    data, store = os.path.join(folder, "memos.json"), os.path.join(folder, "reads.sqlite")
    write_benchmark_memos(count, data)
    d = start_initialized([binary, "serve", "--store", store], "import")
    d.call("memo/import", {"path": data})
    waited = time.monotonic()
    while unindexed_count(store) > 0:
        if time.monotonic() - waited > 600:
            raise BenchError("the background indexing did not finish in 10 minutes")
        time.sleep(0.5)
    d.shutdown()
    return store


def read_requests(store: str, ops: int) -> dict:
    """Each read scenario's requests: (method, params) in the order they are sent."""
    import sqlite3
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
        big = [row[0] for row in db.execute("SELECT id FROM memo WHERE length(text) > 50000 ORDER BY localID LIMIT 50")]
        small = [row[0] for row in db.execute(
            "SELECT id FROM memo WHERE length(text) BETWEEN 800 AND 1200 ORDER BY localID LIMIT 200")]
    return {"memo/list first page": [("memo/list", {})] * ops,
            "memo/select 100 KB": [("memo/select", {"id": big[i % len(big)]}) for i in range(ops)],
            "memo/select 1 KB": [("memo/select", {"id": small[i % len(small)]}) for i in range(ops)]}


def reads(binaries: dict, folder: str, args) -> None:
    store = indexed_store(list(binaries.values())[0], folder, args.reads_count)
    requests = read_requests(store, args.ops)
    if args.callgrind:
        print(f"instructions per request (callgrind, {args.ops} counted after {WARMUP})")
        for name, binary in binaries.items():
            for scenario, sent in requests.items():
                def drive(d, zero, sent=sent):
                    for i, (method, params) in enumerate(sent[:WARMUP] + sent):
                        if i == WARMUP:
                            zero()
                        d.call(method, params)
                total, sqlite = counted_instructions(binary, store, folder, drive)
                print(f"{scenario:22} {name:>8}: {total // len(sent):>11,} in all, {(total - sqlite) // len(sent):>11,} "
                      f"outside sqlite3_step")
        return
    results = {name: {scenario: [] for scenario in requests} for name in binaries}
    for r in range(args.rounds):
        for name in in_turns(list(binaries), r):
            d = start_initialized([binaries[name], "serve", "--store", store], name)
            for scenario, sent in requests.items():
                times = []
                for i, (method, params) in enumerate(sent[:WARMUP] + sent):
                    rid, line = d.request(method, params)
                    elapsed, response, _ = d.round_trip(line)
                    d.check(rid, response, method)
                    if i >= WARMUP:
                        times.append(elapsed)
                results[name][scenario].append(statistics.median(times))
            d.shutdown()
    base = list(binaries)[0]
    print(f"medians of {args.rounds} alternating runs (each run's p50 of {args.ops} requests), {args.reads_count:,} memos")
    for scenario in requests:
        for name in binaries:
            runs = results[name][scenario]
            value = statistics.median(runs)
            print(f"{scenario:22} {name:>8} {value / 1e3:8.0f} µs  {value / statistics.median(results[base][scenario]):5.2f}x {base}"
                  f"   runs: {' '.join(f'{x / 1e3:.0f}' for x in runs)}")

"""bench/compare.py's modes that time one long piece of work: --import, --startup and --first-sync."""

from __future__ import annotations

import os
import statistics
import subprocess
import time

from .compare_base import fresh_copies, fresh_stores, in_turns, print_latencies, write_benchmark_memos
from .driver import BenchError, Driver, start_initialized, timed_start
from .stores import bytes_between, unindexed_count, written_bytes

def imports(binaries: dict, folder: str, args) -> None:
    """Each binary in turn imports the benchmark's memos into a fresh store, then idles while its background
    indexer indexes them: the import's time, both phases' writes for storage, and the peak RSS."""
    binaries = fresh_copies(binaries, folder)
    data = os.path.join(folder, "memos.json")
    text_bytes = write_benchmark_memos(args.import_count, data)
    results = {name: [] for name in binaries}
    names = list(binaries)
    for name, store in fresh_stores(binaries, folder, args.rounds, "import"):
        d = start_initialized([binaries[name], "serve", "--store", store], name)
        rid, line = d.request("memo/import", {"path": data})
        before = written_bytes(d.proc.pid)
        elapsed, response, _ = d.round_trip(line)
        imported = written_bytes(d.proc.pid)
        if d.check(rid, response, "memo/import").get("imported") != args.import_count:
            raise BenchError(f"{name}: the import did not import {args.import_count:,} memos")
        started = time.monotonic()
        while unindexed_count(store) > 0:
            if time.monotonic() - started > 600:
                raise BenchError(f"{name}: the background indexing did not finish in 10 minutes")
            time.sleep(0.1)
        indexing = time.monotonic() - started
        indexed = written_bytes(d.proc.pid)
        peak = d.vm_kb().get("VmHWM", 0)
        d.shutdown()
        results[name].append((elapsed / 1e9, (bytes_between(before, imported) or 0) / 1e6, indexing,
                              (bytes_between(imported, indexed) or 0) / 1e6, peak / 1024))
    print(f"memo/import of {args.import_count:,} memos ({text_bytes / 1e6:,.1f} MB of text), then the background "
          f"indexing: medians of {args.rounds} alternating runs")
    base = statistics.median(run[0] for run in results[names[0]])
    for name in names:
        runs = results[name]
        seconds, written, indexing, indexing_written = (statistics.median(run[i] for run in runs) for i in range(4))
        print(f"{name:>8} import {seconds:6.2f} s  {seconds / base:5.2f}x {names[0]}, written {written:6,.0f} MB;  "
              f"indexing {indexing:6.2f} s, written {indexing_written:6,.0f} MB;  "
              f"both {(written + indexing_written) * 1e6 / text_bytes:5.1f}x the text   "
              f"peak RSS {max(run[4] for run in runs):5.1f} MB   imports: {' '.join(f'{run[0]:.2f}' for run in runs)}")


def startups(binaries: dict, folder: str, args) -> None:
    binaries = fresh_copies(binaries, folder)
    data, store = os.path.join(folder, "memos.json"), os.path.join(folder, "startup.sqlite")
    write_benchmark_memos(args.startup_count, data)
    d = start_initialized([binaries[list(binaries)[0]], "serve", "--store", store], "import")
    d.call("memo/import", {"path": data})
    d.shutdown()
    starts = 20
    to_init = {name: [] for name in binaries}
    to_show = {name: [] for name in binaries}
    for r in range(args.rounds):
        for name in in_turns(list(binaries), r):
            for i in range(starts + 2):
                d = Driver([binaries[name], "serve", "--store", store], label=name)
                initialized, shown = timed_start(d)
                d.shutdown()
                if i >= 2:
                    to_init[name].append(initialized / 1e6)
                    to_show[name].append(shown / 1e6)
    print(f"start-up on a store of {args.startup_count:,} memos ({starts} starts a round, {args.rounds} rounds, in turns):")
    print("to the initialize response")
    print_latencies(to_init)
    print("to the first detail/didShow")
    print_latencies(to_show)


def published_remote(binary: str, folder: str, count: int) -> str:
    """A folder remote holding the benchmark's `count` memos, published by `binary` through the shell
    (`cloudnotes import`, `cloudnotes sync`), in `folder`."""
    os.mkdir(folder)
    data, remote, publisher = (os.path.join(folder, name) for name in ("memos.json", "remote", "publisher.sqlite"))
    write_benchmark_memos(count, data)
    os.mkdir(remote)
    shell = {"env": {**os.environ, "HOME": folder}, "check": True, "capture_output": True}
    subprocess.run([binary, "import", data, "--store", publisher], **shell)
    subprocess.run([binary, "sync", "--store", publisher, "--remote", "file://" + remote], **shell)
    return remote


def published_remotes(binaries: dict, folder: str, count: int) -> dict[str, str]:
    """A remote for each binary (by name), published by it: a binary may write a sync format that
    another cannot read."""
    return {name: published_remote(binary, os.path.join(folder, f"remote-{index}"), count)
            for index, (name, binary) in enumerate(binaries.items())}


def first_sync(binaries: dict, folder: str, args) -> None:
    names = list(binaries)
    remotes = published_remotes(binaries, folder, args.sync_count)
    results = {name: [] for name in binaries}
    for name, store in fresh_stores(binaries, folder, args.rounds, "sync"):
        d = start_initialized([binaries[name], "serve", "--store", store, "--sync-delay", "3600"], name)
        before = written_bytes(d.proc.pid)
        started = time.perf_counter()
        d.call("sync/configure", {"remote": "file://" + remotes[name], "intervalSeconds": 0})
        d.call("sync/now", {})
        elapsed = time.perf_counter() - started
        written = bytes_between(before, written_bytes(d.proc.pid))
        memos, _ = d.call("memo/list", {"offset": 0, "limit": 1})
        if memos["total"] != args.sync_count:
            raise BenchError(f"{name}: the store holds {memos['total']:,} memos after the sync")
        d.shutdown()
        results[name].append((elapsed, (written or 0) / 1e6))
    print(f"first sync of a fresh store with a remote of {args.sync_count:,} memos (folder): medians of {args.rounds} runs in turns")
    base = statistics.median(t for t, _ in results[names[0]])
    for name in names:
        runs = results[name]
        seconds = statistics.median(t for t, _ in runs)
        print(f"{name:>8} {seconds:6.2f} s  {seconds / base:5.2f}x {names[0]}   "
              f"written meanwhile {statistics.median(w for _, w in runs):6,.0f} MB   runs: {' '.join(f'{t:.2f}' for t, _ in runs)}")

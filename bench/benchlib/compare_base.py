"""What bench/compare.py's modes share: typing and pipelined updates as the benchmark sends them, the
binaries' turns, fresh stores and copies, the benchmark's memos, latencies, and callgrind's counts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

from .data import TYPED_CHARS, generate_memos, memo_text, write_import_file
from .driver import BenchError, Driver, json_escape, pipelined, start_initialized
from .stores import remove_store

WARMUP = 50  # untimed requests before the timed ones


def update_line(d: Driver, memo_id: str, text: str, version: int) -> tuple[int, bytes]:
    """A `memo/update` request of `text` on `version`, and its id."""
    rid = d.next_id
    d.next_id += 1
    return rid, (b'{"jsonrpc":"2.0","id":%d,"method":"memo/update","params":{"id":"%s","text":"' % (rid, memo_id.encode())
                 + json_escape(text) + b'","baseVersion":%d}}\n' % version)


def new_memo(d: Driver, text: str) -> tuple[str, int]:
    """A memo created with `text`: its id and version."""
    result, _ = d.call("memo/create", {"text": text})
    return result["memo"]["id"], result["memo"]["version"]


def typing(d: Driver, text: str, count: int, on_warm=None) -> list[int]:
    """`memo/update` one character longer each time, one round trip at a time: the timed ns after the warm-up."""
    memo_id, version = new_memo(d, text)
    times = []
    for i in range(WARMUP + count):
        if i == WARMUP and on_warm:
            on_warm()
        text += TYPED_CHARS[i % len(TYPED_CHARS)]
        rid, line = update_line(d, memo_id, text, version)
        elapsed, response, _ = d.round_trip(line)
        memo = d.check(rid, response, "memo/update")["memo"]
        if memo["text"] != text:
            raise BenchError("memo/update: the reply's text is not the text sent")
        version = memo["version"]
        if i >= WARMUP:
            times.append(elapsed)
    return times


def pipelined_rate(d: Driver, text: str, count: int) -> float:
    """Updates per second for `count` updates written without waiting."""
    memo_id, version = new_memo(d, text)
    lines = []
    for i in range(count):
        text += TYPED_CHARS[i % len(TYPED_CHARS)]
        lines.append(update_line(d, memo_id, text, version + i)[1])
    elapsed, replies = pipelined(d, lines)
    if json.loads(replies[-1])["result"]["memo"]["text"] != text:
        raise BenchError("pipelined memo/update: the last reply's text is not the text sent")
    return count / (elapsed / 1e9)


def in_turns(names: list[str], round_index: int) -> list[str]:
    """`names` in this round's order: the order rotates, so that no one always goes first."""
    shift = round_index % len(names)
    return names[shift:] + names[:shift]


def counted_instructions(binary: str, store: str, folder: str, drive) -> tuple[int, int]:
    """Instructions the server runs, in all and inside `sqlite3_step`, while `drive(d, zero)` sends its
    requests, from its call of `zero()` (after its warm-up) on."""
    if not shutil.which("valgrind"):
        sys.exit("compare: --callgrind needs valgrind (apt-get install -y valgrind)")
    stripped = os.path.join(folder, "stripped-" + os.path.basename(binary))
    subprocess.run(["strip", "--strip-debug", "-o", stripped, binary], check=True)
    out = os.path.join(folder, "callgrind.%p")
    d = start_initialized(["valgrind", "--tool=callgrind", "--dump-instr=no", f"--callgrind-out-file={out}",
                           stripped, "serve", "--store", store], os.path.basename(binary))
    pid = str(d.proc.pid)
    drive(d, lambda: subprocess.run(["callgrind_control", "-z", pid], check=True, capture_output=True))
    subprocess.run(["callgrind_control", "-d", pid], check=True, capture_output=True)
    d.shutdown()
    dump = out.replace("%p", pid) + ".1"
    lines = subprocess.run(["callgrind_annotate", "--inclusive=yes", dump],
                           capture_output=True, text=True, check=True).stdout.splitlines()
    total = next(int(line.split()[0].replace(",", "")) for line in lines if "PROGRAM TOTALS" in line)
    sqlite = next((int(line.split()[0].replace(",", "")) for line in lines
                   if line.rstrip().endswith("libsqlite3.so.0.8.6]") and "sqlite3_step " in line), 0)
    return total, sqlite


def write_benchmark_memos(count: int, path: str) -> int:
    """The benchmark's `count` memos (its seed), as an import file; returns their texts' bytes."""
    memos, _ = generate_memos(count, 20240521, "xylophone")
    write_import_file(memos, path)
    return sum(len(memo_text(memo).encode()) for memo in memos)


def percentile(values: list[float], fraction: float) -> float:
    """The value at `fraction` of the sorted values (index int(n * fraction))."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * fraction))]


def print_latencies(results: dict) -> None:
    """One line per binary: p50, p90, p99 and max of its times in ms, and how many."""
    for name, times in results.items():
        print(f"{name:>8}  p50 {percentile(times, 0.5):7.2f} ms   p90 {percentile(times, 0.9):7.2f} ms   "
              f"p99 {percentile(times, 0.99):7.2f} ms   max {max(times):7.2f} ms   n={len(times)}")


def fresh_stores(binaries: dict, folder: str, rounds: int, prefix: str):
    """(name, store path) for each binary in turn, round after round, each time a store that does not exist
    yet, removed once the caller is done with it."""
    for r in range(rounds):
        for name in in_turns(list(binaries), r):
            store = os.path.join(folder, f"{prefix}-{name}.sqlite")
            remove_store(store)
            yield name, store
            remove_store(store)


def fresh_copies(binaries: dict, folder: str) -> dict:
    """Each binary copied just now into `folder`, so that all sit alike in the kernel's cache: the same
    binary started 2.4-3.1 ms slower (p50, 6 rounds in turns) from a file the kernel had cached an hour
    before than from a fresh copy of it, and mapped 3 MB more of its file (peak RSS) from the copy."""
    fresh = {}
    for name, path in binaries.items():
        fresh[name] = os.path.join(folder, f"cloudnotes-{name}")
        shutil.copy2(path, fresh[name])
    return fresh

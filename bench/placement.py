#!/usr/bin/env python3
"""How much of a round trip is the machine's scheduling: the same round trips with the driver and the
process on one CPU, on two CPUs, and wherever the scheduler puts them.

    bench/placement.py                                # .build/release/cloudnotes
    bench/placement.py --bin /tmp/other/cloudnotes --rounds 5

Each round trip is one request line written and its reply read, with the benchmark's driver: through
`cat` (the pipe floor), and through the server for a request it refuses at once (an unknown method:
what every request pays before any work) and for `memo/select` of a small memo. Placements are set with
`sched_setaffinity`, which the process's threads inherit: "one CPU" puts the driver and the process on
CPU 0, "two CPUs" the driver on CPU 0 and the process on CPU 1, "scheduler" pins nothing. On a virtual
machine, waking a thread on another (idle) virtual CPU costs an interrupt between CPUs and the
hypervisor's work, where a wake-up on the same CPU is a context switch: the "two CPUs" column against
the "one CPU" column is that cost, and the "scheduler" column is what the scheduler made of the threads
in that minute (here: `cat` on the driver's CPU, the server's worker on the other). The placements take
turns, round after round, so that the machine's drift reaches them alike. The server's CPU time per
request (user and system, from /proc) is printed beside its round trip.
"""

import argparse
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from benchlib import REPO_DIR  # noqa: E402
from benchlib.baselines import cat  # noqa: E402
from benchlib.compare_base import in_turns, new_memo  # noqa: E402
from benchlib.driver import log, start_initialized  # noqa: E402
from benchlib.stats import fmt_ns  # noqa: E402

UNKNOWN = b'{"jsonrpc":"2.0","id":1,"method":"bench/unknown","params":{}}\n'
PLACEMENTS = {"one CPU": (0, 0), "two CPUs": (0, 1), "scheduler": (None, None)}


def pinned(cpu: int | None):
    """A `preexec_fn` that puts the child on `cpu` (None: anywhere)."""
    def pin():
        if cpu is not None:
            os.sched_setaffinity(0, {cpu})
    return pin


def cpu_seconds(pid: int) -> float:
    """User and system time of a process so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def measure(binary: str, store: str, driver_cpu: int | None, process_cpu: int | None, count: int) -> dict:
    """Median round trips (ns) through cat and the server, and the server's CPU per request (ns)."""
    everywhere = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {driver_cpu} if driver_cpu is not None else everywhere)
    try:
        echo = cat("cat", preexec_fn=pinned(process_cpu))
        echoes = [echo.echo_trip(UNKNOWN) for _ in range(count)]
        echo.close_cat()
        d = start_initialized([binary, "serve", "--store", store], "server", preexec_fn=pinned(process_cpu))
        first, _ = new_memo(d, "Groceries\nmilk, eggs")
        second, _ = new_memo(d, "회의록\n다음 주 화요일")
        selects = [b'{"jsonrpc":"2.0","id":2,"method":"memo/select","params":{"id":"%s"}}\n' % memo.encode()
                   for memo in (first, second)]
        for i in range(count // 10):  # warm-up
            d.round_trip(UNKNOWN)
            d.round_trip(selects[i % 2])
        before = cpu_seconds(d.proc.pid)
        refused = [d.round_trip(UNKNOWN)[0] for _ in range(count)]
        middle = cpu_seconds(d.proc.pid)
        selected = [d.round_trip(selects[i % 2])[0] for i in range(count)]
        after = cpu_seconds(d.proc.pid)
        d.shutdown()
    finally:
        os.sched_setaffinity(0, everywhere)
    return {"cat": statistics.median(echoes), "refused": statistics.median(refused),
            "refused_cpu": (middle - before) / count * 1e9, "select": statistics.median(selected),
            "select_cpu": (after - middle) / count * 1e9}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bin", default=os.path.join(REPO_DIR, ".build", "release", "cloudnotes"))
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--count", type=int, default=2000, help="round trips per kind, per round")
    args = p.parse_args()
    if not {0, 1} <= os.sched_getaffinity(0):
        sys.exit("placement: needs CPUs 0 and 1")
    runs = {name: [] for name in PLACEMENTS}
    with tempfile.TemporaryDirectory(prefix="placement-") as folder:
        for r in range(args.rounds):
            for name in in_turns(list(PLACEMENTS), r):
                store = os.path.join(folder, f"{r}-{name.replace(' ', '-')}.sqlite")
                runs[name].append(measure(args.bin, store, *PLACEMENTS[name], args.count))
                log(f"round {r + 1}/{args.rounds}: {name} done")
    print(f"round trips, p50 (median of {args.rounds} rounds of {args.count}); server CPU per request in brackets")
    print(f"{'placement':10} {'cat':>9} {'unknown method':>24} {'memo/select':>24}")
    for name, rounds in runs.items():
        m = {key: statistics.median(run[key] for run in rounds) for key in rounds[0]}
        print(f"{name:10} {fmt_ns(m['cat']):>9} {fmt_ns(m['refused']):>10} (CPU {fmt_ns(m['refused_cpu']):>8}) "
              f"{fmt_ns(m['select']):>10} (CPU {fmt_ns(m['select_cpu']):>8})")


if __name__ == "__main__":
    main()

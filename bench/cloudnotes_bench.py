#!/usr/bin/env python3
"""CloudNotes benchmark: drives the real `cloudnotes serve` through pipes, as an editor would.

For each number of memos (1,000, 10,000 and 100,000 by default) it generates a fixed-seed data set and
measures its import; then it measures start-up, select, list, search, typing (one round trip at a time
and pipelined) and peak RSS, each on a fresh server process, each scenario for every size in turn
(start-ups alternating between sizes), so that a machine that changes speed during the run moves every
size alike. Baselines are measured in the same run, with the same driver, just before or after the
scenario they are compared with: a JSON line echoed through `cat` (the pipe's floor), the same searches
run directly on the same SQLite file, and the raw cost of inserting the same rows into SQLite.

It prints one table per size, writes every figure to bench/results/latest.json and draws
bench/results/latency.png. It is a benchmark, not a test: it never fails because of a timing. It exits
non-zero only when something breaks (an error response, a crash, a hang, a wrong search count).

Standard library only, plus matplotlib for the plot (skipped with a warning when it is missing).
See bench/README.md. This file is the command line and the order of a run; the parts it runs are the
modules of bench/benchlib/ (listed in its __init__.py).
"""

import argparse
import os
import shutil
import sys
import tempfile

from benchlib import BENCH_DIR, REPO_DIR, report, scenarios, sizes
from benchlib.driver import BenchError, log
from benchlib.plot import plot
from benchlib.session import Session


def run(s: Session) -> int:
    """The whole run, in its order; the tables to stdout and latest.txt. 1 when something was wrong."""
    args = s.args
    os.makedirs(s.work, exist_ok=True)
    meta = s.meta()
    s.results = {"meta": meta, "sizes": {}}
    log(f"binary: {s.bin}\nwork dir: {s.work}\n"
        f"SQLite: python sqlite3 {meta['sqlite_python']}, server {meta['sqlite_server']}")
    schema = s.store_schema()
    # Every size is prepared first (data, import, indexing). Then each scenario runs for every size
    # in turn, and the start-ups alternate between sizes: a machine that gets slower or faster during
    # the run (this one's pipe floor has moved tenfold within an hour) then moves every size alike,
    # and the curves against the number of memos compare like with like.
    runs = []
    for n in args.sizes:
        log(f"\n=== {n:,} memos: data, import, indexing ===")
        run = sizes.SizeRun(n)
        sizes.prepare(s, run, schema)
        s.results["sizes"][str(n)] = run.out
        runs.append(run)
        s.write_results()
    scenarios.startup(s, runs)
    for scenario in (scenarios.select, scenarios.lists, scenarios.searches, scenarios.typing_scenarios):
        for run in runs:
            log(f"\n=== {run.n:,} memos ===")
            scenario(s, run)
        s.write_results()
    scenarios.throughput_rounds(s, runs)
    s.write_results()
    tables = []
    for run in runs:
        log(f"\n=== {run.n:,} memos: baselines after the server's runs ===")
        sizes.finish(s, run, schema)
        s.write_results()
        table = report.table(args, run.n, run.out)
        tables.append(table)
        print(table, flush=True)
    summary = report.scaling_table(s.results, args.sizes)
    print(summary, flush=True)
    tables.append(summary)
    s.write_results()
    with open(os.path.join(args.results_dir, "latest.txt"), "w") as f:
        f.write(report.header_text(s.results, s.server_info, args) + "\n\n" + "\n\n".join(tables) + "\n")
    try:
        plot(s.results, s.server_info, args.results_dir)
    except Exception as e:  # the figures are written already; say so, and fail the run
        s.problems.append(f"the plot failed: {e!r}")
    if s.problems:
        print("\nPROBLEMS:\n" + "\n".join(f"- {p}" for p in s.problems), flush=True)
        return 1
    return 0


def parse_args(argv: list[str]):
    p = argparse.ArgumentParser(description="CloudNotes benchmark (see bench/README.md).")
    p.add_argument("--bin", default=os.path.join(REPO_DIR, ".build", "release", "cloudnotes"),
                   help="the cloudnotes binary (default: .build/release/cloudnotes)")
    p.add_argument("--sizes", default=None, help="numbers of memos, comma-separated (default 1000,10000,100000)")
    p.add_argument("--ops", type=int, default=None, help="timed operations per scenario (default 1000)")
    p.add_argument("--warmup", type=int, default=None, help="untimed operations before them (default 100)")
    p.add_argument("--starts", type=int, default=None, help="server starts for the start-up figures (default 20)")
    p.add_argument("--pipelined", type=int, default=None, help="updates sent without waiting (default 10000)")
    p.add_argument("--quick", action="store_true",
                   help="smoke run: sizes 1000,10000, 200 ops, 20 warm-up, 5 starts, 1000 pipelined updates")
    p.add_argument("--seed", type=int, default=20240521, help="data seed (default 20240521)")
    p.add_argument("--rare-term", default="xylophone", help="search term in ~0.01%% of memos (default xylophone)")
    p.add_argument("--common-term", default="meeting", help="common search term, 3+ characters (default meeting)")
    p.add_argument("--short-term", default="회의", help="2-character Korean search term (default 회의)")
    p.add_argument("--short-ascii-term", default="me", help="2-character ASCII search term (default me)")
    p.add_argument("--results-dir", default=os.path.join(BENCH_DIR, "results"), help="default bench/results")
    p.add_argument("--work-dir", default=None,
                   help="where data and stores go (default: a new temporary folder, removed at the end); "
                        "data files found there are reused")
    p.add_argument("--no-rebuild-baseline", action="store_true",
                   help="skip the extra raw-insert baseline that builds the FTS index once at the end")
    p.add_argument("--keep", action="store_true", help="keep the work dir and stores")
    p.add_argument("--budget", type=float, default=300.0,
                   help="seconds after which a slow scenario stops early (with at least 50 timed ops; "
                        "the table marks it); 0: never (default 300)")
    p.add_argument("--timeout", type=float, default=1800.0, help="seconds before a hung process is killed")
    args = p.parse_args(argv)
    quick = {"sizes": "1000,10000", "ops": 200, "warmup": 20, "starts": 5, "pipelined": 1000}
    full = {"sizes": "1000,10000,100000", "ops": 1000, "warmup": 100, "starts": 20, "pipelined": 10000}
    for key, value in (quick if args.quick else full).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    args.sizes = [int(s.replace("_", "")) for s in str(args.sizes).split(",") if s.strip()]
    if any(n < 10 for n in args.sizes):
        p.error("each size must be at least 10 memos")
    if args.ops < 1 or args.warmup < 0 or args.starts < 1 or args.pipelined < 1:
        p.error("--ops, --starts and --pipelined must be positive, --warmup not negative")
    if len(args.common_term) < 3 or len(args.rare_term) < 3:
        p.error("the rare and common terms need 3 or more characters")
    return args


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    if not os.access(args.bin, os.X_OK):
        print(f"error: no executable at {args.bin} (build it, or pass --bin)", file=sys.stderr)
        return 2
    temporary = args.work_dir is None
    if temporary:
        args.work_dir = tempfile.mkdtemp(prefix="cloudnotes-bench-")
    args.work_dir = os.path.abspath(args.work_dir)
    session = Session(args)
    try:
        return run(session)
    except BenchError as e:
        print(f"\nBENCHMARK ABORTED: {e}", file=sys.stderr)
        if session.results:
            session.results["aborted"] = str(e)
            session.write_results()
        return 1
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    finally:
        if temporary and not args.keep:
            shutil.rmtree(args.work_dir, ignore_errors=True)
        elif args.keep or not temporary:
            log(f"work dir kept: {args.work_dir}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

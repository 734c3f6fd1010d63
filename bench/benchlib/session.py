"""A run of the server's benchmark: its settings, the servers it starts, and its results so far."""

from __future__ import annotations

import datetime
import json
import os
import platform
import sqlite3
import subprocess

from . import REPO_DIR
from .baselines import pipe_baseline
from .data import TYPED_CHARS
from .driver import Driver, perf_ns
from .stores import remove_store, server_sqlite_version

MIN_TIMED_OPS = 50  # a scenario stopped by --budget still has at least this many timed ops


class Session:
    """One run of the server's benchmark: its settings (`args`, from bench/cloudnotes_bench.py), the
    servers it starts, and what it has measured so far (`results`, written to latest.json)."""

    def __init__(self, args):
        self.args = args
        self.bin = os.path.abspath(args.bin)
        self.work = args.work_dir
        self.results: dict = {}
        self.problems: list[str] = []
        self.server_info: dict = {}

    # -- processes

    def server(self, store: str, label: str) -> Driver:
        log_path = os.path.join(self.work, "server.log")
        with open(log_path, "ab") as f:
            f.write(f"=== {label} ===\n".encode())
        return Driver([self.bin, "serve", "--store", store], log_path=log_path, timeout=self.args.timeout,
                      label=f"cloudnotes ({label})")

    def start_server(self, store: str, label: str, expect_show: bool = True) -> Driver:
        d = self.server(store, label)
        result, _ = d.call("initialize", {"clientInfo": {"name": "cloudnotes-bench", "version": "1"},
                                          "locale": "en-US", "timeZone": "UTC"})
        self.server_info = result.get("serverInfo", {})
        d.notify("initialized")
        d.read_until_notification("detail/didShow" if expect_show else "detail/didClear")
        return d

    # -- scenario helpers

    def timed_calls(self, d: Driver, method: str, params_for, count: int, check=None) -> list[int]:
        """`count` round trips of `method`; params_for(i) gives the params. Checks every response."""
        samples, started = [], perf_ns()
        for i in range(count):
            if self.over_budget(started, i):
                break
            params = params_for(i)
            rid, line = d.request(method, params)
            elapsed, response, _ = d.round_trip(line)
            result = d.check(rid, response, method)
            if check:
                check(i, result)
            samples.append(elapsed)
        return samples

    def ops_total(self) -> int:
        return self.args.warmup + self.args.ops

    def over_budget(self, started_ns: int, done: int) -> bool:
        """True when a scenario has run past --budget seconds and already has MIN_TIMED_OPS timed ops."""
        return (self.args.budget > 0 and done >= self.args.warmup + MIN_TIMED_OPS
                and perf_ns() - started_ns > self.args.budget * 1e9)

    def baseline_pipe(self, line: bytes, label: str) -> tuple[dict, list[int]]:
        """`line` echoed through `cat` as many times as a scenario's requests: the floor beside them."""
        return pipe_baseline(line, label, self.args.timeout, self.ops_total(), self.args.warmup)

    def keystrokes(self, count: int):
        """The characters typed, one per timed request: `count` of them, or fewer when the time budget ends."""
        started = perf_ns()
        for i in range(count):
            if self.over_budget(started, i):
                return
            yield TYPED_CHARS[i % len(TYPED_CHARS)]

    # -- the run's facts and results

    def meta(self) -> dict:
        def git(*cmd):
            try:
                return subprocess.run(["git", *cmd], cwd=REPO_DIR, capture_output=True, text=True,
                                      timeout=10).stdout.strip()
            except Exception:
                return ""
        return {
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "binary": self.bin, "git_commit": git("rev-parse", "HEAD"),
            "git_dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
            "host": platform.node(), "cpus": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version(), "sqlite_python": sqlite3.sqlite_version,
            "sqlite_server": server_sqlite_version(self.bin),
            "args": {k: v for k, v in vars(self.args).items() if k not in ("work_dir",)},
        }

    def store_schema(self) -> list[str]:
        """The schema of a fresh server store, to reproduce it for the raw-insert baseline."""
        store = os.path.join(self.work, "schema-probe.sqlite")
        remove_store(store)
        d = self.start_server(store, "schema probe", expect_show=False)
        d.shutdown()
        con = sqlite3.connect(store)
        rows = con.execute("SELECT type, name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid").fetchall()
        con.close()
        remove_store(store)
        virtual = [name for kind, name, sql in rows if sql.upper().startswith("CREATE VIRTUAL TABLE")]
        statements = []
        for kind, name, sql in rows:
            if name in ("sqlite_sequence", "grdb_migrations"):
                continue
            if kind == "table" and any(name.startswith(v + "_") for v in virtual):
                continue  # FTS shadow tables: created by CREATE VIRTUAL TABLE
            statements.append(sql)
        self.results["meta"]["store_schema"] = statements
        return statements

    def write_results(self) -> None:
        os.makedirs(self.args.results_dir, exist_ok=True)
        self.results["meta"]["server"] = self.server_info
        path = os.path.join(self.args.results_dir, "latest.json")
        with open(path + ".tmp", "w") as f:
            json.dump(self.results, f, indent=1, ensure_ascii=False)
        os.replace(path + ".tmp", path)

#!/usr/bin/env python3
"""Front-end benchmark: how an editor's CloudNotes front end copes with 1,000, 100,000 and 1,000,000 memos.

For each size it opens the split view in an editor (Neovim headless, Emacs on a pseudo-terminal: see
bench/frontend_emacs.py) on a store of that many memos and measures the time from the command to the first
screen of rows drawn, the editor's peak resident memory, and the time from `G` (Emacs: `M->`) in the list
to the last rows drawn. The sizes take turns, round after round (this machine's speed moves within
minutes, so the ratios must come from the same minutes), and the table gives each figure's median and its
ratio to the 1,000-memo figure of the same run.

The stores are made once with the benchmark's own data (benchlib.data.generate_memos) imported by the
server (memo/import), and kept in bench/data (git-ignored) for the next run.

    bench/frontend.py --bin .build/release/cloudnotes            # 1,000, 100,000 and 1,000,000 memos
    bench/frontend.py --bin ... --quick                           # without 1,000,000, fewer rounds

Each editor is one driver function (EDITORS): it runs the editor once on a store and returns its figures.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import frontend_emacs  # noqa: E402  (the Emacs driver)
from benchlib import BENCH_DIR, REPO_DIR  # noqa: E402
from benchlib.data import generate_memos, write_import_file  # noqa: E402
from benchlib.driver import BenchError, Driver, is_response, log, perf_ns, start_initialized  # noqa: E402
from benchlib.editor_result import fresh_result_path, read_result  # noqa: E402
from benchlib.stores import remove_store, unindexed_count  # noqa: E402

SIZES = (1_000, 100_000, 1_000_000)
SEED = 20240521
# The list shows titles, dates and the first 100 characters of a body: the 100 KB memos of the main
# benchmark would make the 1,000,000-memo store 1.6 GB of text instead of 0.6 GB, and its build (mostly
# the server's indexing) nearly three times as long, for nothing the front ends show.
BIG_FRACTION = 0.0
# A screen of a common size, the same for every editor.
SCREEN_LINES, SCREEN_COLUMNS = 50, 200


# ---------------------------------------------------------------------------------------------------
# The stores
# ---------------------------------------------------------------------------------------------------

def store_path(data_dir: str, n: int) -> str:
    return os.path.join(data_dir, f"frontend-{n}-seed{SEED}.sqlite")


def build_store(binary: str, data_dir: str, n: int) -> str:
    """The store of `n` memos, imported and fully indexed, made once and reused (a marker file says it
    is complete, so that an interrupted build is made again)."""
    store = store_path(data_dir, n)
    done = store + ".done"
    if os.path.exists(store) and os.path.exists(done):
        return store
    os.makedirs(data_dir, exist_ok=True)
    log(f"store of {n:,} memos: generating the data")
    t = time.monotonic()
    memos, info = generate_memos(n, SEED, "xylophone", big_fraction=BIG_FRACTION)
    data = os.path.join(data_dir, f"frontend-memos-{n}.json")
    write_import_file(memos, data)
    del memos
    log(f"  {info['total_bytes'] / 1e6:.0f} MB of text in {time.monotonic() - t:.0f} s; importing")
    remove_store(store)
    d = start_initialized([binary, "serve", "--store", store], f"cloudnotes (import {n})", timeout=3600)
    result, _ = d.call("memo/import", {"path": data})
    if result.get("imported") != n:
        raise BenchError(f"imported {result.get('imported')} memos, expected {n}")
    # The server indexes imported memos in the background while its client is quiet; a store that is
    # still being indexed would make every later open share the machine with the indexer.
    log("  waiting for the background indexing")
    while unindexed_count(store) > 0:
        if d.proc.poll() is not None:
            raise d.died("indexing")
        time.sleep(0.5)
    d.shutdown()
    os.remove(data)
    with open(done, "w") as f:
        f.write(json.dumps(info) + "\n")
    log(f"  done in {time.monotonic() - t:.0f} s")
    return store


# ---------------------------------------------------------------------------------------------------
# The editors. A driver runs its editor once on a store of n memos and returns
# {"first_screen_ms", "rss_kb", "scroll_end_ms"}, or raises BenchError.
# ---------------------------------------------------------------------------------------------------

# Runs inside `nvim --headless`: everything is driven from timers, so that the keys go through Neovim's
# main loop (and its CursorMoved/WinScrolled events) as a user's keys would.
NVIM_DRIVER = r"""
local uv, api = vim.loop, vim.api
local cfg = vim.json.decode(os.getenv("CN_FRONTEND"))
local result = {}
local function finish(err)
  result.error = err
  local f = io.open(cfg.out, "w")
  f:write(vim.json.encode(result))
  f:close()
  vim.cmd("qa!")
end
local function status(key)
  for line in io.lines("/proc/self/status") do
    local v = line:match("^" .. key .. ":%s+(%d+)")
    if v then return tonumber(v) end
  end
end
local function list_window()
  for _, win in ipairs(api.nvim_list_wins()) do
    local buf = api.nvim_win_get_buf(win)
    if vim.bo[buf].filetype == "cloudnoteslist" then return win, buf end
  end
end
-- Lines from..to (1-based) of the list hold rows: not blank, not the "loading" line.
local function drawn(buf, from, to)
  local lines = api.nvim_buf_get_lines(buf, from - 1, to, false)
  if #lines ~= to - from + 1 then return false end
  for _, l in ipairs(lines) do
    if not l:find("%S") or l:find("loading", 1, true) then return false end
  end
  return true
end
local function poll(cond, after)
  local timer, started = uv.new_timer(), uv.hrtime()
  timer:start(1, 1, vim.schedule_wrap(function()
    if timer:is_closing() then return end
    local ok, met = pcall(cond)
    if not ok or met or uv.hrtime() - started > cfg.timeout_s * 1e9 then
      timer:stop()
      timer:close()
      if not ok then finish("error: " .. tostring(met))
      elseif not met then finish("timed out")
      else after(uv.hrtime()) end
    end
  end))
end

vim.o.lines, vim.o.columns = cfg.lines, cfg.columns
require("cloudnotes").setup({ cmd = cfg.bin, store = cfg.store, locale = "en-US", time_zone = "UTC" })
local t0 = uv.hrtime()
vim.cmd("CloudNotes")
local win, buf
poll(function()
  win, buf = list_window()
  return buf ~= nil and drawn(buf, 1, math.min(api.nvim_win_get_height(win), cfg.n))
end, function(t1)
  result.first_screen_ms = (t1 - t0) / 1e6
  -- G once the buffer has a line per memo (it may grow just after the first screen).
  poll(function()
    return api.nvim_buf_line_count(buf) == cfg.n
  end, function(t2)
    result.full_length_ms = (t2 - t0) / 1e6
    result.rss_open_kb = status("VmRSS")
    api.nvim_set_current_win(win)
    local t3 = uv.hrtime()
    api.nvim_input("G")
    poll(function()
      local h = api.nvim_win_get_height(win)
      return api.nvim_win_get_cursor(win)[1] == cfg.n and drawn(buf, math.max(1, cfg.n - h + 1), cfg.n)
    end, function(t4)
      result.scroll_end_ms = (t4 - t3) / 1e6
      result.rss_kb = status("VmHWM")
      finish(nil)
    end)
  end)
end)
"""


NVIM_PLUGIN = os.path.join(REPO_DIR, "clients", "nvim")


def nvim_driver(binary: str, store: str, n: int, work: str, timeout_s: float) -> dict:
    """Neovim with only the plugin (clients/nvim, or --nvim-plugin) on 'runtimepath'."""
    plugin = NVIM_PLUGIN
    script = os.path.join(work, "nvim_driver.lua")
    if not os.path.exists(script):
        with open(script, "w") as f:
            f.write(NVIM_DRIVER)
    out = fresh_result_path(work, "nvim")
    cfg = {"bin": binary, "store": store, "n": n, "out": out, "timeout_s": timeout_s,
           "lines": SCREEN_LINES, "columns": SCREEN_COLUMNS}
    env = dict(os.environ, CN_FRONTEND=json.dumps(cfg), TZ="UTC", LANG="C.UTF-8",
               XDG_CONFIG_HOME=os.path.join(work, "config"), XDG_DATA_HOME=os.path.join(work, "data"),
               XDG_STATE_HOME=os.path.join(work, "state"))
    for var in ("NVIM_LISTEN_ADDRESS", "VIMINIT", "MYVIMRC"):
        env.pop(var, None)
    argv = [os.environ.get("NVIM_BIN", "nvim"), "--headless", "-u", "NONE", "-i", "NONE", "-n",
            "--cmd", f"set rtp^={plugin}", "--cmd", "runtime plugin/cloudnotes.lua",
            "-c", f"luafile {script}"]
    try:
        proc = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=timeout_s + 30)
    except subprocess.TimeoutExpired:
        raise BenchError(f"nvim on {n:,} memos did not finish in {timeout_s + 30:.0f} s") from None
    return read_result(out, "nvim", n, proc.returncode, (proc.stdout + proc.stderr).decode(errors="replace")[-1500:])


def server_first_page(binary: str, store: str, n: int, rows: int = SCREEN_LINES) -> float:
    """The server alone: ms from its spawn to the answer of the first screen's memo/list, sent right after
    initialize and initialized as the front ends send them. No front end can show its rows sooner."""
    d = Driver([binary, "serve", "--store", store], label=f"cloudnotes ({n} memos)")
    d.write(b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"locale":"en-US","timeZone":"UTC"}}\n'
            b'{"jsonrpc":"2.0","method":"initialized"}\n'
            b'{"jsonrpc":"2.0","id":2,"method":"memo/list","params":{"offset":0,"limit":%d}}\n' % rows)
    while True:
        line = d.readline()
        if not line:
            raise d.died("waiting for memo/list")
        if is_response(line) and json.loads(line).get("id") == 2:
            break
    elapsed = (perf_ns() - d.t_spawn) / 1e6
    if len(d.check(2, line, "memo/list")["rows"]) != min(rows, n):
        raise BenchError(f"memo/list on {n:,} memos: not a screen of rows")
    d.next_id = 3
    d.shutdown()
    return elapsed


def editor_version(argv: list[str]) -> str:
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=10).stdout.splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        return "unknown"


def emacs_driver(binary: str, store: str, n: int, work: str, timeout_s: float) -> dict:
    """`emacs -nw -Q` on a pseudo-terminal of the same screen (bench/frontend_emacs.py)."""
    return frontend_emacs.emacs_driver(binary, store, n, work, timeout_s, (SCREEN_LINES, SCREEN_COLUMNS))


# name -> (driver, available(), version argv).
EDITORS = {
    "nvim": (nvim_driver, lambda: shutil.which(os.environ.get("NVIM_BIN", "nvim")) is not None,
             [os.environ.get("NVIM_BIN", "nvim"), "--version"]),
    "emacs": (emacs_driver, frontend_emacs.emacs_available, [frontend_emacs.emacs_bin(), "--version"]),
}


# ---------------------------------------------------------------------------------------------------
# The run and the table
# ---------------------------------------------------------------------------------------------------

FIGURES = (("first_screen_ms", "first screen", "ms"), ("rss_kb", "peak RSS", "MB"),
           ("scroll_end_ms", "G/M-> to the end", "ms"))
SERVER = "server alone"  # the table's row of the server's own first page, for scale


def fmt(value: float, unit: str) -> str:
    if unit == "MB":
        return f"{value / 1024:.1f} MB"
    return f"{value:.1f} ms" if value < 100 else f"{value:.0f} ms"


def table(results: dict, sizes: list[int]) -> str:
    """One row per editor and size: each figure's median and its ratio to the smallest size's."""
    header = ["editor", "memos"]
    for _, label, _ in FIGURES:
        header += [label, "ratio"]
    rows = []
    for editor, by_size in results.items():
        base = {key: statistics.median(v) for key, v in by_size[sizes[0]].items() if v}
        for n in sizes:
            row = [editor, f"{n:,}"]
            for key, _, unit in FIGURES:
                if not by_size[n][key]:
                    row += ["", ""]
                    continue
                med = statistics.median(by_size[n][key])
                row += [fmt(med, unit), f"{med / base[key]:.2f}x" if base.get(key) else "-"]
            rows.append(row)
    widths = [max(len(r[i]) for r in [header] + rows) for i in range(len(header))]
    lines = ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths)))
             for r in [header] + rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def parse_args(argv: list[str]):
    p = argparse.ArgumentParser(description="Front-end benchmark (see bench/README.md).")
    p.add_argument("--bin", default=os.path.join(REPO_DIR, ".build", "release", "cloudnotes"),
                   help="the cloudnotes binary (default .build/release/cloudnotes)")
    p.add_argument("--sizes", default=None, help="numbers of memos, comma-separated (default 1000,100000,1000000)")
    p.add_argument("--quick", action="store_true", help="1,000 and 100,000 memos only, 3 rounds")
    p.add_argument("--rounds", type=int, default=None, help="rounds of every size in turn (default 7)")
    p.add_argument("--editors", default=",".join(EDITORS),
                   help=f"comma-separated, of {', '.join(EDITORS)} (default: those installed)")
    p.add_argument("--data-dir", default=os.path.join(BENCH_DIR, "data"),
                   help="where the stores are kept between runs (default bench/data)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds one editor run may take")
    p.add_argument("--nvim-plugin", default=NVIM_PLUGIN, help="the Neovim plugin's folder (default clients/nvim)")
    p.add_argument("--results-dir", default=os.path.join(BENCH_DIR, "results"),
                   help="where frontend.txt and frontend.json go (default bench/results)")
    args = p.parse_args(argv)
    sizes = args.sizes or ("1000,100000" if args.quick else ",".join(str(n) for n in SIZES))
    args.sizes = [int(s.replace("_", "")) for s in sizes.split(",") if s.strip()]
    args.rounds = args.rounds or (3 if args.quick else 7)
    args.editors = [e for e in args.editors.split(",") if e]
    unknown = [e for e in args.editors if e not in EDITORS]
    if unknown:
        p.error(f"unknown editor(s): {', '.join(unknown)}")
    return args


def main(argv: list[str]) -> int:
    global NVIM_PLUGIN
    args = parse_args(argv)
    NVIM_PLUGIN = os.path.abspath(args.nvim_plugin)
    binary = os.path.abspath(args.bin)
    if not os.access(binary, os.X_OK):
        print(f"error: no executable at {binary} (build it, or pass --bin)", file=sys.stderr)
        return 2
    editors = [e for e in args.editors if EDITORS[e][1]()]
    for missing in set(args.editors) - set(editors):
        log(f"{missing}: not installed; skipped")
    if not editors:
        print("error: no editor to run", file=sys.stderr)
        return 2
    results = {e: {n: {key: [] for key, _, _ in FIGURES} for n in args.sizes} for e in [SERVER] + editors}
    work = tempfile.mkdtemp(prefix="cloudnotes-frontend-")
    try:
        stores = {n: build_store(binary, args.data_dir, n) for n in args.sizes}
        for r in range(args.rounds):
            # The order rotates, so that no size always runs just after the largest one.
            order = args.sizes[r % len(args.sizes):] + args.sizes[:r % len(args.sizes)]
            for n in order:
                results[SERVER][n]["first_screen_ms"].append(server_first_page(binary, stores[n], n))
            for editor in editors:
                for n in order:
                    fig = EDITORS[editor][0](binary, stores[n], n, work, args.timeout)
                    for key, _, _ in FIGURES:
                        results[editor][n][key].append(fig[key])
                    log(f"round {r + 1}/{args.rounds} {editor} {n:>9,}: first screen {fig['first_screen_ms']:.1f} ms, "
                        f"peak RSS {fig['rss_kb'] / 1024:.1f} MB, G {fig['scroll_end_ms']:.1f} ms")
    except BenchError as e:
        print(f"\nFRONT-END BENCHMARK ABORTED: {e}", file=sys.stderr)
        return 1
    finally:
        shutil.rmtree(work, ignore_errors=True)
    text = (f"Front ends: {args.rounds} rounds, the sizes in turn; medians, and each figure's ratio to "
            f"the {args.sizes[0]:,}-memo one of this run\n"
            + "".join(f"  {e}: {editor_version(EDITORS[e][2])}\n" for e in editors)
            + table(results, args.sizes))
    print("\n" + text, flush=True)
    os.makedirs(args.results_dir, exist_ok=True)
    with open(os.path.join(args.results_dir, "frontend.txt"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(args.results_dir, "frontend.json"), "w") as f:
        json.dump({"rounds": args.rounds, "screen": [SCREEN_LINES, SCREEN_COLUMNS],
                   "results": {e: {str(n): v for n, v in r.items()} for e, r in results.items()}}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

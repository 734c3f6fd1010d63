#!/usr/bin/env python3
"""Compares cloudnotes binaries in the same minutes: typing into a 1 KB and a 100 KB memo, and pipelined
updates, with the benchmark's own driver and data; or imports.

    bench/compare.py old=/tmp/old/cloudnotes new=.build/release/cloudnotes            # wall time
    bench/compare.py --callgrind old=/tmp/old/cloudnotes new=.build/release/cloudnotes  # instructions
    bench/compare.py --import 100000 old=/tmp/old/cloudnotes new=.build/release/cloudnotes

With --import N the binaries take turns importing the benchmark's N memos (its seed) into a fresh store:
each import's time, what it wrote for storage (`write_bytes` of /proc/PID/io) and the server's peak RSS;
each binary runs from a copy written just before, as with --startup.

With --typing-while-indexing N each binary in turn imports the benchmark's N memos, then types into a
1 KB memo while its background indexer indexes them: one `memo/update` after each pause of 0.35 s (longer
than the indexer's quiet period, so that each keystroke finds a chunk under way), timed one at a time.

With --typing-while-importing N each binary in turn serves a fresh store and types into a 1 KB memo while
it imports the benchmark's N memos: one `memo/update` every 0.05 s, timed one at a time, until the import
is answered.

With --typing-while-syncing N the remote is made as for --first-sync; then each binary in turn serves a
fresh store and types into a 1 KB memo while the server's first sync pulls the N memos: one `memo/update`
every 0.1 s, timed one at a time, until `sync/now` is answered.

With --startup N the first binary imports the benchmark's N memos into a store once; then the binaries
take turns starting a server on it, as `bench/run` times start-up: from the process's start to the
`initialize` response and to the first `detail/didShow` (20 starts a round, after 2 unrecorded ones),
each from a copy of its binary written just before.

With --first-sync N the first binary publishes the benchmark's N memos to a folder remote once (through
the shell: `cloudnotes import`, `cloudnotes sync`); then each binary in turn serves a fresh store and
syncs it with that remote (`sync/configure`, which starts a sync, then `sync/now`): the time until
`sync/now` is answered, and what the server wrote for storage meanwhile.

With --reads N the first binary imports the benchmark's N memos into a store once and waits for their
indexing; then the binaries take turns serving it: `memo/list` of the first page, `memo/select` of the
100 KB memos and of 1 KB ones, each request timed one at a time (with --callgrind: counted).

Wall time: the binaries take turns, round after round (the order rotates), on one store, so that the
machine's drift (its speed moves severalfold within an hour here) reaches them alike; it prints each
binary's median over the rounds and its ratio to the first binary.

With --callgrind each binary runs once under valgrind's callgrind: after the warm-up its counters are
zeroed, and the instructions of the timed requests are counted: the same count for the same binary and
input whatever the machine is doing. SQLite's share (`sqlite3_step`, inclusive) is printed apart, since
at valgrind's pace the background indexer finds the client quiet between requests and adds its work
there. Valgrind 3.19 cannot read the DWARF 5 of a Swift build: each binary is copied without its debug
sections (`strip --strip-debug`; its symbols stay).
"""

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
import cloudnotes_bench as bench  # noqa: E402

WARMUP = 50


def escaped(text: str) -> bytes:
    return json.dumps(text, ensure_ascii=False)[1:-1].encode()


def update_line(d: bench.Driver, memo_id: str, text: str, version: int) -> tuple[int, bytes]:
    rid = d.next_id
    d.next_id += 1
    return rid, (b'{"jsonrpc":"2.0","id":%d,"method":"memo/update","params":{"id":"%s","text":"' % (rid, memo_id.encode())
                 + escaped(text) + b'","baseVersion":%d}}\n' % version)


def new_memo(d: bench.Driver, text: str) -> tuple[str, int]:
    result, _ = d.call("memo/create", {"text": text})
    return result["memo"]["id"], result["memo"]["version"]


def typing(d: bench.Driver, text: str, count: int, on_warm=None) -> list[int]:
    """`memo/update` one character longer each time, one round trip at a time: the timed ns after the warm-up."""
    memo_id, version = new_memo(d, text)
    times = []
    for i in range(WARMUP + count):
        if i == WARMUP and on_warm:
            on_warm()
        text += bench.TYPED_CHARS[i % len(bench.TYPED_CHARS)]
        rid, line = update_line(d, memo_id, text, version)
        elapsed, response, _ = d.round_trip(line)
        memo = d.check(rid, response, "memo/update")["memo"]
        if memo["text"] != text:
            raise bench.BenchError("memo/update: the reply's text is not the text sent")
        version = memo["version"]
        if i >= WARMUP:
            times.append(elapsed)
    return times


def pipelined_rate(d: bench.Driver, text: str, count: int) -> float:
    """Updates per second for `count` updates written without waiting."""
    memo_id, version = new_memo(d, text)
    lines = []
    for i in range(count):
        text += bench.TYPED_CHARS[i % len(bench.TYPED_CHARS)]
        lines.append(update_line(d, memo_id, text, version + i)[1])
    elapsed, replies = bench.pipelined(d, lines)
    if json.loads(replies[-1])["result"]["memo"]["text"] != text:
        raise bench.BenchError("pipelined memo/update: the last reply's text is not the text sent")
    return count / (elapsed / 1e9)


def start(argv: list[str], label: str, preexec_fn=None) -> bench.Driver:
    """A process on pipes, initialized as the benchmark's servers are."""
    d = bench.Driver(argv, label=label, preexec_fn=preexec_fn)
    d.call("initialize", {"locale": "en-US", "timeZone": "UTC"})
    d.notify("initialized")
    return d


def in_turns(names: list[str], round_index: int) -> list[str]:
    """`names` in this round's order: the order rotates, so that no one always goes first."""
    shift = round_index % len(names)
    return names[shift:] + names[:shift]


def wall_time(binaries: dict, store: str, texts: dict, args) -> None:
    results = {name: {"100 KB": [], "1 KB": [], "pipelined": []} for name in binaries}
    names = list(binaries)
    for r in range(args.rounds):
        for name in in_turns(names, r):
            d = start([binaries[name], "serve", "--store", store], name)
            results[name]["100 KB"].append(statistics.median(typing(d, texts["100 KB"], args.ops)))
            results[name]["1 KB"].append(statistics.median(typing(d, texts["1 KB"], args.ops * 3)))
            results[name]["pipelined"].append(pipelined_rate(d, texts["1 KB"], args.pipelined))
            d.shutdown()
            bench.log(f"round {r + 1}/{args.rounds} {name} done")
    base = names[0]
    print(f"medians of {args.rounds} alternating runs (each run's p50 for typing)")
    for scenario, unit in (("100 KB", "µs"), ("1 KB", "µs"), ("pipelined", "/s")):
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


def counted_instructions(binary: str, store: str, folder: str, drive) -> tuple[int, int]:
    """Instructions the server runs, in all and inside `sqlite3_step`, while `drive(d, zero)` sends its
    requests, from its call of `zero()` (after its warm-up) on."""
    if not shutil.which("valgrind"):
        sys.exit("compare: --callgrind needs valgrind (apt-get install -y valgrind)")
    stripped = os.path.join(folder, "stripped-" + os.path.basename(binary))
    subprocess.run(["strip", "--strip-debug", "-o", stripped, binary], check=True)
    out = os.path.join(folder, "callgrind.%p")
    d = start(["valgrind", "--tool=callgrind", "--dump-instr=no", f"--callgrind-out-file={out}",
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


def write_benchmark_memos(count: int, path: str) -> None:
    """The benchmark's `count` memos (its seed), as an import file."""
    memos, _ = bench.generate_memos(count, 20240521, "xylophone")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(memos, f, ensure_ascii=False, separators=(",", ":"))


def percentile(values: list[float], fraction: float) -> float:
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
            bench.remove_store(store)
            yield name, store
            bench.remove_store(store)


def imports(binaries: dict, folder: str, args) -> None:
    binaries = fresh_copies(binaries, folder)
    data = os.path.join(folder, "memos.json")
    write_benchmark_memos(args.import_count, data)
    results = {name: [] for name in binaries}
    names = list(binaries)
    for name, store in fresh_stores(binaries, folder, args.rounds, "import"):
        d = start([binaries[name], "serve", "--store", store], name)
        rid, line = d.request("memo/import", {"path": data})
        before = bench.written_bytes(d.proc.pid)
        elapsed, response, _ = d.round_trip(line)
        written = bench.bytes_between(before, bench.written_bytes(d.proc.pid))
        if d.check(rid, response, "memo/import").get("imported") != args.import_count:
            raise bench.BenchError(f"{name}: the import did not import {args.import_count:,} memos")
        peak = d.vm_kb().get("VmHWM", 0)
        d.shutdown()
        results[name].append((elapsed / 1e9, (written or 0) / 1e6, peak / 1024))
    print(f"memo/import of {args.import_count:,} memos: medians of {args.rounds} alternating runs")
    base = statistics.median(t for t, _, _ in results[names[0]])
    for name in names:
        runs = results[name]
        seconds = statistics.median(t for t, _, _ in runs)
        print(f"{name:>8} {seconds:6.2f} s  {seconds / base:5.2f}x {names[0]}   "
              f"written {statistics.median(w for _, w, _ in runs):6,.0f} MB   "
              f"peak RSS {max(m for _, _, m in runs):5.1f} MB   runs: {' '.join(f'{t:.2f}' for t, _, _ in runs)}")


def fresh_copies(binaries: dict, folder: str) -> dict:
    """Each binary copied just now into `folder`, so that all sit alike in the kernel's cache: the same
    binary started 2.4-3.1 ms slower (p50, 6 rounds in turns) from a file the kernel had cached an hour
    before than from a fresh copy of it, and mapped 3 MB more of its file (peak RSS) from the copy."""
    fresh = {}
    for name, path in binaries.items():
        fresh[name] = os.path.join(folder, f"cloudnotes-{name}")
        shutil.copy2(path, fresh[name])
    return fresh


def startups(binaries: dict, folder: str, args) -> None:
    binaries = fresh_copies(binaries, folder)
    data, store = os.path.join(folder, "memos.json"), os.path.join(folder, "startup.sqlite")
    write_benchmark_memos(args.startup_count, data)
    d = start([binaries[list(binaries)[0]], "serve", "--store", store], "import")
    d.call("memo/import", {"path": data})
    d.shutdown()
    starts = 20
    to_init = {name: [] for name in binaries}
    to_show = {name: [] for name in binaries}
    for r in range(args.rounds):
        for name in in_turns(list(binaries), r):
            for i in range(starts + 2):
                d = bench.Driver([binaries[name], "serve", "--store", store], label=name)
                initialized, shown = bench.timed_start(d)
                d.shutdown()
                if i >= 2:
                    to_init[name].append(initialized / 1e6)
                    to_show[name].append(shown / 1e6)
    print(f"start-up on a store of {args.startup_count:,} memos ({starts} starts a round, {args.rounds} rounds, in turns):")
    print("to the initialize response")
    print_latencies(to_init)
    print("to the first detail/didShow")
    print_latencies(to_show)


def typing_while_indexing(binaries: dict, folder: str, args) -> None:
    data = os.path.join(folder, "memos.json")
    write_benchmark_memos(args.indexing_count, data)
    pause, keystrokes = 0.35, 120
    results = {name: [] for name in binaries}
    for name, store in fresh_stores(binaries, folder, args.rounds, "typing"):
        d = start([binaries[name], "serve", "--store", store, "--sync-delay", "3600"], name)
        text = "typing while the import is indexed\n" + "x" * 1000
        memo_id, version = new_memo(d, text)
        d.call("memo/import", {"path": data})
        for _ in range(keystrokes):
            time.sleep(pause)
            text += "a"
            rid, line = update_line(d, memo_id, text, version)
            elapsed, response, _ = d.round_trip(line)
            version = d.check(rid, response, "memo/update")["memo"]["version"]
            results[name].append(elapsed / 1e6)
        d.shutdown()
    print(f"memo/update of a 1 KB memo after pauses of {pause} s, while the background indexer indexes "
          f"{args.indexing_count:,} imported memos ({keystrokes} per run, {args.rounds} runs each, in turns):")
    print_latencies(results)


def published_remote(binaries: dict, folder: str, count: int) -> str:
    """A folder remote holding the benchmark's `count` memos, published once by the first binary through
    the shell (`cloudnotes import`, `cloudnotes sync`)."""
    data, remote, publisher = (os.path.join(folder, name) for name in ("memos.json", "remote", "publisher.sqlite"))
    write_benchmark_memos(count, data)
    os.mkdir(remote)
    shell = {"env": {**os.environ, "HOME": folder}, "check": True, "capture_output": True}
    first = binaries[list(binaries)[0]]
    subprocess.run([first, "import", data, "--store", publisher], **shell)
    subprocess.run([first, "sync", "--store", publisher, "--remote", "file://" + remote], **shell)
    return remote


def first_sync(binaries: dict, folder: str, args) -> None:
    names = list(binaries)
    remote = published_remote(binaries, folder, args.sync_count)
    results = {name: [] for name in binaries}
    for name, store in fresh_stores(binaries, folder, args.rounds, "sync"):
        d = start([binaries[name], "serve", "--store", store, "--sync-delay", "3600"], name)
        before = bench.written_bytes(d.proc.pid)
        started = time.perf_counter()
        d.call("sync/configure", {"remote": "file://" + remote, "intervalSeconds": 0})
        d.call("sync/now", {})
        elapsed = time.perf_counter() - started
        written = bench.bytes_between(before, bench.written_bytes(d.proc.pid))
        memos, _ = d.call("memo/list", {"offset": 0, "limit": 1})
        if memos["total"] != args.sync_count:
            raise bench.BenchError(f"{name}: the store holds {memos['total']:,} memos after the sync")
        d.shutdown()
        results[name].append((elapsed, (written or 0) / 1e6))
    print(f"first sync of a fresh store with a remote of {args.sync_count:,} memos (folder): medians of {args.rounds} runs in turns")
    base = statistics.median(t for t, _ in results[names[0]])
    for name in names:
        runs = results[name]
        seconds = statistics.median(t for t, _ in runs)
        print(f"{name:>8} {seconds:6.2f} s  {seconds / base:5.2f}x {names[0]}   "
              f"written meanwhile {statistics.median(w for _, w in runs):6,.0f} MB   runs: {' '.join(f'{t:.2f}' for t, _ in runs)}")


def typing_until_answered(d, memo_id: str, text: str, version: int, pending_id, method: str, pause: float) -> list:
    """Keystrokes into `memo_id` (a `memo/update` every `pause` s, each timed alone) until the request
    `pending_id` (`method`), written before, is answered: their times in ms."""
    times = []
    answered = False
    while not answered:
        time.sleep(pause)
        text += "a"
        rid, line = update_line(d, memo_id, text, version)
        started = bench.perf_ns()
        d.write(line)
        # Read up to this keystroke's reply; the pending request's reply may come first.
        while True:
            got = d.readline()
            if not got:
                raise d.died(f"typing until {method} is answered")
            if got.startswith(bench.NOTIFICATION_PREFIX):
                continue
            message = json.loads(got)
            if message.get("id") == pending_id:
                d.check(pending_id, got, method)
                answered = True
                continue
            times.append((bench.perf_ns() - started) / 1e6)
            version = d.check(rid, got, "memo/update")["memo"]["version"]
            break
    return times


def typing_during(binaries: dict, folder: str, args, prefix: str, heading: str, pause: float, begin, during: str) -> None:
    """Each binary in turn serves a fresh store with a 1 KB memo; `begin(driver)` writes a long request
    and returns its id and method; then keystrokes every `pause` s until it is answered. Prints their
    times by binary, the long request described as `during`."""
    results = {name: [] for name in binaries}
    for name, store in fresh_stores(binaries, folder, args.rounds, prefix):
        d = start([binaries[name], "serve", "--store", store, "--sync-delay", "3600"], name)
        text = heading + "\n" + "x" * 1000
        memo_id, version = new_memo(d, text)
        pending_id, method = begin(d)
        results[name] += typing_until_answered(d, memo_id, text, version, pending_id, method, pause)
        d.shutdown()
    print(f"memo/update of a 1 KB memo every {pause} s while {during} ({args.rounds} runs each, in turns):")
    print_latencies(results)


def typing_while_importing(binaries: dict, folder: str, args) -> None:
    data = os.path.join(folder, "memos.json")
    write_benchmark_memos(args.importing_count, data)
    pause = 0.05

    def begin(d):
        import_id, line = d.request("memo/import", {"path": data})
        d.write(line)
        return import_id, "memo/import"

    typing_during(binaries, folder, args, "typing-import", "typing while an import runs", pause, begin,
                  f"the server imports {args.importing_count:,} memos, until the import is answered")


def typing_while_syncing(binaries: dict, folder: str, args) -> None:
    remote = published_remote(binaries, folder, args.syncing_count)
    pause = 0.1

    def begin(d):
        d.call("sync/configure", {"remote": "file://" + remote, "intervalSeconds": 0})
        sync_id, line = d.request("sync/now", {})
        d.write(line)
        return sync_id, "sync/now"

    typing_during(binaries, folder, args, "typing-sync", "typing while the first sync runs", pause, begin,
                  f"a fresh server's first sync pulls {args.syncing_count:,} memos from a folder remote, until it ends")


def indexed_store(binary: str, folder: str, count: int) -> str:
    """A store of the benchmark's `count` memos, imported by `binary`, its background indexing done."""
    data, store = os.path.join(folder, "memos.json"), os.path.join(folder, "reads.sqlite")
    write_benchmark_memos(count, data)
    d = start([binary, "serve", "--store", store], "import")
    d.call("memo/import", {"path": data})
    waited = time.monotonic()
    while bench.unindexed_count(store) > 0:
        if time.monotonic() - waited > 600:
            raise bench.BenchError("the background indexing did not finish in 10 minutes")
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
            d = start([binaries[name], "serve", "--store", store], name)
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("binaries", nargs="+", metavar="NAME=PATH", help="the first is the baseline of the ratios")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--ops", type=int, default=300, help="timed 100 KB updates per run (1 KB: three times as many)")
    parser.add_argument("--pipelined", type=int, default=3000)
    parser.add_argument("--callgrind", action="store_true", help="count instructions instead of timing")
    parser.add_argument("--import", dest="import_count", type=int, metavar="N",
                        help="time imports of the benchmark's N memos instead of typing")
    parser.add_argument("--typing-while-indexing", dest="indexing_count", type=int, metavar="N",
                        help="time keystrokes while the background indexer indexes N imported memos")
    parser.add_argument("--typing-while-importing", dest="importing_count", type=int, metavar="N",
                        help="time keystrokes while the server imports N memos")
    parser.add_argument("--startup", dest="startup_count", type=int, metavar="N",
                        help="time start-ups on a store of N imported memos")
    parser.add_argument("--first-sync", dest="sync_count", type=int, metavar="N",
                        help="time a fresh store's first sync with a remote of N memos")
    parser.add_argument("--typing-while-syncing", dest="syncing_count", type=int, metavar="N",
                        help="time keystrokes during a fresh store's first sync with a remote of N memos")
    parser.add_argument("--reads", dest="reads_count", type=int, metavar="N",
                        help="time list pages and selects on a store of N imported memos")
    args = parser.parse_args()
    binaries = {}
    for item in args.binaries:
        name, sep, path = item.partition("=")
        if not sep or not os.access(path, os.X_OK):
            sys.exit(f"compare: expected NAME=PATH of an executable, got {item!r}")
        binaries[name] = os.path.abspath(path)
    if args.callgrind:
        args.ops = min(args.ops, 100)
    for count, mode in ((args.import_count, imports), (args.startup_count, startups),
                        (args.indexing_count, typing_while_indexing), (args.importing_count, typing_while_importing),
                        (args.sync_count, first_sync), (args.syncing_count, typing_while_syncing),
                        (args.reads_count, reads)):
        if count:
            with tempfile.TemporaryDirectory(prefix="compare-") as folder:
                mode(binaries, folder, args)
            return
    memos, _ = bench.generate_memos(1000, 20240521, "xylophone")
    texts = {"100 KB": bench.memo_text(memos[-2]), "1 KB": bench.memo_text(memos[-1])}
    with tempfile.TemporaryDirectory(prefix="compare-store-") as folder:
        store = os.path.join(folder, "store.sqlite")
        (callgrind if args.callgrind else wall_time)(binaries, store, texts, args)


if __name__ == "__main__":
    try:
        main()
    except bench.BenchError as error:
        sys.exit(f"compare: {error}")

"""bench/compare.py's modes that time keystrokes while the server does something long: an import, the
indexing after one, or a first sync."""

from __future__ import annotations

import json
import os
import time

from .compare_base import fresh_stores, new_memo, print_latencies, update_line, write_benchmark_memos
from .compare_bulk import published_remotes
from .driver import NOTIFICATION_PREFIX, perf_ns, start_initialized

def typing_while_indexing(binaries: dict, folder: str, args) -> None:
    data = os.path.join(folder, "memos.json")
    write_benchmark_memos(args.indexing_count, data)
    pause, keystrokes = 0.35, 120
    results = {name: [] for name in binaries}
    for name, store in fresh_stores(binaries, folder, args.rounds, "typing"):
        d = start_initialized([binaries[name], "serve", "--store", store, "--sync-delay", "3600"], name)
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


def typing_until_answered(d, memo_id: str, text: str, version: int, pending_id, method: str, pause: float) -> list:
    """Keystrokes into `memo_id` (a `memo/update` every `pause` s, each timed alone) until the request
    `pending_id` (`method`), written before, is answered: their times in ms."""
    times = []
    answered = False
    while not answered:
        time.sleep(pause)
        text += "a"
        rid, line = update_line(d, memo_id, text, version)
        started = perf_ns()
        d.write(line)
        # Read up to this keystroke's reply; the pending request's reply may come first.
        while True:
            got = d.readline()
            if not got:
                raise d.died(f"typing until {method} is answered")
            if got.startswith(NOTIFICATION_PREFIX):
                continue
            message = json.loads(got)
            if message.get("id") == pending_id:
                d.check(pending_id, got, method)
                answered = True
                continue
            times.append((perf_ns() - started) / 1e6)
            version = d.check(rid, got, "memo/update")["memo"]["version"]
            break
    return times


def typing_during(binaries: dict, folder: str, args, prefix: str, heading: str, pause: float, begin, during: str) -> None:
    """Each binary in turn serves a fresh store with a 1 KB memo; `begin(driver)` writes a long request
    and returns its id and method; then keystrokes every `pause` s until it is answered. Prints their
    times by binary, the long request described as `during`."""
    results = {name: [] for name in binaries}
    for name, store in fresh_stores(binaries, folder, args.rounds, prefix):
        d = start_initialized([binaries[name], "serve", "--store", store, "--sync-delay", "3600"], name)
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
    remotes = published_remotes(binaries, folder, args.syncing_count)
    pause = 0.1

    def begin(d):
        d.call("sync/configure", {"remote": "file://" + remotes[d.label], "intervalSeconds": 0})
        sync_id, line = d.request("sync/now", {})
        d.write(line)
        return sync_id, "sync/now"

    typing_during(binaries, folder, args, "typing-sync", "typing while the first sync runs", pause, begin,
                  f"a fresh server's first sync pulls {args.syncing_count:,} memos from a folder remote, until it ends")

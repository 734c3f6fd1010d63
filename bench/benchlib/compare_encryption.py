"""bench/compare.py --encryption N: what an encrypted remote costs over a plain one, in the same run.

For each binary, in turns, round after round: a store holding the benchmark's N memos makes its first
sync to an empty remote (the push), a fresh store then makes its first sync from it (the pull), and the
server of the first store syncs one edit at a time (the one-edit sync); once with a plain folder remote
and once with an encrypted one. Each encrypted sync includes deriving the key from the passphrase,
once per store (scrypt), as a device that joins pays it.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import time

from .compare_base import in_turns, write_benchmark_memos
from .driver import BenchError, start_initialized

PASSPHRASE = "benchmark passphrase"
EDITS = 20  # one-edit syncs timed per store and round


def shell(binary: str, home: str, *args: str, passphrase: bool = False) -> float:
    """Runs `cloudnotes *args`; its wall time in seconds."""
    env = {**os.environ, "HOME": home}
    if passphrase:
        env["CLOUDNOTES_PASSPHRASE"] = PASSPHRASE
    started = time.perf_counter()
    subprocess.run([binary, *args], env=env, check=True, capture_output=True)
    return time.perf_counter() - started


def one_edit_syncs(binary: str, store: str, label: str) -> list[float]:
    """The server on `store` (synced already) changes one memo and syncs, EDITS times: each sync/now's seconds."""
    d = start_initialized([binary, "serve", "--store", store, "--sync-delay", "3600", "--sync-interval", "0"], label)
    d.call("sync/now", {})  # after the sync the server starts with, which would take the first edit
    page, _ = d.call("memo/list", {"offset": 0, "limit": 1})
    memo = page["rows"][0]["id"]
    times = []
    for i in range(EDITS + 2):
        shown, _ = d.call("memo/select", {"id": memo})
        current = shown["memo"]
        d.call("memo/update", {"id": memo, "text": current["text"] + f" edit {i}", "baseVersion": current["version"]})
        started = time.perf_counter()
        result, _ = d.call("sync/now", {})
        if result["published"] != 1:
            raise BenchError(f"{label}: a one-edit sync published {result['published']} revisions")
        if i >= 2:
            times.append(time.perf_counter() - started)
    d.shutdown()
    return times


def encryption_cost(binaries: dict, folder: str, args) -> None:
    count = args.encryption_count
    data = os.path.join(folder, "memos.json")
    write_benchmark_memos(count, data)
    imported = {}
    for name, binary in binaries.items():
        imported[name] = os.path.join(folder, f"imported-{name}.sqlite")
        shell(binary, folder, "import", data, "--store", imported[name])
    variants = [(name, encrypted) for name in binaries for encrypted in (False, True)]
    results = {variant: {"push": [], "pull": [], "edit": []} for variant in variants}
    for r in range(args.rounds):
        for name, encrypted in in_turns(variants, r):
            binary, place = binaries[name], os.path.join(folder, f"round-{r}-{name}-{'sealed' if encrypted else 'plain'}")
            os.mkdir(place)
            remote, pusher, puller = (os.path.join(place, f) for f in ("remote", "push.sqlite", "pull.sqlite"))
            os.mkdir(remote)
            for suffix in ("", "-wal"):
                if os.path.exists(imported[name] + suffix):
                    shutil.copy(imported[name] + suffix, pusher + suffix)
            extra = ["--encrypt"] if encrypted else []
            push = shell(binary, place, "sync", "--store", pusher, "--remote", "file://" + remote, *extra, passphrase=encrypted)
            pull = shell(binary, place, "sync", "--store", puller, "--remote", "file://" + remote, passphrase=encrypted)
            edits = one_edit_syncs(binary, pusher, name)
            for key, value in (("push", push), ("pull", pull), ("edit", statistics.median(edits))):
                results[(name, encrypted)][key].append(value)
            shutil.rmtree(place)
    print(f"sync of {count:,} memos with a folder remote, plain and encrypted: medians of {args.rounds} rounds in turns")
    for name in binaries:
        plain, sealed = results[(name, False)], results[(name, True)]
        for key, what in (("push", "first sync, pushing"), ("pull", "first sync, pulling"),
                          ("edit", f"one-edit sync (median of {EDITS})")):
            base, cost = statistics.median(plain[key]), statistics.median(sealed[key])
            unit, scale = ("ms", 1000) if key == "edit" else ("s", 1)
            print(f"{name:>8} {what:<36} plain {base * scale:8.2f} {unit}   encrypted {cost * scale:8.2f} {unit}   "
                  f"{cost / base:5.2f}x   (goal: at most 1.15x)")

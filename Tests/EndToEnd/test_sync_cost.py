"""Rule 5 of sync ("Cost grows with changes, not with memos"), with 100,000 memos on Apache and on both
S3 servers (moto's and rclone's).

Store A imports 100,000 memos and syncs them to the remote through a FaultProxy without faults (so that the
requests are counted by the proxy as well as reported by `sync --json`); store B pulls them through
`cloudnotes serve` and `sync/now` with a workDoneToken, which must report `$/progress`.  Then one edit on
A costs A's sync at most 8 requests, and B's next sync at most 8; a sync with nothing changed costs at
most 5.

The durations are printed (run with -s to see them), never checked: what rule 5 promises is counted in
requests, and a machine's speed is no part of it.
"""

from __future__ import annotations

import json
import random
import time

import pytest

from cnsupport.cli import Cli
from cnsupport.fault_proxy import FaultProxy
from cnsupport.server import Server
from cnsupport.store_file import memos_of

MEMOS = 100_000
WORDS = ("milk eggs bread call mum meeting notes project plan ideas book read later buy train ticket "
         "dentist friday budget draft review holiday packing list garden seeds recipe soup birthday gift "
         "password hint wifi router invoice tax return running shoes weekend hike lake museum").split()


def write_import_file(path, count: int, seed: int = 7) -> None:
    """Short realistic memos (a title, one to four short lines), and every 10,000th a long one (~200 KB)."""
    rng = random.Random(seed)
    choice, randint = rng.choice, rng.randint
    entries = []
    for i in range(count):
        if i % 10_000 == 9_999:
            body = "\n".join(f"{j}. " + " ".join(choice(WORDS) for _ in range(12)) for j in range(3000))
        else:
            body = "\n".join(" ".join(choice(WORDS) for _ in range(randint(2, 8))) for _ in range(randint(1, 4)))
        entries.append({"title": f"{choice(WORDS).capitalize()} {choice(WORDS)} #{i}", "body": body,
                        "last_modified": 1_600_000_000 + i * 37})
    path.write_text(json.dumps(entries, ensure_ascii=False), encoding="utf-8")


def timed(label: str, measurements: dict, action):
    started = time.monotonic()
    result = action()
    measurements[label] = round(time.monotonic() - started, 2)
    return result


def proxied_remote(kind: str, request) -> tuple[FaultProxy, str, dict]:
    """A fresh remote of `kind` behind a FaultProxy: the proxy, the remote's URL through it, and the
    environment that reaches it (S3's endpoint is the proxy, which passes Host on as it was signed)."""
    if kind == "apache":
        proxy = FaultProxy(request.getfixturevalue("apache_dav").new_collection(f"cost-{time.monotonic_ns()}"))
        return proxy, proxy.url, {}
    s3 = request.getfixturevalue(f"{kind}_s3")
    proxy = FaultProxy(s3.endpoint + "/", keep_host=True)
    return proxy, f"s3://{s3.new_bucket()}/cost", {**s3.env, "AWS_ENDPOINT_URL": proxy.base_url}


@pytest.mark.parametrize("kind", ["apache", "moto", "rclone"])
def test_cost_grows_with_changes_not_with_memos(kind, request, tmp_root, servers):
    measurements: dict = {}
    proxy, url, env = proxied_remote(kind, request)
    try:
        a, b = Cli(tmp_root / "a" / "notes.sqlite", env=env), Cli(tmp_root / "b" / "notes.sqlite", env=env)
        source = tmp_root / "memos-100k.json"
        timed("generate import file (s)", measurements, lambda: write_import_file(source, MEMOS))
        timed("import 100,000 on A (s)", measurements, lambda: a.import_file(source, timeout=900))

        # A's first sync: 100,000 memos published
        proxy.reset_counts()
        report = timed("A's first sync, publishing 100,000 (s)", measurements,
                       lambda: a.sync(url, timeout=900))
        measurements["A's first sync: requests (reported / counted)"] = (report["requests"], len(proxy.requests))
        assert report["published"] == MEMOS, report
        assert report["requests"] == len(proxy.requests), (report["requests"], proxy.requests[:20])

        # B pulls them, driven by the server: sync/now with a workDoneToken reports $/progress
        b.ok("new", input="B's own memo")    # B makes its store (and has one change to publish)
        server: Server = servers.start(b.store, args=["--sync-interval", "0"], env={"HOME": str(b.home), **env})
        server.initialize()
        server.call("sync/configure", {"remote": url, "intervalSeconds": 0})
        proxy.reset_counts()
        notes, result = timed("B's first sync, pulling 100,000, via sync/now (s)", measurements,
                              lambda: server.call_notes("sync/now", {"workDoneToken": "pull-100k"}, timeout=900))
        notes += server.stray_notes
        progress = [n["params"]["value"] for n in notes
                    if n["method"] == "$/progress" and n["params"]["token"] == "pull-100k"]
        kinds = [p["kind"] for p in progress]
        measurements["B's first sync: $/progress notifications"] = len(progress)
        assert kinds and kinds[0] == "begin" and kinds[-1] == "end", kinds
        assert "report" in kinds, kinds
        percentages = [p["percentage"] for p in progress if p["kind"] == "report" and "percentage" in p]
        assert percentages and all(0 <= p <= 100 for p in percentages), percentages
        # Whether sync/now ran the pull itself or waited behind the server's own sync (which sync/configure
        # starts), the client watches the pull advance, not just a begin and an end.
        assert len(set(percentages)) >= 10, percentages
        assert result["status"]["state"] == "idle", result
        measurements["B's first sync: requests (reported / counted by the proxy)"] = (result["requests"],
                                                                                     len(proxy.requests))
        assert server.call("memo/list", {"limit": 1})["total"] == MEMOS + 1
        server.shutdown_and_exit(timeout=120)
        assert len(memos_of(b.store)) == MEMOS + 1
        a.sync(timeout=900)                  # A reads B's one memo
        assert len(memos_of(a.store)) == MEMOS + 1

        # one edit on A: a few requests, whatever the number of memos
        memo = sorted(memos_of(a.store))[12345]
        a.edit(memo, "Edited after the big sync\none line changed")
        report = sync_counted(a, proxy, "A's sync after one edit", measurements)
        assert report["published"] == 1, report
        assert report["requests"] <= 8 and len(proxy.requests) <= 8, proxy.requests
        report = sync_counted(b, proxy, "B's sync after A's edit", measurements)
        assert report["changedMemos"] == 1, report
        assert report["requests"] <= 8 and len(proxy.requests) <= 8, proxy.requests
        assert memos_of(b.store)[memo] == "Edited after the big sync\none line changed"

        # nothing changed: at most 5 requests
        for name, cli in (("A", a), ("B", b)):
            report = sync_counted(cli, proxy, f"{name}'s sync with nothing changed", measurements)
            assert (report["published"], report["changedMemos"]) == (0, 0), report
            assert report["requests"] <= 5 and len(proxy.requests) <= 5, proxy.requests
    finally:
        proxy.stop()
        print("\nmeasurements:\n" + "\n".join(f"  {k}: {v}" for k, v in measurements.items()))


def sync_counted(cli: Cli, proxy: FaultProxy, label: str, measurements: dict) -> dict:
    proxy.reset_counts()
    report = timed(f"{label} (s)", measurements, lambda: cli.sync(timeout=900))
    measurements[f"{label}: requests (reported / counted)"] = (report["requests"], len(proxy.requests))
    measurements[f"{label}: what"] = [f"{m} {p.rsplit('/', 2)[-2:]}" for m, p in proxy.requests]
    assert report["requests"] == len(proxy.requests), (report, proxy.requests)
    return report

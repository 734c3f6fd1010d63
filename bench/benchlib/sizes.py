"""Each size's store: made before the scenarios (the data, the import's baseline, the import, the
background indexing, the ids), and its last baselines and peak memory after them."""

from __future__ import annotations

import os
import time

from .baselines import SMALL_LINE, raw_insert_baseline
from .data import TYPING_100KB_TITLE, TYPING_1KB_TITLE, generate_memos, write_import_file
from .driver import BenchError, log, perf_ns
from .session import Session
from .stats import fmt_ns, summarize
from .stores import bytes_between, remove_store, unindexed_count, written_bytes


class SizeRun:
    """One number of memos through the run: its data and store, and its figures so far."""

    def __init__(self, n: int):
        self.n = n
        self.out: dict = {"scenarios": {}, "baselines": {}, "rss_kb": {}}
        self.sc, self.bl, self.rss = self.out["scenarios"], self.out["baselines"], self.out["rss_kb"]
        self.memos: list[dict] = []
        self.info: dict = {}
        self.store = ""
        self.ids: list[str] = []
        self.id_1kb = self.id_100kb = ""
        self.pipelined_start_text = ""  # the 1 KB memo's text as the first pipelined round found it
        # The pipe floor measured before the server's runs, to pool with the one measured after them.
        self.floor_samples: list[int] = []


def prepare(s: Session, run: SizeRun, schema: list[str]) -> None:
    """The data, the import's baseline (the raw insert), the import into an empty store (the store
    every later scenario uses) and the ids of its memos."""
    args, n, sc, rss = s.args, run.n, run.sc, run.rss
    # data
    data_path = os.path.join(s.work, f"memos-{n}-seed{args.seed}.json")
    t = time.monotonic()
    memos, info = generate_memos(n, args.seed, args.rare_term)
    if not os.path.exists(data_path):
        write_import_file(memos, data_path + ".tmp")
        os.replace(data_path + ".tmp", data_path)
    info["file_bytes"] = os.path.getsize(data_path)
    run.out["data"] = info
    log(f"data: {n:,} memos, {info['total_bytes'] / 1e6:.1f} MB of text, mean {info['mean_bytes']} B "
        f"({info['mean_bytes_without_100kb']} B without the {info['big_memos']} of 100 KB), "
        f"{time.monotonic() - t:.1f} s")

    # The import's baseline, the same rows inserted into the same schema by SQLite alone, just before
    # the import: this machine's speed moves twofold within minutes, and the ratio must compare the
    # same minutes (at the run's end, a raw insert of 8.33 s once met an import of 2.62 s).
    log("baseline: raw SQLite insert of the same rows (no full-text index, as the server's import)")
    run.bl["raw_insert"] = raw_insert_baseline(os.path.join(s.work, f"raw-{n}.sqlite"), schema, memos, args.seed,
                                               mode="plain")
    log(f"  {fmt_ns(run.bl['raw_insert']['elapsed_ns'])}")

    # import into an empty store (this is also the store every later scenario uses)
    store = os.path.join(s.work, f"store-{n}.sqlite")
    remove_store(store)
    log("import")
    d = s.start_server(store, f"{n} import", expect_show=False)
    rid, line = d.request("memo/import", {"path": data_path})
    written_before = written_bytes(d.proc.pid)
    elapsed, response, _ = d.round_trip(line)
    written_imported = written_bytes(d.proc.pid)
    result = d.check(rid, response, "memo/import")
    if result.get("imported") != n:
        raise BenchError(f"memo/import: imported {result.get('imported')} memos, expected {n}")
    listed, _ = d.call("memo/list", {"limit": 1})
    if listed["total"] != n:
        raise BenchError(f"after importing {n} memos, memo/list says total {listed['total']}")
    # The server indexes imported memos for full-text search in the background, while the client
    # is quiet (searches read unindexed memos' text directly meanwhile). Wait for it, idle, so
    # that the search scenarios measure the indexed store.
    log("  background indexing (server idle)")
    t_index = perf_ns()
    while unindexed_count(store) > 0:
        if perf_ns() - t_index > args.timeout * 1e9:
            raise BenchError("background indexing did not finish")
        time.sleep(0.2)
    index_elapsed = perf_ns() - t_index
    written_indexed = written_bytes(d.proc.pid)
    rss["import"] = d.shutdown()
    sc["import"] = {"n": 1, "elapsed_ns": elapsed, "p50_ns": elapsed, "p99_ns": elapsed, "max_ns": elapsed,
                    "written_bytes": bytes_between(written_before, written_imported)}
    sc["background_index"] = {"n": 1, "elapsed_ns": index_elapsed, "p50_ns": index_elapsed,
                              "p99_ns": index_elapsed, "max_ns": index_elapsed,
                              "written_bytes": bytes_between(written_imported, written_indexed)}
    log(f"  import {fmt_ns(elapsed)}, then background indexing {fmt_ns(index_elapsed)}")

    # ids, from memo/list pages
    log("ids (memo/list pages)")
    d = s.start_server(store, f"{n} ids")
    ids, offset, total = [], 0, None
    while total is None or offset < total:
        page, _ = d.call("memo/list", {"offset": offset, "limit": 1000})
        total = page["total"]
        ids.extend(row["id"] for row in page["rows"])
        if not page["rows"]:
            break
        offset += len(page["rows"])
    first = d.call("memo/list", {})[0]["rows"]
    rss["ids"] = d.shutdown()
    if len(ids) != n or len(set(ids)) != n:
        raise BenchError(f"memo/list pages gave {len(ids)} ids ({len(set(ids))} distinct), expected {n}")
    by_title = {row["title"]: row["id"] for row in first}
    if TYPING_1KB_TITLE not in by_title or TYPING_100KB_TITLE not in by_title:
        raise BenchError("the typing-test memos are not on the first page of memo/list")
    id_1kb, id_100kb = by_title[TYPING_1KB_TITLE], by_title[TYPING_100KB_TITLE]

    run.memos, run.info, run.store, run.ids = memos, info, store, ids
    run.id_1kb, run.id_100kb = id_1kb, id_100kb


def finish(s: Session, run: SizeRun, schema: list[str]) -> None:
    """The baselines measured after the server's runs, and the peak memory over them."""
    args, n, bl, rss, out, memos = s.args, run.n, run.bl, run.rss, run.out, run.memos
    # the floor again, after the server runs: it moves with the machine's load, so both runs count
    log("baseline: pipe floor again (cat)")
    bl["pipe_floor_after"], more = s.baseline_pipe(SMALL_LINE, "floor")
    bl["pipe_floor"] = summarize(run.floor_samples + more) | {"bytes": len(SMALL_LINE)}

    log("baseline: raw SQLite insert, each row indexed by the FTS trigger")
    bl["raw_insert_fts"] = raw_insert_baseline(os.path.join(s.work, f"raw-{n}.sqlite"), schema, memos, args.seed,
                                               mode="triggers")
    log(f"  {fmt_ns(bl['raw_insert_fts']['elapsed_ns'])}")
    if not args.no_rebuild_baseline:
        log("baseline: raw SQLite insert without the FTS trigger, then one FTS 'rebuild'")
        bl["raw_insert_rebuild"] = raw_insert_baseline(os.path.join(s.work, f"raw-{n}.sqlite"), schema, memos,
                                                       args.seed, mode="rebuild")
        log(f"  {fmt_ns(bl['raw_insert_rebuild']['elapsed_ns'])}")

    peak_key = max(rss, key=lambda k: rss[k].get("VmHWM", 0))
    out["peak_rss"] = {"kb": rss[peak_key].get("VmHWM", 0), "during": peak_key,
                       "anon_kb": rss[peak_key].get("RssAnon", 0), "file_kb": rss[peak_key].get("RssFile", 0),
                       "interactive_kb": max((v.get("VmHWM", 0) for k, v in rss.items() if k != "import"), default=0)}
    if not args.keep:
        remove_store(run.store)
    run.memos = []  # the raw inserts were the last to need them

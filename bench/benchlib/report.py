"""The tables: one per size (each figure beside its target and its baseline), and the scaling summary."""

from __future__ import annotations

from .scenarios import SEARCH_KEYS
from .stats import MS, fmt_ns, format_table

# The latency scenarios of the scaling table and the plot, and their labels there.
PLOT_SCENARIOS = {
    "startup_initialize": "start-up → initialize",
    "startup_didshow": "start-up → detail/didShow",
    "select": "memo/select",
    "list_first": "memo/list first page",
    "list_offset90": "memo/list offset 90%",
    "update_1kb": "memo/update 1 KB",
    "update_100kb": "memo/update 100 KB",
    "edit_1kb": "memo/edit 1 KB",
    "edit_100kb": "memo/edit 100 KB",
    "search_rare": "memo/search rare",
    "search_rare_list": "  memo/list after rare",
    "search_common": "memo/search common",
    "search_common_list": "  memo/list after common",
    "search_ko2": "memo/search 2-char Korean",
    "search_ko2_list": "  memo/list after 2-char",
    "search_en2": "memo/search 2-char ASCII",
    "search_en2_list": "  memo/list after 2-char ASCII",
}


def header_text(results: dict, server_info: dict, args) -> str:
    """The lines above the tables in latest.txt: the commit, the machine, the SQLite versions, the settings."""
    m = results["meta"]
    return (f"CloudNotes benchmark, {m['date']}, commit {m['git_commit'][:12]}{' (dirty)' if m['git_dirty'] else ''}, "
            f"server {server_info.get('version', '?')}\n"
            f"{m['cpus']} CPUs, {m['platform']}, Python {m['python']}; SQLite: server {m['sqlite_server']}, "
            f"python sqlite3 {m['sqlite_python']}\n"
            f"{args.ops} ops per scenario after {args.warmup} warm-up; {args.starts} starts; "
            f"{args.pipelined} pipelined updates; seed {args.seed}")


def rows(args, n: int, r: dict) -> list[tuple]:
    """(label, stats or None, value text or None, target, met, baseline label, baseline p50, ratio)."""
    sc, bl = r["scenarios"], r["baselines"]
    floor = bl["pipe_floor"]["p50_ns"]
    out = []

    def lat(key, label, target, met, base_label=None, base=None):
        s = sc[key]
        if key not in ("startup_initialize", "startup_didshow") and s["n"] < args.ops:
            label += f" [n={s['n']}]"
        out.append((label, s, None, target, met(s), base_label, base, s["p50_ns"] / base if base else None))

    lat("startup_initialize", "start-up → initialize response", "-", lambda s: None,
        "cat start+echo", bl["cat_start"]["p50_ns"])
    lat("startup_didshow", "start-up → first detail/didShow", "< 30 ms, flat in N",
        lambda s: s["p50_ns"] < 30 * MS, "cat start+echo", bl["cat_start"]["p50_ns"])
    quick = lambda s: s["p50_ns"] <= 2 * floor and s["p99_ns"] < 1 * MS
    lat("select", "memo/select (random memo)", "p50 ≤ 2x floor, p99 < 1 ms", quick, "pipe floor", floor)
    lat("list_first", "memo/list first page", "p50 ≤ 2x floor, p99 < 1 ms", quick, "pipe floor", floor)
    lat("list_offset90", f"memo/list offset {sc['list_offset90']['offset']:,}", "p50 < 2 ms",
        lambda s: s["p50_ns"] < 2 * MS, "pipe floor", floor)
    lat("update_1kb", "memo/update 1 KB memo (typing)", "p50 ≤ 2x floor, p99 < 1 ms", quick, "pipe floor", floor)
    lat("update_100kb", "memo/update 100 KB memo (typing)", "p50 < 1 ms",
        lambda s: s["p50_ns"] < 1 * MS, "100 KB line via cat", bl["pipe_100kb"]["p50_ns"])
    if "edit_1kb" in sc:
        lat("edit_1kb", "memo/edit 1 KB memo (typing)", "p50 ≤ 2x floor, p99 < 1 ms", quick, "pipe floor", floor)
        lat("edit_100kb", "memo/edit 100 KB memo (typing)", "p50 < 1 ms",
            lambda s: s["p50_ns"] < 1 * MS, "SQLite row rewrite", bl["sqlite_rewrite_100kb"]["p50_ns"])
    for key in SEARCH_KEYS:
        base = bl.get(f"sqlite_search_{key}", {}).get("p50_ns")
        term = sc[f"search_{key}"]["query"]
        matches = sc[f"search_{key}"]["matches"]
        target = "p50 ≤ 1.5x SQLite" + (", < 10 ms" if key == "common" else "")

        def met(s, base=base, key=key):
            ok = base is not None and s["p50_ns"] <= 1.5 * base
            return ok and s["p50_ns"] < 10 * MS if key == "common" else (ok if base is not None else None)
        hits = f"{matches:,} hit" + ("" if matches == 1 else "s")
        lat(f"search_{key}", f"memo/search {term!r} ({hits})", target, met, "SQLite direct", base)
        lat(f"search_{key}_list", "  then memo/list first page", target, met, "SQLite direct", base)
    t = sc["throughput"]
    cat_rate = bl["cat_pipelined"]["per_second"]
    out.append((f"{t['n']:,} pipelined memo/update", None, f"{t['per_second']:,.0f}/s", "≥ 20,000/s",
                t["per_second"] >= 20_000, "same lines via cat", f"{cat_rate:,.0f}/s", cat_rate / t["per_second"]))
    imp = sc["import"]["elapsed_ns"]
    raw = bl["raw_insert"]["elapsed_ns"]
    out.append((f"memo/import of {n:,} memos", None, fmt_ns(imp), "< 3 s, ≤ 2.5x raw insert",
                imp < 3e9 and imp <= 2.5 * raw, "raw SQLite insert", fmt_ns(raw), imp / raw))
    peak = r["peak_rss"]
    out.append((f"peak RSS (max over runs: {peak['during']})", None, f"{peak['kb'] / 1024:.1f} MB",
                "< 50 MB, flat in N", peak["kb"] < 50 * 1024, None, None, None))
    if "anon_kb" in peak:
        out.append(("  at that run's end: own memory / code pages", None,
                    f"{peak['anon_kb'] / 1024:.1f} / {peak['file_kb'] / 1024:.1f} MB", "", None, None, None, None))
    out.append(("peak RSS (interactive runs)", None, f"{peak['interactive_kb'] / 1024:.1f} MB",
                "< 50 MB, flat in N", peak["interactive_kb"] < 50 * 1024, None, None, None))
    return out


def table(args, n: int, r: dict) -> str:
    """One size's table (`r`: its results), with its notes lines under it."""
    d = r["data"]
    header = (f"== {n:,} memos: {d['total_bytes'] / 1e6:.1f} MB of text, mean {d['mean_bytes']} B "
              f"({d['mean_bytes_without_100kb']} B without the {d['big_memos']:,} memo{'s' if d['big_memos'] != 1 else ''} of 100 KB); "
              f"{args.ops:,} ops after {args.warmup:,} warm-up ==")
    cols = ("scenario", "p50", "p99", "max", "target", "met", "baseline", "base p50", "ratio")
    lines = []
    for label, s, value, target, met, base_label, base, ratio in rows(args, n, r):
        if s is not None:
            p50, p99, mx = fmt_ns(s["p50_ns"]), fmt_ns(s["p99_ns"]), fmt_ns(s["max_ns"])
        else:
            p50, p99, mx = value, "", ""
        base_text = fmt_ns(base) if isinstance(base, (int, float)) else (base or "")
        lines.append((label, p50, p99, mx, target, {True: "yes", False: "NO", None: "-"}[met],
                      base_label or "", base_text, f"{ratio:.2f}x" if ratio is not None else ""))
    bl = r["baselines"]
    sel = r["scenarios"]["select"]
    notes = [
        f"pipe floor (cat, {bl['pipe_floor']['bytes']} B line, runs before and after the server's): "
        f"p50 {fmt_ns(bl['pipe_floor']['p50_ns'])} (before {fmt_ns(bl['pipe_floor_before']['p50_ns'])}, "
        f"after {fmt_ns(bl['pipe_floor_after']['p50_ns'])}), "
        f"p99 {fmt_ns(bl['pipe_floor']['p99_ns'])}, max {fmt_ns(bl['pipe_floor']['max_ns'])}; "
        f"100 KB line via cat: p50 {fmt_ns(bl['pipe_100kb']['p50_ns'])}, p99 {fmt_ns(bl['pipe_100kb']['p99_ns'])}; "
        f"cat start+echo: p50 {fmt_ns(bl['cat_start']['p50_ns'])}",
    ]
    if "rounds_per_second" in r["scenarios"].get("throughput", {}):
        rates = r["scenarios"]["throughput"]["rounds_per_second"]
        notes.append(f"pipelined memo/update: the median of {len(rates)} rounds, taken in turns with the other sizes' "
                     f"({', '.join(f'{x:,.0f}' for x in rates)} a second); cat's figures below, from the first round")
    if "cat_pipelined_replies" in bl:
        req, rep = bl["cat_pipelined"], bl["cat_pipelined_replies"]
        notes.append(f"pipelined updates through cat alone: the requests ({req['bytes'] / 1e6:,.0f} MB) at "
                     f"{req['per_second']:,.0f}/s, the server's replies and notifications ({rep['bytes'] / 1e6:,.0f} MB) "
                     f"at {rep['per_second']:,.0f}/s: a server that did nothing but read and write cannot beat the slower")
    if "fsync" in bl:
        notes.append(f"fsync floor (4 KB write + fsync in the stores' folder): p50 {fmt_ns(bl['fsync']['p50_ns'])}, "
                     f"p99 {fmt_ns(bl['fsync']['p99_ns'])}: a durable commit per update costs at least this")
    direct = [f"{r['scenarios'][f'search_{k}']['query']!r} p50 "
              f"{fmt_ns(bl[f'sqlite_search_{k}']['p50_ns'])} p99 {fmt_ns(bl[f'sqlite_search_{k}']['p99_ns'])} "
              f"(n={bl[f'sqlite_search_{k}']['n']:,})"
              for k in SEARCH_KEYS if f"sqlite_search_{k}" in bl]
    if direct:
        notes.append("SQLite direct (count + first page): " + "; ".join(direct))
    lookups = [f"{bl[f'sqlite_lookup_{k}']['query']!r} p50 {fmt_ns(bl[f'sqlite_lookup_{k}']['p50_ns'])} "
               f"(n={bl[f'sqlite_lookup_{k}']['n']:,})"
               for k in SEARCH_KEYS if f"sqlite_lookup_{k}" in bl]
    if lookups:
        notes.append("the full-text index's lookup alone (its matches counted, SQLite direct, in the same turns): "
                     + "; ".join(lookups) + ": a search that counts its matches cannot take less")
    raw_notes = [f"raw insert without the index (the import's baseline): {fmt_ns(bl['raw_insert']['elapsed_ns'])}",
                 f"with the FTS trigger per row: {fmt_ns(bl['raw_insert_fts']['elapsed_ns'])}"]
    if "raw_insert_rebuild" in bl:
        raw_notes.append(f"plain insert + one FTS 'rebuild': {fmt_ns(bl['raw_insert_rebuild']['elapsed_ns'])}")
    if "background_index" in r["scenarios"]:
        raw_notes.append(f"the server's background indexing after the import: "
                         f"{fmt_ns(r['scenarios']['background_index']['elapsed_ns'])}")
    notes.append("; ".join(raw_notes))
    written = [(label, entry.get("written_bytes")) for label, entry in (
        ("the import", r["scenarios"].get("import", {})), ("the raw insert", bl["raw_insert"]),
        ("the background indexing after the import", r["scenarios"].get("background_index", {})))]
    if all(value is not None for _, value in written):
        notes.append("written for storage (each process's write_bytes, the log and its checkpoints included): "
                     + "; ".join(f"{label} {value / 1e6:,.0f} MB" for label, value in written)
                     + f"; for {r['data']['total_bytes'] / 1e6:.1f} MB of text")
    if "p50_ns_100kb_memos" in sel:
        notes.append(f"memo/select: {sel['memos_of_100kb']} of the {sel['n']} selected memos were 100 KB "
                     f"(their p50 {fmt_ns(sel['p50_ns_100kb_memos'])}); p99 of the others "
                     f"{fmt_ns(sel['p99_ns_other_memos'])}")
    notes.append("ratio = p50 / baseline p50 (for throughput: baseline rate / server rate)")
    return header + "\n" + format_table(cols, lines) + "\n" + "\n".join(notes)


def scaling_table(results: dict, sizes: list[int]) -> str:
    """Each scenario's p50 at every size, and its ratio largest / smallest (empty for a single size)."""
    sizes = [str(n) for n in sizes]
    if len(sizes) < 2:
        return ""
    keys = [k for k in PLOT_SCENARIOS if all(k in results["sizes"][s]["scenarios"] for s in sizes)]
    lines = []
    for k in keys:
        p50s = [results["sizes"][s]["scenarios"][k]["p50_ns"] for s in sizes]
        lines.append((PLOT_SCENARIOS[k], *map(fmt_ns, p50s), f"{p50s[-1] / p50s[0]:.2f}x"))
    rates = [results["sizes"][s]["scenarios"]["throughput"]["per_second"] for s in sizes]
    lines.append(("pipelined updates/s", *(f"{x:,.0f}" for x in rates), f"{rates[-1] / rates[0]:.2f}x"))
    rss = [results["sizes"][s]["peak_rss"]["interactive_kb"] for s in sizes]
    lines.append(("peak RSS, interactive", *(f"{x / 1024:.1f} MB" for x in rss), f"{rss[-1] / max(1, rss[0]):.2f}x"))
    rss = [results["sizes"][s]["peak_rss"]["kb"] for s in sizes]
    lines.append(("peak RSS, all runs", *(f"{x / 1024:.1f} MB" for x in rss), f"{rss[-1] / max(1, rss[0]):.2f}x"))
    cols = ("p50 by number of memos", *(f"{int(s):,}" for s in sizes), f"{int(sizes[-1]):,} / {int(sizes[0]):,}")
    return "== scaling (flat curves: the last column near 1.00x) ==\n" + format_table(cols, lines)

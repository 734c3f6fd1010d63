"""The scenarios, each for every size in turn: start-up, select, list pages, searches (in turns with
SQLite's own), typing one round trip at a time, and pipelined updates (bench/README.md, "The scenarios")."""

from __future__ import annotations

import json
import os
import random

from .baselines import (SMALL_LINE, DirectSearch, cat_pipelined_baseline, cat_start_baseline, fsync_baseline,
                        sqlite_rewrite_baseline)
from .data import TYPED_CHARS, memo_text
from .driver import BenchError, Driver, json_escape, log, memo_id_bytes, perf_ns, pipelined, timed_start
from .session import Session
from .sizes import SizeRun
from .stats import summarize

DECOY_TERM = "zqxvkj"  # searched between timed searches; the generated text never holds it
SEARCH_KEYS = ("rare", "common", "ko2", "en2")  # the searches timed: --rare-term, --common-term, --short-term, --short-ascii-term
PIPELINED_ROUNDS = 5  # pipelined runs per size, in turns across sizes; the figure is their median


def startup(s: Session, runs: list[SizeRun]) -> None:
    """Process start to the initialize response and to the first detail/didShow: the starts alternate
    between the sizes, so that the figures of every size come from the same minutes. Before them,
    the pipe floor (before any server's run) and cat's own start, for every size."""
    args = s.args
    for run in runs:
        log(f"\nbaselines before the server's runs ({run.n:,} memos): pipe floor, cat start (cat)")
        run.bl["pipe_floor_before"], run.floor_samples = s.baseline_pipe(SMALL_LINE, "floor")
        run.bl["cat_start"] = cat_start_baseline(args.starts, args.timeout)
    log(f"\nstart-up ({args.starts} starts + 2 warm-up per size, alternating between sizes)")
    to_init = [[] for _ in runs]
    to_show = [[] for _ in runs]
    peak = [{} for _ in runs]
    for i in range(args.starts + 2):
        for k, run in enumerate(runs):
            d = s.server(run.store, f"{run.n} start-up {i}")
            t_init, t_show = timed_start(d)
            memory = d.shutdown()
            peak[k] = max(peak[k], memory, key=lambda m: m.get("VmHWM", 0))
            if i >= 2:
                to_init[k].append(t_init)
                to_show[k].append(t_show)
    for k, run in enumerate(runs):
        run.sc["startup_initialize"] = summarize(to_init[k])
        run.sc["startup_didshow"] = summarize(to_show[k])
        run.rss["startup"] = peak[k]


def select(s: Session, run: SizeRun) -> None:
    """memo/select of random memos."""
    args, n, sc, rss, ids = s.args, run.n, run.sc, run.rss, run.ids
    log("memo/select")
    rng = random.Random(args.seed + n)
    picks = [ids[rng.randrange(n)] for _ in range(s.ops_total())]
    d = s.start_server(run.store, f"{n} select")
    big = []

    def check_select(i, result):
        memo = result["memo"]
        if memo["id"] != picks[i]:
            raise BenchError(f"memo/select {picks[i]} answered memo {memo['id']}")
        big.append(len(memo["text"]) > 50_000)
    samples = s.timed_calls(d, "memo/select", lambda i: {"id": picks[i]}, s.ops_total(), check_select)
    rss["select"] = d.shutdown()
    samples, big = samples[args.warmup:], big[args.warmup:]
    sc["select"] = summarize(samples)
    sc["select"]["memos_of_100kb"] = sum(big)
    if any(big) and not all(big):
        sc["select"]["p50_ns_100kb_memos"] = summarize([x for x, b in zip(samples, big) if b])["p50_ns"]
        sc["select"]["p99_ns_other_memos"] = summarize([x for x, b in zip(samples, big) if not b])["p99_ns"]


def lists(s: Session, run: SizeRun) -> None:
    """memo/list: the first page, and a page at 90% of the list."""
    args, n, sc, rss = s.args, run.n, run.sc, run.rss
    for key, offset in (("list_first", 0), ("list_offset90", int(0.9 * n))):
        log(f"memo/list offset {offset}")
        d = s.start_server(run.store, f"{n} {key}")
        params = {} if offset == 0 else {"offset": offset}
        expected_rows = min(100, n - offset)

        def check_list(i, result, expected_rows=expected_rows):
            if result["total"] != n or len(result["rows"]) != expected_rows:
                raise BenchError(f"memo/list: total {result['total']}, {len(result['rows'])} rows; "
                                 f"expected {n} and {expected_rows}")
        samples = s.timed_calls(d, "memo/list", lambda i: params, s.ops_total(), check_list)
        rss[key] = d.shutdown()
        sc[key] = summarize(samples[args.warmup:])
        sc[key]["offset"] = offset


def searches(s: Session, run: SizeRun) -> None:
    """memo/search, each followed by memo/list of the first page, and the same searches on SQLite directly."""
    args, n, sc, bl, rss, store = s.args, run.n, run.sc, run.bl, run.rss, run.store
    # Before each timed search, an untimed search for a term found nowhere: the server keeps the matches
    # of the last search (in step with every write), so a repeat of the same query would measure that
    # memory, not a search.
    # The same query straight on the SQLite file is the baseline, timed in turns with the server's, so
    # that both meet the machine's drift of the same minutes (timed apart, minutes apart, their ratio
    # moved by 1.5x with the hour): after a round of the server's, whenever SQLite's share of the time
    # so far is not ahead of the server's. A direct query far slower than the server's search (count
    # and first page of 18,600 matches) then runs every few rounds instead of eating the rounds' budget.
    terms = {"rare": args.rare_term, "common": args.common_term, "ko2": args.short_term, "en2": args.short_ascii_term}
    totals = {}
    for key, term in terms.items():
        log(f"memo/search {term!r} + memo/list (each after a search for {DECOY_TERM!r}), "
            f"in turns with the same query on SQLite directly")
        d = s.start_server(store, f"{n} search {key}")
        direct = DirectSearch(store, term)
        search_samples, list_samples, direct_samples, lookup_samples, seen_totals = [], [], [], [], set()
        decoy_rid_line = [d.request("memo/search", {"query": DECOY_TERM}) for _ in range(s.ops_total())]
        search_rid_line = [d.request("memo/search", {"query": term}) for _ in range(s.ops_total())]
        list_rid_line = [d.request("memo/list", None) for _ in range(s.ops_total())]
        started = perf_ns()
        server_ns = direct_ns = 0
        for i in range(s.ops_total()):
            if s.over_budget(started, i):
                break
            round_started = perf_ns()
            rid, line = decoy_rid_line[i]
            _, response, _ = d.round_trip(line)
            if d.check(rid, response, "memo/search")["total"] != 0:
                raise BenchError(f"memo/search {DECOY_TERM!r} found memos; it must find none")
            rid, line = search_rid_line[i]
            elapsed, response, _ = d.round_trip(line)
            result = d.check(rid, response, "memo/search")
            seen_totals.add(result["total"])
            search_samples.append(elapsed)
            rid, line = list_rid_line[i]
            elapsed, response, _ = d.round_trip(line)
            listed = d.check(rid, response, "memo/list")
            seen_totals.add(listed["total"])
            if len(listed["rows"]) != min(100, listed["total"]):
                raise BenchError(f"memo/list under the filter {term!r}: {len(listed['rows'])} rows of {listed['total']}")
            list_samples.append(elapsed)
            server_ns += perf_ns() - round_started
            last_round = i == s.ops_total() - 1 or s.over_budget(started, i + 1)
            if direct.possible and (direct_ns <= server_ns or (last_round and not direct_samples)):
                direct_started = perf_ns()
                sample, lookup = direct.run(), direct.run_lookup() if direct.lookup_sql else None
                direct_ns += perf_ns() - direct_started
                if i >= args.warmup:  # the server's warm-up rounds warm SQLite's up too
                    direct_samples.append(sample)
                    if lookup is not None:
                        lookup_samples.append(lookup)
        rss[f"search_{key}"] = d.shutdown()
        direct.close()
        if len(seen_totals) != 1:
            raise BenchError(f"memo/search {term!r} gave different totals on the same store: {sorted(seen_totals)}")
        totals[key] = seen_totals.pop()
        sc[f"search_{key}"] = summarize(search_samples[args.warmup:]) | {"query": term, "matches": totals[key]}
        sc[f"search_{key}_list"] = summarize(list_samples[args.warmup:]) | {"query": term, "matches": totals[key]}
        log(f"  {totals[key]:,} matches")
        if direct.possible:
            bl[f"sqlite_search_{key}"] = summarize(direct_samples) | direct.described()
            if direct.matches != totals[key]:
                s.problems.append(f"{n:,} memos: memo/search {term!r} says {totals[key]} matches, "
                                  f"SQLite directly says {direct.matches}")
        if lookup_samples:
            bl[f"sqlite_lookup_{key}"] = summarize(lookup_samples) | {"query": term, "sql": direct.lookup_sql}
    info = run.info
    if totals["rare"] != info["rare_term_memos"]:
        s.problems.append(f"{n:,} memos: memo/search {args.rare_term!r} found {totals['rare']} memos; "
                          f"the data set has {info['rare_term_memos']}")


def typing_scenarios(s: Session, run: SizeRun) -> None:
    """Typing, one round trip at a time: the whole text (memo/update) or the keystroke (memo/edit)."""
    args, n, sc, bl, rss, id_1kb, id_100kb = s.args, run.n, run.sc, run.bl, run.rss, run.id_1kb, run.id_100kb
    # The baselines of typing, just before it: a 100 KB line through cat, a write and fsync, the 100 KB
    # row rewritten straight through SQLite.
    log("baselines of typing: 100 KB line (cat), 4 KB write + fsync, SQLite row rewrite")
    big_text = memo_text(run.memos[-2])
    big_line = (b'{"id":12345,"jsonrpc":"2.0","result":{"memo":{"text":' + json.dumps(big_text, ensure_ascii=False).encode()
                + b'}}}\n')
    bl["pipe_100kb"], _ = s.baseline_pipe(big_line, "100 KB line")
    bl["fsync"] = fsync_baseline(s.work, s.ops_total(), args.warmup)
    bl["sqlite_rewrite_100kb"] = sqlite_rewrite_baseline(
        os.path.join(s.work, f"rewrite-{n}.sqlite"), big_text, s.ops_total(), args.warmup)
    for key, memo_id in (("update_1kb", id_1kb), ("update_100kb", id_100kb),
                         ("edit_1kb", id_1kb), ("edit_100kb", id_100kb)):
        log(f"typing ({key})")
        d = s.start_server(run.store, f"{n} {key}")
        selected, _ = d.call("memo/select", {"id": memo_id})
        text, version = selected["memo"]["text"], selected["memo"]["version"]
        type_keys = typing if key.startswith("update") else typing_edits
        sc[key] = summarize(type_keys(s, d, memo_id, text, version, s.ops_total())[args.warmup:])
        sc[key]["start_bytes"] = len(text.encode())
        rss[key] = d.shutdown()


def typing(s: Session, d: Driver, memo_id: str, text: str, version: int, count: int) -> list[int]:
    """`count` updates, each one character longer, baseVersion from the previous response."""
    head = b'{"jsonrpc":"2.0","id":%d,"method":"memo/update","params":{"id":"' + memo_id_bytes(memo_id) + b'","text":"'
    escaped = json_escape(text)
    samples = []
    for ch in s.keystrokes(count):
        text += ch
        escaped += json_escape(ch)
        rid = d.next_id
        d.next_id += 1
        line = (head % rid) + escaped + b'","baseVersion":%d}}\n' % version
        elapsed, response, _ = d.round_trip(line)
        memo = d.check(rid, response, "memo/update")["memo"]
        if memo["version"] != version + 1 or len(memo["text"]) != len(text):
            raise BenchError(f"memo/update: version {memo['version']} (expected {version + 1}), "
                             f"{len(memo['text'])} characters (expected {len(text)})")
        version = memo["version"]
        samples.append(elapsed)
    if memo["text"] != text:
        raise BenchError("memo/update: the memo's text is not the text sent")
    return samples


def typing_edits(s: Session, d: Driver, memo_id: str, text: str, version: int, count: int) -> list[int]:
    """`count` memo/edit requests, each inserting one character at the end, as an editor sends keystrokes."""
    head = (b'{"jsonrpc":"2.0","id":%d,"method":"memo/edit","params":{"id":"' + memo_id_bytes(memo_id)
            + b'","baseVersion":%d,"edits":[{"start":%d,"end":%d,"text":"%s"}]}}\n')
    length = len(text.encode())
    samples = []
    for ch in s.keystrokes(count):
        text += ch
        rid = d.next_id
        d.next_id += 1
        elapsed, response, _ = d.round_trip(head % (rid, version, length, length, json_escape(ch)))
        result = d.check(rid, response, "memo/edit")
        length += len(ch.encode())
        if result["version"] != version + 1 or result["length"] != length:
            raise BenchError(f"memo/edit: version {result['version']} (expected {version + 1}), "
                             f"{result['length']} bytes (expected {length})")
        version = result["version"]
        samples.append(elapsed)
    stored, _ = d.call("memo/select", {"id": memo_id})
    if stored["memo"]["text"] != text:
        raise BenchError("memo/edit: the memo's text is not the text typed")
    return samples


def throughput_rounds(s: Session, runs: list[SizeRun]) -> None:
    """The pipelined updates, PIPELINED_ROUNDS times for every size, the sizes in turn (the order
    rotating): each size's figure is the median of its rounds. One run lasts about half a second,
    and this machine's speed moves that much within a minute (the same binary and store gave
    14,318 and 30,344 a second three minutes apart), so one run a size drew its curve from noise."""
    for round_index in range(PIPELINED_ROUNDS):
        shift = round_index % len(runs)
        for run in runs[shift:] + runs[:shift]:
            log(f"\n=== {run.n:,} memos, pipelined round {round_index + 1} of {PIPELINED_ROUNDS} ===")
            throughput(s, run, round_index)
    for run in runs:
        rounds = run.sc.pop("throughput_rounds")
        median = sorted(rounds, key=lambda r: r["per_second"])[len(rounds) // 2]
        run.sc["throughput"] = {**median, "rounds_per_second": [r["per_second"] for r in rounds],
                                "rounds_start_bytes": [r["start_bytes"] for r in rounds]}


def throughput(s: Session, run: SizeRun, round_index: int) -> None:
    """Updates written without waiting; in the first round, the same lines and replies through cat.

    Every round starts the memo from the text the first found, with one untimed update, so that
    every round sends the same texts (only the versions' digits may differ)."""
    args, n, sc, bl, rss, id_1kb = s.args, run.n, run.sc, run.bl, run.rss, run.id_1kb
    log(f"throughput ({args.pipelined} pipelined updates)")
    d = s.start_server(run.store, f"{n} pipelined {round_index + 1}")
    selected, _ = d.call("memo/select", {"id": id_1kb})
    text, version = selected["memo"]["text"], selected["memo"]["version"]
    if round_index == 0:
        run.pipelined_start_text = text
    elif text != run.pipelined_start_text:
        text = run.pipelined_start_text
        version = d.call("memo/update", {"id": id_1kb, "text": text, "baseVersion": version})[0]["memo"]["version"]
    head = b'{"jsonrpc":"2.0","id":%d,"method":"memo/update","params":{"id":"' + memo_id_bytes(id_1kb) + b'","text":"'
    escaped = json_escape(text)
    lines, rids = [], []
    for i in range(args.pipelined):
        rid = d.next_id
        d.next_id += 1
        escaped += json_escape(TYPED_CHARS[i % len(TYPED_CHARS)])
        lines.append((head % rid) + escaped + b'","baseVersion":%d}}\n' % (version + i))
        rids.append(rid)
    final_text = text + "".join(TYPED_CHARS[i % len(TYPED_CHARS)] for i in range(args.pipelined))
    replies: list[bytes] = []
    elapsed, responses = pipelined(d, lines, received=replies)
    for i, (rid, response) in enumerate(zip(rids, responses)):
        result = d.check(rid, response, "memo/update (pipelined)")
        if result["memo"]["version"] != version + i + 1:
            raise BenchError(f"pipelined memo/update {i}: version {result['memo']['version']}, expected {version + i + 1}")
    if result["memo"]["text"] != final_text:
        raise BenchError("pipelined memo/update: the last response's text is not the text sent")
    after, _ = d.call("memo/select", {"id": id_1kb})
    if after["memo"]["text"] != final_text:
        raise BenchError("after the pipelined updates, memo/select returns another text")
    rss["pipelined" if round_index == 0 else f"pipelined, round {round_index + 1}"] = d.shutdown()
    figures = {"n": len(lines), "elapsed_ns": elapsed, "per_second": len(lines) / (elapsed / 1e9),
               "bytes_sent": sum(map(len, lines)), "start_bytes": len(text.encode())}
    sc.setdefault("throughput_rounds", []).append(figures)
    if round_index == 0:
        bl["cat_pipelined"] = cat_pipelined_baseline(lines, args.timeout)
        # What the server wrote back (each reply carries the text and its body, beside a list
        # notification), through the same pipes and the same reader: no server can answer faster.
        bl["cat_pipelined_replies"] = cat_pipelined_baseline([r + b"\n" for r in replies], args.timeout,
                                                         updates=len(lines))
    del replies
    log(f"  {figures['per_second']:,.0f} updates/s")

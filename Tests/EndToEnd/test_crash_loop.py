"""Kill -9 at random moments, over and over: every acknowledged change survives, nothing appears
half-applied, the file stays sound, and search finds what the list shows."""

from __future__ import annotations

import random
import sqlite3
import time

from cnsupport.server import Server
from cnsupport.store_file import integrity

ROUNDS = 100


def store_state(server: Server) -> dict[str, tuple[str, str]]:
    """key -> (id, text) of every memo in the store, newest first, read through the protocol."""
    state = {}
    for row in server.list_all()["rows"]:
        text = server.call("memo/share", {"id": row["id"], "format": "text"})["text"]
        key = text.split("\n", 1)[0]
        assert key not in state, f"two memos with the first line {key!r}"
        state[key] = (row["id"], text)
    return state


def rows_in_file(store, keys) -> str:
    """What the file itself holds for `keys`, read past the server: for a memo the list lacks, whether its
    row is gone, marked deleted or hidden, or there but missing from the list's index."""
    lines = []
    with sqlite3.connect(f"file:{store}?mode=ro", uri=True) as db:
        for key in sorted(keys):
            rows = db.execute(
                "SELECT localID, deleted, importBatch IS NOT NULL, seq, modifiedAt, length(text) FROM memo "
                "WHERE substr(text, 1, ?) = ?", (len(key.encode()), key.encode())).fetchall()
            listed = [db.execute("SELECT count(*) FROM memo INDEXED BY memo_order WHERE deleted = 0 AND importBatch IS NULL "
                                 "AND modifiedAt = ? AND seq = ?", (row[4], row[3])).fetchone()[0] for row in rows]
            lines.append(f"  in the file, {key}: " + (", ".join(
                f"localID {row[0]} deleted {row[1]} hidden {row[2]} seq {row[3]} {row[5]} bytes, "
                f"in memo_order {count}" for row, count in zip(rows, listed)) or "no row"))
    return "\n".join(lines)


def nearest_difference(store, committed: dict[str, str], candidates: list[dict[str, str]], ops, acknowledged: int) -> str:
    """What a failure needs to be read: the memos where the store differs from the candidate state
    nearest to it, and the last round's requests, marked where the acknowledged ones end."""
    def short(text: str | None) -> str:
        return "(none)" if text is None else f"{text[:50]!r}… ({len(text)} chars)"

    def distance(candidate: dict[str, str]) -> int:
        return sum(candidate.get(key) != committed.get(key) for key in set(candidate) | set(committed))

    nearest = min(range(len(candidates)), key=lambda index: distance(candidates[index]))
    lines = [f"nearest: the state after {acknowledged + nearest} of {len(ops)} requests "
             f"({acknowledged} acknowledged)"]
    differing = [key for key in sorted(set(candidates[nearest]) | set(committed))
                 if candidates[nearest].get(key) != committed.get(key)]
    for key in differing:
        lines.append(f"  {key}: in the store {short(committed.get(key))}, expected {short(candidates[nearest].get(key))}")
    lines.append(rows_in_file(store, differing))
    lines += [f"  request {index}{' (acknowledged)' if index < acknowledged else ''}: {kind} {key} {short(text)}"
              for index, (kind, key, text) in enumerate(ops)]
    return "\n".join(lines)


def test_kill_minus_9_at_random_moments(servers):
    rng = random.Random(91)
    store = servers.store
    # The states the store may be in after the last kill: the changes of some prefix of the requests
    # sent, at least the acknowledged ones.
    candidates: list[dict[str, str]] = [{}]
    last_round: tuple[list, int] = ([], 0)  # the last round's requests, and how many were acknowledged
    next_key = 0
    cut_short = 0  # rounds whose kill came before every request was answered
    for round_number in range(ROUNDS):
        server = servers.session(store)

        # -- after the restart: the store is one of the states the last round could have left -----
        state = store_state(server)
        committed = {key: text for key, (_, text) in state.items()}
        # Read first: a store that lost a row shows whether the file is also unsound (an index that
        # misses a row the table holds) or sound without it.
        soundness = integrity(store)
        assert committed in candidates, (
            f"round {round_number}: the store after the kill is not the result of any prefix of the "
            f"requests of the last round that includes every acknowledged one (integrity_check: {soundness})\n"
            + nearest_difference(store, committed, candidates, last_round[0], last_round[1]))
        assert soundness == "ok"
        for key in rng.sample(sorted(state), min(3, len(state))):
            found = server.call("memo/search", {"query": key})
            assert state[key][0] in {row["id"] for row in found["rows"]}, f"search misses {key}"
        server.call("memo/search", {"query": ""})

        # -- a burst of pipelined changes, killed at a random moment ------------------------------
        ops: list[tuple[str, str, str | None]] = []  # (kind, key, new text)
        live = dict(state)
        # The memo shown at start (the newest), while it stays selected: changes to it sent behind each
        # other are committed a run at a time, and a kill must still leave a prefix.
        selected = next(iter(state), None)
        sent_ids = []
        burst = rng.randint(5, 60)
        kill_after = rng.randint(1, burst)  # the kill comes while the stream is still being sent
        for _ in range(burst):
            if len(ops) >= kill_after:
                break
            roll = rng.random()
            if roll < 0.15 and selected is not None:
                for typed in range(rng.randint(2, 12)):
                    text = f"{selected}\ntyped in round {round_number} " + "z" * typed * 300
                    sent_ids.append(server.send_request("memo/update", {"id": live[selected][0], "text": text}))
                    ops.append(("update", selected, text))
                    live[selected] = (live[selected][0], text)
            elif roll < 0.4 or not live:
                key = f"key:{next_key:06d}"
                next_key += 1
                text = f"{key}\ncreated in round {round_number} " + "x" * rng.randint(0, 3000)
                sent_ids.append(server.send_request("memo/create", {"text": text}))
                ops.append(("create", key, text))
                selected = None  # the new memo is selected
                live[key] = ("?", text)
            elif roll < 0.8 or len(live) < 10:
                key = rng.choice([k for k, (memo_id, _) in live.items() if memo_id != "?"] or [None])
                if key is None:
                    continue
                text = f"{key}\nupdated in round {round_number} " + "y" * rng.randint(0, 3000)
                sent_ids.append(server.send_request("memo/update", {"id": live[key][0], "text": text}))
                ops.append(("update", key, text))
                live[key] = (live[key][0], text)
            else:
                key = rng.choice([k for k, (memo_id, _) in live.items() if memo_id != "?"] or [None])
                if key is None:
                    continue
                sent_ids.append(server.send_request("memo/delete", {"id": live.pop(key)[0]}))
                selected = None if key == selected else selected
                ops.append(("delete", key, None))
        if rng.random() < 0.5:  # else at once, while the server is still busy with the stream
            time.sleep(rng.uniform(0, 0.003))
        server.kill()

        # -- what was acknowledged: a prefix of the requests, answered in order --------------------
        answered = set()
        for message in server.read_until_eof():
            if "id" in message and "method" not in message:
                assert "result" in message, f"round {round_number}: {message}"
                answered.add(message["id"])
        acknowledged = 0
        while acknowledged < len(sent_ids) and sent_ids[acknowledged] in answered:
            acknowledged += 1
        assert len(answered) == acknowledged, "responses came out of order"
        cut_short += acknowledged < len(ops)

        last_round = (ops, acknowledged)
        candidates = []
        model = dict(committed)
        for index in range(len(ops) + 1):
            if index >= acknowledged:
                candidates.append(dict(model))
            if index < len(ops):
                kind, key, text = ops[index]
                if kind == "delete":
                    model.pop(key, None)
                else:
                    model[key] = text

    # Most kills must land in the middle of a burst, or this tests nothing.
    assert cut_short >= ROUNDS // 4, f"only {cut_short} of {ROUNDS} kills interrupted a burst"
    final = servers.session(store)
    assert {key: text for key, (_, text) in store_state(final).items()} in candidates
    assert final.shutdown_and_exit() == 0

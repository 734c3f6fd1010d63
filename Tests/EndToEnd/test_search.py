"""memo/search: case-insensitive substrings of any language and length, literal special characters,
never stale."""

import signal

import pytest

from cnsupport.store_file import wait_until_indexed

MEMOS = {
    "apple": "Apple Pie\nbake at 180 degrees",
    "meeting": "회의록 메모\n참석: 세 명",
    "memo_pad": "The word 메모장 means memo pad",
    "shopping": "장보기\n우유, 계란",
    "percent": "Discount 50% off_sale today",
    "quotes": 'He said "hello" and \'bye\' (twice) * AND OR NEAR',
    "backslash": "path C:\\Users\\kim\\notes.txt",
    "mixed": "MiXeD CaSe ÉCOLE straße Ωmega",
    "plain": "nothing special here",
}


@pytest.fixture
def corpus(client):
    ids = {}
    for key, text in MEMOS.items():
        ids[key] = client.create(text)["id"]
    client.check_mirror()
    return client, ids


def found(client, query):
    result = client.call("memo/search", {"query": query})
    assert result["query"] == query
    listing = client.list_all()
    assert listing["total"] == result["total"]
    assert [r["id"] for r in listing["rows"]][:100] == [r["id"] for r in result["rows"]]
    client.check_mirror()
    return {r["id"] for r in listing["rows"]}


def expect(client, ids, query, keys):
    # The expectation, checked against Python's own case-insensitive substring test.
    assert set(keys) == {k for k, text in MEMOS.items() if query.lower() in text.lower()}, "bad test data"
    got = found(client, query)
    want = {ids[k] for k in keys}
    names = {v: k for k, v in ids.items()}
    assert got == want, f"query {query!r}: found {sorted(names.get(i, i) for i in got)}, expected {sorted(keys)}"


@pytest.mark.parametrize("query, keys", [
    ("apple", ["apple"]),
    ("APPLE", ["apple"]),
    ("pPlE p", ["apple"]),
    ("180", ["apple"]),
    ("e", ["apple", "memo_pad", "quotes", "mixed", "plain", "percent", "backslash"]),
    ("p", ["apple", "memo_pad", "plain", "backslash"]),
    ("P", ["apple", "memo_pad", "plain", "backslash"]),
    ("ap", ["apple"]),
    ("AP", ["apple"]),
    ("메", ["meeting", "memo_pad"]),
    ("메모", ["meeting", "memo_pad"]),
    ("메모장", ["memo_pad"]),
    ("회의록 메모", ["meeting"]),
    ("우", ["shopping"]),
    ("계란", ["shopping"]),
    ("word 메모", ["memo_pad"]),
    ("nothing special here", ["plain"]),
    ("not there", []),
    ("없음", []),
    ("z", []),
])
def test_case_insensitive_substring_of_any_length(corpus, query, keys):
    client, ids = corpus
    expect(client, ids, query, keys)


@pytest.mark.parametrize("query, keys", [
    ("%", ["percent"]),
    ("50%", ["percent"]),
    ("0%", ["percent"]),
    ("_", ["percent"]),
    ("f_", ["percent"]),
    ("off_sale", ["percent"]),
    ('"', ["quotes"]),
    ('"h', ["quotes"]),
    ('"hello"', ["quotes"]),
    ("'bye'", ["quotes"]),
    ("(twice)", ["quotes"]),
    ("* AND OR NEAR", ["quotes"]),
    ("AND", ["quotes"]),
    ("\\", ["backslash"]),
    ("\\U", ["backslash"]),
    ("C:\\Users\\", ["backslash"]),
    ("%%", []),
    ("__", []),
    ("a%e", []),
    ("a_p", []),
])
def test_special_characters_are_literal(corpus, query, keys):
    client, ids = corpus
    expect(client, ids, query, keys)


@pytest.mark.parametrize("query, keys", [
    ("mixed case", ["mixed"]),
    ("école", ["mixed"]),
    ("ÉCOLE", ["mixed"]),
    ("éc", ["mixed"]),
    ("Éc", ["mixed"]),
    ("é", ["mixed"]),
    ("ω", ["mixed"]),
    ("ωm", ["mixed"]),
    ("ΩMEGA", ["mixed"]),
])
def test_case_folding_beyond_ascii(corpus, query, keys):
    client, ids = corpus
    expect(client, ids, query, keys)


def test_two_character_non_ascii_query_in_mixed_case(client):
    """`éA` in a text is found by `éa`, `Éa`, `ÉA` and `éA`, as a case-insensitive match must."""
    mixed = client.create("CAFéAU")
    client.create("cafe au lait")
    for query in ("éA", "ÉA", "Éa", "éa", "éau", "ÉAU", "fÉa"):
        result = client.call("memo/search", {"query": query})
        assert {r["id"] for r in result["rows"]} == {mixed["id"]}, f"query {query!r} misses 'CAFéAU'"
    client.check_mirror()


def test_empty_query_clears_the_filter(corpus):
    client, ids = corpus
    assert len(found(client, "apple")) == 1
    result = client.call("memo/search", {"query": ""})
    assert result["total"] == len(MEMOS)
    assert client.check_mirror()["total"] == len(MEMOS)


def test_query_with_a_nul_character(client):
    with_nul = client.create("before\u0000after")
    client.create("no nul here")
    for query in ("\u0000", "e\u0000", "before\u0000after", "\u0000af"):
        result = client.call("memo/search", {"query": query})
        assert [r["id"] for r in result["rows"]] == [with_nul["id"]], f"query {query!r}"
        # The filter stays usable.
        assert client.call("memo/list", {})["total"] == 1
    client.check_mirror()


def test_search_sees_every_acknowledged_write(client):
    memo = client.create("first draft about zebras")
    assert len(found(client, "zebra")) == 1
    client.call("memo/update", {"id": memo["id"], "text": "now about 얼룩말 instead"})
    assert found(client, "zebra") == set()
    assert found(client, "얼룩말") == {memo["id"]}
    assert found(client, "얼룩") == {memo["id"]}
    assert found(client, "룩") == {memo["id"]}
    other = client.call("memo/import", {"memos": [{"title": "imported zebra", "body": "얼룩말", "last_modified": 1}]})
    assert other == {"imported": 1}
    assert len(found(client, "얼룩말")) == 2
    client.call("memo/delete", {"id": memo["id"]})
    assert memo["id"] not in found(client, "얼룩말")
    assert len(found(client, "룩")) == 1


def test_search_after_a_crash_sees_every_acknowledged_write(servers):
    first = servers.session()
    memo = first.create("검색 색인 테스트 alpha")
    first.call("memo/update", {"id": memo["id"], "text": "검색 색인 테스트 omega"})
    first.create("second 메모")
    first.proc.send_signal(signal.SIGKILL)
    first.wait()
    second = servers.session()
    for query, total in [("omega", 1), ("alpha", 0), ("색인", 1), ("색", 1), ("메모", 1), ("메", 1), ("테스트 o", 1)]:
        assert second.search_total(query) == total, query


def test_search_of_a_5000_memo_store_is_correct(client):
    entries = [{"title": f"entry {i}", "body": ("짝수" if i % 2 == 0 else "홀수") + f" #{i:05d}", "last_modified": 1_600_000_000 + i}
               for i in range(5000)]
    client.call("memo/import", {"memos": entries}, timeout=60)
    expected = {"짝수": 2500, "홀": 2500, "#0499": 10, "ENTRY 4999": 1}
    assert client.search_totals(expected) == expected
    client.check_mirror()


def test_short_queries_through_the_index_find_every_occurrence(servers):
    """One- and two-character queries without case are answered by the index's terms (the index holds
    each text followed by two sentinels): an occurrence at a text's end, and a one-character text, count."""
    client = servers.session()
    texts = {"end": "오늘의 회의", "whole": "회의", "one": "회", "middle": "회의록 정리", "apart": "회 의",
             "digits": "방 12호", "quote": '"의" 자', "none": "메모"}
    ids = {key: client.create(text)["id"] for key, text in texts.items()}
    wait_until_indexed(servers.store)
    for query in ["회의", "회", "의", "12", "2", '"의', "의록", "자", "호"]:
        result = client.call("memo/search", {"query": query})
        want = {ids[k] for k, text in texts.items() if query in text}
        assert result["total"] == len(want), query
        assert {row["id"] for row in result["rows"]} == want, query


def test_short_ascii_queries_through_the_index_fold_case_as_the_index(servers):
    """One- and two-character ASCII queries are answered by the index's terms too, case folded as the
    index folds it: ASCII letters, and KELVIN SIGN and LONG S, which it folds to k and s."""
    client = servers.session()
    texts = {"end": "team meeting", "upper": "MEETING NOTES", "one": "e", "tail": "ends in Me",
             "kelvin": "0 \u212aelvin", "long_s": "Tho\u017fe", "korean": "회의", "digits": "room 12"}
    ids = {key: client.create(text)["id"] for key, text in texts.items()}
    wait_until_indexed(servers.store)

    def fold(text):
        return text.replace("\u212a", "k").replace("\u017f", "s").translate(
            {c: c + 32 for c in range(ord("A"), ord("Z") + 1)})

    for query in ["me", "ME", "e", "E", "k", "K", "os", "S", "1", "m2", "zz"]:
        result = client.call("memo/search", {"query": query})
        want = {ids[k] for k, text in texts.items() if fold(query) in fold(text)}
        assert result["total"] == len(want), query
        assert {row["id"] for row in result["rows"]} == want, query


def test_case_beyond_ascii_is_folded_as_the_index_folds_it_indexed_or_not(servers):
    """A final sigma, a micro sign and a long s fold as the index folds them (to σ, μ and s), so a memo
    matches the same before the background indexing reaches it, after, and when it is edited under the
    filter (it must stay in the list, not leave it until the index holds it again)."""
    client = servers.session()
    greek = client.create("ΛΌΓΟΣ ΚΑΙ ΕΡΓΟΝ")
    micro = client.create("5µm")
    client.create("λόγια")
    queries = {"λόγος": {greek["id"]}, "ς": {greek["id"]}, "5μm": {micro["id"]}, "μ": {micro["id"]}}
    for indexed in (False, True):
        if indexed:
            wait_until_indexed(servers.store)
        for query, want in queries.items():
            result = client.call("memo/search", {"query": query})
            assert {row["id"] for row in result["rows"]} == want, (query, indexed)
    client.call("memo/search", {"query": "λόγος"})
    notes, _ = client.call_notes("memo/update", {"id": greek["id"], "text": "ΛΌΓΟΣ ΚΑΙ ΕΡΓΟΝ!"})
    assert not [n for n in notes if n["method"] == "list/didRemove"], notes
    assert client.call("memo/list")["total"] == 1

"""memo/list: newest first, a stable order for memos sharing one timestamp, offset and limit."""

import pytest

from cnsupport.schema import INVALID_PARAMS
from cnsupport.session import make_entries


def ids(rows):
    return [row["id"] for row in rows]


def test_newest_modified_first(client):
    entries = [{"title": f"t{stamp}", "body": "", "last_modified": stamp}
               for stamp in (1_500_000_000, 1_700_000_000, 1_600_000_000, 1_000, 1_650_000_000)]
    client.call("memo/import", {"memos": entries})
    rows = client.list_all()["rows"]
    assert [r["title"] for r in rows] == ["t1700000000", "t1650000000", "t1600000000", "t1500000000", "t1000"]
    stamps = [r["modifiedAt"] for r in rows]
    assert stamps == sorted(stamps, reverse=True)
    # A new memo is newer than all of them, and an edited one comes back on top.
    created = client.create("fresh")
    client.call("memo/update", {"id": rows[-1]["id"], "text": "t1000 edited"})
    rows = client.list_all()["rows"]
    assert [r["title"] for r in rows][:2] == ["t1000 edited", "fresh"]
    assert created["id"] in ids(rows)
    client.check_mirror()


def test_memos_sharing_one_timestamp_keep_one_order(servers):
    first = servers.session(mirror=True)
    first.call("memo/import", {"memos": make_entries(250, "same time", 1_608_651_333)})
    listing = first.list_all()
    order = ids(listing["rows"])
    assert len(set(order)) == 250
    for _ in range(3):
        assert ids(first.list_all()["rows"]) == order
    # Page by page gives the same order, with no row missed or repeated.
    paged = []
    for offset in range(0, 250, 7):
        paged += ids(first.call("memo/list", {"offset": offset, "limit": 7})["rows"])
    assert paged == order
    # A search, a cleared search and changes to another memo leave their relative order alone.
    first.call("memo/search", {"query": "same time 1"})
    first.call("memo/search", {"query": ""})
    other = first.create("another memo")
    first.call("memo/update", {"id": other["id"], "text": "another memo, edited"})
    assert [i for i in ids(first.list_all()["rows"]) if i != other["id"]] == order
    first.check_mirror()
    assert first.shutdown_and_exit() == 0
    # And a restart too.
    second = servers.session()
    assert [i for i in ids(second.list_all()["rows"]) if i != other["id"]] == order


def test_filtered_list_keeps_the_same_relative_order(client):
    client.call("memo/import", {"memos": make_entries(60, "tie", 1_608_651_333)})
    order = ids(client.list_all()["rows"])
    result = client.call("memo/search", {"query": "tie 1"})
    filtered = ids(client.list_all()["rows"])
    assert filtered == [i for i in order if i in set(filtered)]
    assert result["total"] == len(filtered) == 11   # tie 1, tie 10..19
    client.check_mirror()


def test_offset_and_limit(client):
    client.call("memo/import", {"memos": [{"title": f"m{i:03d}", "body": "", "last_modified": 1_600_000_000 + i}
                                          for i in range(150)]})
    full = client.list_all()["rows"]
    assert [r["title"] for r in full] == [f"m{i:03d}" for i in reversed(range(150))]
    default = client.call("memo/list", {})
    assert default["total"] == 150 and len(default["rows"]) == 100
    assert default == client.call("memo/list")   # no params at all
    assert client.call("memo/list", {"limit": 1})["rows"] == full[:1]
    assert client.call("memo/list", {"offset": 149, "limit": 10})["rows"] == full[149:]
    assert client.call("memo/list", {"offset": 30, "limit": 20})["rows"] == full[30:50]
    beyond = client.call("memo/list", {"offset": 150})
    assert beyond == {"total": 150, "rows": []}
    assert client.call("memo/list", {"offset": 10_000_000, "limit": 1000})["rows"] == []
    assert len(client.call("memo/list", {"limit": 1000})["rows"]) == 150


@pytest.mark.parametrize("params, param", [
    ({"offset": -1}, "offset"),
    ({"offset": "0"}, "offset"),
    ({"offset": 1.5}, "offset"),
    ({"offset": None, "limit": 0}, "limit"),
    ({"limit": 0}, "limit"),
    ({"limit": -5}, "limit"),
    ({"limit": 1001}, "limit"),
    ({"limit": "ten"}, "limit"),
    ({"limit": 2.5}, "limit"),
    ({"limit": True}, "limit"),
    ({"offset": [0]}, "offset"),
    ({"offset": 2**70}, "offset"),
])
def test_invalid_offset_or_limit(client, params, param):
    client.create("a memo")
    error = client.error_of("memo/list", params)
    assert error["code"] == INVALID_PARAMS, error
    assert error["data"]["param"] == param, error
    assert client.call("memo/list", {})["total"] == 1

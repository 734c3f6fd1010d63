"""Bad input generated from the protocol's schema: every request with every param missing, null, of
each wrong type, out of range, or holding a value JSON cannot carry (1e400, an unpaired surrogate). For
each: the documented error naming the param, the server still answering, stdout still pure JSON-RPC
(the harness checks every message), and no stored memo changed. Every test runs in both framings."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cnsupport.schema import INVALID_PARAMS, INVALID_REQUEST, SCHEMA
from cnsupport.session import make_entries


@pytest.fixture
def framing(each_framing) -> str:
    """The framing `servers` starts servers in: here, each framing in turn."""
    return each_framing


SAMPLES = {"string": "text", "integer": 7, "number": 2.5, "boolean": True, "array": [], "object": {}}


def accepted_types(prop: dict) -> set[str]:
    if "anyOf" in prop:
        return set().union(*(accepted_types(option) for option in prop["anyOf"]))
    if "type" not in prop:
        return set(SAMPLES)  # anything goes (`capabilities`)
    kind = prop["type"]
    return {"integer", "number"} if kind == "number" else {kind}


def bad_values(name: str, prop: dict) -> list[tuple[str, str]]:
    """(label, raw JSON) of values the param must refuse."""
    accepted = accepted_types(prop)
    values = [(f"{kind} instead of {'/'.join(sorted(accepted))}", json.dumps(sample))
              for kind, sample in SAMPLES.items() if kind not in accepted]
    if "integer" in accepted and "number" not in accepted:
        values += [("1e400", "1e400"), ("2.5", "2.5")]
        if "minimum" in prop:
            values += [("below the minimum", str(prop["minimum"] - 1)), ("-10^12", "-1000000000000")]
    if accepted == {"string"}:
        values.append(("an unpaired surrogate escape", '"\\ud800 is half a pair"'))
        if "enum" in prop:
            values.append(("a value not in the enum", '"no-such-format"'))
        if prop.get("format") == "uuid":
            values += [("not a UUID", '"not-a-uuid"'), ("an empty id", '""'), ("a UUID with junk", '"00000000-0000-4000-8000-000000000000x"')]
    return values


def request_line(request_id: int, method: str, params_json: str) -> str:
    return f'{{"jsonrpc":"2.0","id":{request_id},"method":"{method}","params":{params_json}}}'


def params_with(base: dict, name: str, raw: str | None) -> str:
    """`base` as JSON with param `name` replaced by the raw JSON `raw`, or removed when `raw` is None."""
    others = {key: value for key, value in base.items() if key != name}
    members = [f"{json.dumps(key)}:{json.dumps(value)}" for key, value in others.items()]
    if raw is not None:
        members.append(f"{json.dumps(name)}:{raw}")
    return "{" + ",".join(members) + "}"


@pytest.fixture
def seeded(client, tmp_root):
    client.call("memo/import", {"memos": make_entries(3, "seeded")})
    memo = client.create("the selected memo\nwith a body")
    client.check_mirror()
    return client, memo, tmp_root


def valid_params(method: str, memo: dict, root: Path) -> dict:
    return {
        "memo/list": {"offset": 0, "limit": 10},
        "memo/search": {"query": "seeded"},
        "memo/create": {"text": "never stored"},
        "memo/select": {"id": memo["id"]},
        "memo/update": {"id": memo["id"], "text": "never stored", "baseVersion": memo["version"]},
        "memo/edit": {"id": memo["id"], "baseVersion": memo["version"], "edits": [{"start": 0, "end": 0, "text": "never stored"}]},
        "memo/delete": {"id": memo["id"]},
        "memo/share": {"id": memo["id"], "format": "text"},
        "memo/import": {"memos": make_entries(1, "never imported")},
        "memo/export": {"path": str(root / "never-written.json"), "format": "json", "overwrite": False},
    }[method]


MEMO_METHODS = ["memo/list", "memo/search", "memo/create", "memo/select", "memo/update", "memo/edit", "memo/delete",
                "memo/share", "memo/import", "memo/export"]


@pytest.mark.parametrize("method", MEMO_METHODS)
def test_every_param_of_every_request_refuses_bad_values(seeded, method):
    client, memo, root = seeded
    before = client.snapshot()
    schema = SCHEMA["methods"][method]["params"]
    base = valid_params(method, memo, root)
    cases: list[tuple[str, str, str]] = []  # (what, params JSON, the param the error must name)
    for name, prop in schema["properties"].items():
        if name in schema.get("required", []):
            cases.append((f"{name} missing", params_with(base, name, None), name))
            cases.append((f"{name} null", params_with(base, name, "null"), name))
        for label, raw in bad_values(name, prop):
            cases.append((f"{name}: {label}", params_with(base, name, raw), name))
    if method == "memo/import":
        cases.append(("both path and memos", '{"path":"/nonexistent.json","memos":[]}', None))
    assert cases
    failures = []
    for what, params_json, param in cases:
        request_id = client.new_id()
        client.send_raw(request_line(request_id, method, params_json))
        _, response = client.wait_response(request_id)
        error = response.get("error")
        if error is None or error["code"] != INVALID_PARAMS:
            failures.append(f"{what}: {json.dumps(response)[:300]}")
        elif param is not None and "surrogate" not in what and (error.get("data") or {}).get("param") != param:
            failures.append(f"{what}: the error names {error.get('data')}, not {param!r}")
    assert not failures, f"{len(failures)} of {len(cases)} bad {method} requests were not refused as documented:\n" + "\n".join(failures)
    assert client.snapshot() == before, "a bad request changed a stored memo"
    assert not (root / "never-written.json").exists()
    client.check_mirror()


def test_bad_initialize_params_leave_the_server_uninitialized(server):
    schema = SCHEMA["methods"]["initialize"]["params"]
    failures = []
    for name, prop in schema["properties"].items():
        for label, raw in bad_values(name, prop):
            request_id = server.new_id()
            server.send_raw(request_line(request_id, "initialize", params_with({}, name, raw)))
            _, response = server.wait_response(request_id)
            if (response.get("error") or {}).get("code") != INVALID_PARAMS:
                failures.append(f"{name}: {label}: {json.dumps(response)[:200]}")
    assert not failures, "\n".join(failures)
    bad_zone = server.error_of("initialize", {"timeZone": "Mars/Olympus_Mons"})
    assert bad_zone["code"] == INVALID_PARAMS and bad_zone["data"]["param"] == "timeZone"
    # Still waiting for a good initialize: it works now.
    server.initialize()
    assert server.call("memo/list", {})["total"] == 0


@pytest.mark.parametrize("raw, expected_code", [
    ('{"jsonrpc":"2.0","id":{"nested":1},"method":"memo/list"}', INVALID_REQUEST),
    ('{"jsonrpc":"2.0","id":[1],"method":"memo/list"}', INVALID_REQUEST),
    ('{"jsonrpc":"2.0","id":true,"method":"memo/list"}', INVALID_REQUEST),
    ('{"jsonrpc":"2.0","id":1.5,"method":"memo/list"}', INVALID_REQUEST),
    ('{"jsonrpc":"2.0","id":5,"result":{"total":0}}', INVALID_REQUEST),
    ('{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"no"}}', INVALID_REQUEST),
    ('{"jsonrpc":"2.0","id":null,"result":null}', INVALID_REQUEST),
    ('{"jsonrpc":"2.0","method":5,"id":3}', INVALID_REQUEST),
    ('{"jsonrpc":"1.0","method":"memo/list","id":3}', INVALID_REQUEST),
    ('{"jsonrpc":"2.0","id":1,"method":"memo/list","params":{"offset":1e400}}', INVALID_PARAMS),
    ('{"jsonrpc":"2.0","id":1,"method":"memo/list","params":[0, 10]}', INVALID_PARAMS),
    ('{"jsonrpc":"2.0","id":1,"method":"memo/list","params":"offset"}', INVALID_PARAMS),
])
def test_messages_that_are_not_requests_or_carry_impossible_values(seeded, raw, expected_code):
    client, _, _ = seeded
    before = client.snapshot()
    client.send_raw(raw)
    # The error's id is the message's own when it could be read, else null: find the error either way.
    message = client.next_message()
    assert "error" in message, message
    assert message["error"]["code"] == expected_code, message
    assert client.snapshot() == before
    client.check_mirror()


@pytest.mark.parametrize("entries, index", [
    ("[5]", 0),
    ('[{"title":"ok","body":"","last_modified":1},{"body":"no title","last_modified":1}]', 1),
    ('[{"title":"ok","body":"","last_modified":1e400}]', 0),
    ('[{"title":"\\ud800","body":"","last_modified":1}]', 0),
])
def test_bad_import_entries_are_named_by_index_and_import_nothing(seeded, entries, index):
    client, _, _ = seeded
    before = client.snapshot()
    request_id = client.new_id()
    client.send_raw(request_line(request_id, "memo/import", f'{{"memos":{entries}}}'))
    _, response = client.wait_response(request_id)
    error = response.get("error") or {}
    if error.get("code") == INVALID_PARAMS:  # a value JSON cannot carry is refused before the entries are read
        assert "\\ud800" in entries or "1e400" in entries, response
    else:
        assert error.get("code") == -33003 and error["data"]["index"] == index, response
    assert client.snapshot() == before


def test_duplicate_members_the_first_one_counts(seeded):
    client, memo, _ = seeded
    request_id = client.new_id()
    client.send_raw(request_line(request_id, "memo/share", f'{{"id":"{memo["id"]}","format":"markdown","format":5}}'))
    _, response = client.wait_response(request_id)
    assert response["result"]["text"].startswith("# "), response

"""Bad input to `cloudnotes mcp`, written as raw lines, the matrix `serve` gets (test_bad_input_matrix.py):
messages that are not JSON-RPC requests, params that are not the method's, and every argument of every
tool (generated from the tools' own input schemas) missing, null, of each wrong type, out of range, or
holding a value JSON cannot carry. Each gets a precise error; stdout carries nothing but JSON-RPC
messages; no stored memo changes; the server goes on answering."""

from __future__ import annotations

import json

import pytest

from cnsupport.cli import Cli
from cnsupport.mcp import RawMcp
from cnsupport.store_file import memos_of

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602
SAMPLES = {"string": "text", "integer": 7, "number": 2.5, "boolean": True, "array": [], "object": {}}


@pytest.fixture
def seeded(tmp_root):
    """A store with two memos and an initialized raw session on it; the session must end clean."""
    store = tmp_root / "notes.sqlite"
    memo_id = Cli(store).ok("new", "Seeded\nwith a body").out.strip()
    Cli(store).ok("new", "Another")
    server = RawMcp(store)
    server.initialize()
    before = memos_of(store)
    yield server, memo_id
    assert server.request("ping")["result"] == {}, "the server stopped answering"
    assert server.close() == [], "stdout carried what is not a JSON-RPC message"
    assert memos_of(store) == before, "bad input changed a stored memo"


@pytest.mark.parametrize("raw, code", [
    ("not json", PARSE_ERROR),
    ('{"jsonrpc":"2.0","id":1,"method":"tools/list"', PARSE_ERROR),
    ("[]", INVALID_REQUEST),
    ('[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]', INVALID_REQUEST),
    ("5", INVALID_REQUEST),
    ('{"jsonrpc":"2.0","id":{"nested":1},"method":"tools/list"}', INVALID_REQUEST),
    ('{"jsonrpc":"2.0","id":[1],"method":"tools/list"}', INVALID_REQUEST),
    ('{"jsonrpc":"2.0","id":true,"method":"tools/list"}', INVALID_REQUEST),
    ('{"jsonrpc":"2.0","id":1.5,"method":"tools/list"}', INVALID_REQUEST),
    ('{"jsonrpc":"2.0","method":5,"id":3}', INVALID_REQUEST),
    ('{"jsonrpc":"1.0","method":"tools/list","id":3}', INVALID_REQUEST),
    ('{"id":3,"method":"tools/list"}', INVALID_REQUEST),
    ('{"jsonrpc":"2.0","id":3}', INVALID_REQUEST),
    ('{"jsonrpc":"2.0","id":3,"method":"memo/list"}', METHOD_NOT_FOUND),
    ('{"jsonrpc":"2.0","id":3,"method":"tools/list","params":[1]}', INVALID_PARAMS),
    ('{"jsonrpc":"2.0","id":3,"method":"tools/list","params":"x"}', INVALID_PARAMS),
    ("[" * 100 + "]" * 100, PARSE_ERROR),
])
def test_messages_that_are_not_requests(seeded, raw, code):
    server, _ = seeded
    server.send(raw)
    message = server.next_message()
    assert message["error"]["code"] == code, message
    # The id is the request's own where it could be read, else null: never made up.
    assert message["id"] in (None, 3), message


def test_bytes_that_are_not_utf8(seeded):
    server, _ = seeded
    server.send(b'{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"\xff"}}')
    message = server.next_message()
    assert message == {"jsonrpc": "2.0", "id": None, "error": message["error"]} and message["error"]["code"] == PARSE_ERROR


def test_notifications_get_no_answer_whatever_they_hold(seeded):
    server, _ = seeded
    for line in ['{"jsonrpc":"2.0","method":"notifications/unknown"}',
                 '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":[]}}',
                 '{"jsonrpc":"2.0","method":"notifications/initialized","params":5}']:
        server.send(line)
    response = server.request("tools/list")
    assert response["result"]["tools"]


@pytest.mark.parametrize("method, params, param", [
    ("resources/read", {}, "uri"),
    ("resources/read", {"uri": None}, "uri"),
    ("resources/read", {"uri": 5}, "uri"),
    ("resources/read", {"uri": ["cloudnotes://memo/x"]}, "uri"),
    ("resources/subscribe", {}, "uri"),
    ("resources/subscribe", {"uri": {}}, "uri"),
    ("resources/unsubscribe", {"uri": True}, "uri"),
    ("resources/list", {"cursor": 5}, "cursor"),
    ("tools/list", {"cursor": []}, "cursor"),
    ("tools/call", {}, "name"),
    ("tools/call", {"name": 5}, "name"),
    ("tools/call", {"name": "list_memos", "arguments": "all"}, "arguments"),
    ("tools/call", {"name": "list_memos", "arguments": [1]}, "arguments"),
])
def test_params_that_are_not_the_methods(seeded, method, params, param):
    server, _ = seeded
    response = server.request(method, params)
    error = response.get("error") or {}
    assert error.get("code") == INVALID_PARAMS, response
    assert (error.get("data") or {}).get("param", "").startswith(param), response


@pytest.mark.parametrize("uri", ["cloudnotes://memo/not-an-id", "https://example.com/", ""])
def test_uris_that_name_no_memo(seeded, uri):
    server, _ = seeded
    assert server.request("resources/read", {"uri": uri})["error"]["code"] == INVALID_PARAMS
    assert server.request("resources/subscribe", {"uri": uri})["error"]["code"] == INVALID_PARAMS
    missing = "cloudnotes://memo/00000000-0000-4000-8000-000000000000"
    assert server.request("resources/read", {"uri": missing})["error"]["code"] == -32002
    assert server.request("resources/list", {"cursor": "bogus"})["error"]["code"] == INVALID_PARAMS


def bad_values(prop: dict) -> list[tuple[str, str]]:
    """(label, raw JSON) of values an argument must refuse."""
    kind = prop["type"]
    accepted = {"integer", "number"} if kind == "number" else {kind}
    values = [(f"{name} instead of {kind}", json.dumps(sample)) for name, sample in SAMPLES.items()
              if name not in accepted and not (kind == "integer" and name == "number")]
    if kind == "integer":
        values += [("2.5", "2.5"), ("1e400", "1e400"), ("below the minimum", str(prop.get("minimum", 1) - 1)),
                   ("-10^12", "-1000000000000"), ("2^63 - 1, beyond a double's whole numbers", "9223372036854775807"),
                   ("2^64", "18446744073709551616")]
        if "maximum" in prop:
            values.append(("above the maximum", str(prop["maximum"] + 1)))
    if kind == "string":
        values.append(("an unpaired surrogate escape", '"\\ud800 is half a pair"'))
    return values


def call_line(request_id: int, tool: str, arguments: dict, name: str, raw: str | None) -> str:
    members = [f"{json.dumps(k)}:{json.dumps(v)}" for k, v in arguments.items() if k != name]
    if raw is not None:
        members.append(f"{json.dumps(name)}:{raw}")
    return (f'{{"jsonrpc":"2.0","id":{request_id},"method":"tools/call",'
            f'"params":{{"name":"{tool}","arguments":{{{",".join(members)}}}}}}}')


def test_every_argument_of_every_tool_refuses_bad_values(seeded):
    server, memo_id = seeded
    tools = server.request("tools/list")["result"]["tools"]
    good = {"search_memos": {"query": "seeded"}, "list_memos": {}, "read_memo": {"id": memo_id},
            "create_memo": {"text": "never stored"}, "edit_memo": {"id": memo_id, "text": "never stored", "baseVersion": 1},
            "delete_memo": {"id": memo_id}}
    assert {tool["name"] for tool in tools} == set(good)
    failures, count = [], 0
    for tool in tools:
        schema = tool["inputSchema"]
        cases = [(f"{name} missing", name, None) for name in schema.get("required", [])]
        cases += [(f"{name} null", name, "null") for name in schema.get("required", [])]
        cases += [(f"{name}: {label}", name, raw) for name, prop in schema["properties"].items()
                  for label, raw in bad_values(prop)]
        cases.append(("an argument the tool does not take", "unknownArgument", '"x"'))
        for what, name, raw in cases:
            count += 1
            request_id = 5000 + count
            server.send(call_line(request_id, tool["name"], good[tool["name"]], name, raw))
            response = server.response_to(request_id)
            if "error" in response:  # refused before the tool ran: only a value JSON cannot carry
                if response["error"]["code"] != INVALID_PARAMS or not ("1e400" in what or "surrogate" in what):
                    failures.append(f"{tool['name']} {what}: {json.dumps(response)[:300]}")
                continue
            result = response["result"]
            text = result["content"][0]["text"]
            if result.get("isError") is not True:
                failures.append(f"{tool['name']} {what}: not refused: {text[:200]}")
            elif name not in text and "surrogate" not in what:
                failures.append(f"{tool['name']} {what}: the error does not name {name}: {text[:200]}")
    assert count > 40
    assert not failures, f"{len(failures)} of {count} bad calls were not refused as documented:\n" + "\n".join(failures)


def test_requests_before_initialize_are_refused(tmp_root):
    store = tmp_root / "notes.sqlite"
    server = RawMcp(store)
    response = server.request("tools/call", {"name": "create_memo", "arguments": {"text": "too early"}})
    assert response["error"]["code"] == INVALID_REQUEST
    assert server.request("ping")["result"] == {}
    server.initialize()
    assert server.request("tools/list")["result"]["tools"]
    assert server.close() == []
    assert memos_of(store) == {}

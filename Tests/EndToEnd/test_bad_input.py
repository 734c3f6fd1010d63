"""Bad input: each gets its documented error, the server keeps answering, stdout carries only JSON-RPC
messages (checked for every message by the harness), and no stored memo changes.

Every test runs in both framings: each raw line below is sent as a JSON line, and as a Content-Length
body. The few that are about one framing's own rules say so."""

import json

import pytest

from cnsupport.framing import CONTENT_LENGTH, LINES
from cnsupport.schema import INVALID_PARAMS, INVALID_REQUEST, MEMO_NOT_FOUND, METHOD_NOT_FOUND, PARSE_ERROR
from cnsupport.session import make_entries, next_response, still_fine

UNKNOWN_ID = "0b7c6a4e-1f2d-4c3b-9a8e-7d6c5b4a3f21"


@pytest.fixture
def framing(each_framing) -> str:
    """The framing `servers` starts servers in: here, each framing in turn."""
    return each_framing


@pytest.fixture
def seeded(client):
    """An initialized server with a few memos, and a snapshot of them."""
    client.call("memo/import", {"memos": make_entries(3, "seeded")})
    client.create("the selected memo\nwith a body")
    client.check_mirror()
    return client, client.snapshot()


@pytest.fixture
def unharmed(seeded):
    """The seeded server, for a test after which it must still answer, with no stored memo changed."""
    client, before = seeded
    yield client
    still_fine(client, before)


def ignored(client, what: str) -> None:
    """The server answered nothing to what was just sent: the next request's reply is the next message."""
    notes, response = client.request("memo/list", {})
    assert notes == [] and "result" in response
    assert not client.stray, f"replies to {what}: {client.stray}"


def refused(client, raw: bytes, code: int, expected_id=None, newline=None, timeout=30.0) -> dict:
    client.send_raw(raw, newline=newline)
    notes, response = next_response(client, timeout)
    assert notes == [], f"notifications for a refused line: {notes}"
    assert "error" in response, f"{raw[:200]!r} should be refused, got {json.dumps(response)[:500]}"
    assert response["error"]["code"] == code, (raw[:200], response)
    assert response["id"] == expected_id, response
    return response["error"]


# -- not JSON, not a request ----------------------------------------------------------------------------

@pytest.mark.parametrize("raw", [
    b"this is not json",
    b"{",
    b'{"jsonrpc":"2.0","id":901,"method":"memo/list"',
    b'{"jsonrpc":"2.0","id":902,"method":"memo/list"}}',
    b'{"jsonrpc":"2.0","id":903,"method":"memo/list",}',
    b'{"jsonrpc":"2.0","id":904,"method":"memo/list","params":{"limit":1,}}',
    b'{"jsonrpc":"2.0","id":905,"method":"memo/list","params":{"limit":[1,]}}',
    b'{"jsonrpc":"2.0","id":906,"method":"memo/list","params":{"offset":01}}',
    b'{"jsonrpc":"2.0","id":907,"method":"memo/list","params":{"offset":NaN}}',
    b"{'jsonrpc':'2.0','id':908,'method':'memo/list'}",
    b'{jsonrpc:"2.0","id":909,"method":"memo/list"}',
    b'{"jsonrpc":"2.0","id":910,"method":"memo/list"} trailing',
    b'{"jsonrpc":"2.0","id":911,"method":"memo/list"} // comment',
    b'{"jsonrpc":"2.0","id":912,"method":"memo/list"}{"jsonrpc":"2.0","id":913,"method":"memo/list"}',
    b"\x00",
    b'{"jsonrpc":"2.0",\x00"id":914,"method":"memo/list"}',
    b"\x1b[31mred\x1b[0m",
], ids=["words", "open-brace", "truncated", "extra-brace", "trailing-comma", "trailing-comma-in-params",
        "trailing-comma-in-array", "leading-zero", "nan", "single-quotes", "unquoted-key", "trailing-garbage",
        "trailing-comment", "two-objects", "nul-byte", "nul-between-tokens", "escape-codes"])
def test_a_line_that_is_not_json_is_a_parse_error_with_id_null(unharmed, raw):
    refused(unharmed, raw, PARSE_ERROR)


@pytest.mark.parametrize("raw", [b"42", b'"a string"', b"null", b"true", b"3.14"])
def test_json_that_is_not_an_object_is_an_invalid_request(unharmed, raw):
    refused(unharmed, raw, INVALID_REQUEST)


@pytest.mark.parametrize("raw", [
    b"[]",
    b'[{"jsonrpc":"2.0","id":1,"method":"memo/list"}]',
    b'[{"jsonrpc":"2.0","id":1,"method":"memo/create","params":{"text":"from a batch"}},'
    b'{"jsonrpc":"2.0","method":"initialized"}]',
])
def test_a_batch_is_refused_with_one_invalid_request(unharmed, raw):
    refused(unharmed, raw, INVALID_REQUEST)


@pytest.mark.parametrize("message, expected_id", [
    ({"jsonrpc": "1.0", "id": 5, "method": "memo/list"}, 5),
    ({"id": 6, "method": "memo/list"}, 6),
    ({"jsonrpc": 2.0, "id": 7, "method": "memo/list"}, 7),
    ({"jsonrpc": "2.0", "id": 8}, 8),
    ({"jsonrpc": "2.0", "id": 9, "method": 5}, 9),
    ({"jsonrpc": "2.0", "id": 10, "method": None}, 10),
    ({"jsonrpc": "2.0", "id": {"an": "object"}, "method": "memo/list"}, None),
    ({"jsonrpc": "2.0", "id": [1], "method": "memo/list"}, None),
    ({"jsonrpc": "2.0", "id": None, "method": "memo/list"}, None),
    ({"jsonrpc": "2.0", "id": 1.5, "method": "memo/list"}, None),
    ({"jsonrpc": "2.0", "id": True, "method": "memo/list"}, None),
    ({"jsonrpc": "2.0", "id": 11, "result": {}}, None),
    ({"jsonrpc": "2.0", "id": 12, "error": {"code": -1, "message": "client error"}}, None),
], ids=["jsonrpc-1.0", "no-jsonrpc", "jsonrpc-number", "no-method", "method-number", "method-null", "id-object",
        "id-array", "id-null", "id-float", "id-bool", "response-result", "response-error"])
def test_a_message_that_is_not_a_request_is_an_invalid_request(unharmed, message, expected_id):
    refused(unharmed, json.dumps(message).encode(), INVALID_REQUEST, expected_id)


def test_unknown_method(unharmed):
    error = refused(unharmed, b'{"jsonrpc":"2.0","id":"u1","method":"memo/frobnicate","params":{}}', METHOD_NOT_FOUND, "u1")
    assert "memo/frobnicate" in json.dumps(error)
    refused(unharmed, b'{"jsonrpc":"2.0","id":"u2","method":"$/unknownRequest"}', METHOD_NOT_FOUND, "u2")
    refused(unharmed, b'{"jsonrpc":"2.0","id":"u3","method":"MEMO/LIST"}', METHOD_NOT_FOUND, "u3")


def test_unknown_notifications_are_ignored(seeded):
    client, before = seeded
    client.notify("unknown/notification", {"x": 1})
    client.notify("$/setTrace", {"value": "verbose"})
    client.notify("memo/create", {"text": "a notification, not a request"})
    client.send_raw(b'{"jsonrpc":"2.0","method":"memo/delete","params":{"id":"%s"}}' % before[0][0].encode())
    ignored(client, "notifications")
    still_fine(client, before)


# JSON lines only: a blank line is no message there. A Content-Length body always is one (next test).
@pytest.mark.parametrize("framing", [LINES])
def test_blank_lines_are_ignored(unharmed):
    for raw in (b"", b"   ", b"\t", b"\r"):
        unharmed.send_raw(raw)
    ignored(unharmed, "blank lines")


@pytest.mark.parametrize("framing", [CONTENT_LENGTH])
@pytest.mark.parametrize("body", [b"", b"   ", b"\t", b"\r"], ids=["empty", "spaces", "tab", "cr"])
def test_an_empty_or_blank_body_is_a_parse_error(unharmed, body):
    # The Content-Length equivalent of a blank line: the header promised a message, and there is none.
    error = refused(unharmed, body, PARSE_ERROR)
    assert "empty" in error["message"], error


# -- params -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("method, params, param", [
    ("memo/select", {}, "id"),
    ("memo/select", {"id": 5}, "id"),
    ("memo/select", {"id": None}, "id"),
    ("memo/select", {"id": "1234"}, "id"),
    ("memo/select", {"id": ""}, "id"),
    ("memo/select", {"id": "../../etc/passwd"}, "id"),
    ("memo/select", {"id": UNKNOWN_ID + "0"}, "id"),
    ("memo/delete", {}, "id"),
    ("memo/delete", {"id": "not-a-uuid"}, "id"),
    ("memo/update", {"id": UNKNOWN_ID}, "text"),
    ("memo/update", {"text": "x"}, "id"),
    ("memo/update", {"id": "zz", "text": "x"}, "id"),
    ("memo/update", {"id": UNKNOWN_ID, "text": 5}, "text"),
    ("memo/update", {"id": UNKNOWN_ID, "text": ["x"]}, "text"),
    ("memo/update", {"id": UNKNOWN_ID, "text": "x", "baseVersion": "1"}, "baseVersion"),
    ("memo/update", {"id": UNKNOWN_ID, "text": "x", "baseVersion": 1.5}, "baseVersion"),
    ("memo/create", {"text": 5}, "text"),
    ("memo/create", {"text": {"a": 1}}, "text"),
    ("memo/search", {}, "query"),
    ("memo/search", {"query": 5}, "query"),
    ("memo/search", {"query": None}, "query"),
    ("memo/share", {"id": UNKNOWN_ID, "format": 5}, "format"),
    ("memo/share", {"id": UNKNOWN_ID, "format": "docx"}, "format"),
    ("memo/export", {"path": "/tmp/x.json"}, "format"),
    ("memo/export", {"format": "json"}, "path"),
    ("memo/export", {"path": "/tmp/never-written.json", "format": "json", "overwrite": "yes"}, "overwrite"),
    ("memo/list", {"offset": "1"}, "offset"),
    ("memo/list", {"limit": 0}, "limit"),
])
def test_missing_or_wrongly_typed_param_is_named(unharmed, method, params, param):
    _, response = unharmed.request(method, params)
    assert "error" in response, response
    error = response["error"]
    assert error["code"] == INVALID_PARAMS, error
    assert error.get("data", {}).get("param") == param, error


@pytest.mark.parametrize("method", ["memo/list", "memo/create", "memo/select", "memo/search"])
@pytest.mark.parametrize("params", [[1, 2], "params", 5, True], ids=["array", "string", "number", "bool"])
def test_params_that_are_not_an_object(unharmed, method, params):
    _, response = unharmed.request(method, params)
    assert response.get("error", {}).get("code") == INVALID_PARAMS, response


@pytest.mark.parametrize("method, params", [
    ("memo/select", {"id": UNKNOWN_ID}),
    ("memo/update", {"id": UNKNOWN_ID, "text": "x"}),
    ("memo/update", {"id": UNKNOWN_ID, "text": "x", "baseVersion": 1}),
    ("memo/delete", {"id": UNKNOWN_ID}),
    ("memo/share", {"id": UNKNOWN_ID}),
])
def test_unknown_memo_id(unharmed, method, params):
    error = unharmed.error_of(method, params)
    assert error["code"] == MEMO_NOT_FOUND
    assert error["data"]["id"] == UNKNOWN_ID


def test_unknown_params_are_ignored(seeded):
    client, before = seeded
    assert client.call("memo/list", {"offset": 0, "sort": "oldest", "nested": {"deep": [1, 2, {"x": None}]}})["total"] \
        == len(before)
    memo_id = before[0][0]
    assert client.call("memo/share", {"id": memo_id, "format": "text", "colour": "red"})["text"] == before[0][2]
    assert client.call("memo/select", {"id": memo_id, "focus": True})["memo"]["id"] == memo_id
    still_fine(client, before)
    memo = client.call("memo/create", {"text": "with extras", "folder": "work", "tags": ["a"]})["memo"]
    assert memo["text"] == "with extras"
    client.check_mirror()


def test_unknown_initialize_params_are_ignored(server):
    result = server.call("initialize", {"locale": "en-US", "trace": "verbose", "workspaceFolders": None,
                                        "capabilities": {"experimental": {"x": 1}},
                                        "clientInfo": {"name": "n", "version": "1", "extra": True}})
    assert result["serverInfo"]["name"] == "cloudnotes"


# -- sizes, nesting, encodings -------------------------------------------------------------------------------

def test_a_10_mb_line_of_garbage(unharmed):
    refused(unharmed, b"x" * (10 * 1024 * 1024), PARSE_ERROR)
    refused(unharmed, b"{" + b"a" * (10 * 1024 * 1024) + b"}", PARSE_ERROR)


def test_a_10_mb_memo(seeded):
    # A line of 10 MB is within the message limit, and is handled normally (protocol/README.md). The
    # timeouts only guard against a hang: how fast a machine handles it is not the protocol's promise.
    client, _ = seeded
    text = "Ten megabytes\n" + ("0123456789abcdef가나다라\r\n" * (10 * 1024 * 1024 // 30))
    assert len(text.encode("utf-8")) >= 10 * 1024 * 1024
    memo = client.call("memo/create", {"text": text}, timeout=120)["memo"]
    assert memo["text"] == text
    assert client.call("memo/select", {"id": memo["id"]}, timeout=120)["memo"]["text"] == text
    assert client.call("memo/list", {})["rows"][0]["id"] == memo["id"]
    client.check_mirror()


def test_a_memo_over_the_memo_limit_is_refused(unharmed):
    limit = 16 * 1024 * 1024
    error = unharmed.error_of("memo/create", {"text": "y" * (limit + 1)}, timeout=60)
    assert error["code"] == INVALID_PARAMS and error["data"]["param"] == "text"


def test_a_line_over_the_message_limit_then_a_working_request(seeded):
    client, before = seeded
    size = 33 * 1024 * 1024
    refused(client, b"a" * size, INVALID_REQUEST, timeout=60)
    huge_request = b'{"jsonrpc":"2.0","id":"huge","method":"memo/create","params":{"text":"' + b"z" * size + b'"}}'
    refused(client, huge_request, INVALID_REQUEST, timeout=60)
    # The line after it is read whole and answered.
    memo = client.call("memo/create", {"text": "right after the huge line"})["memo"]
    assert memo["text"] == "right after the huge line"
    assert len(client.list_all()["rows"]) == len(before) + 1
    client.check_mirror()


@pytest.mark.parametrize("raw", [
    b"[" * 100_000 + b"]" * 100_000,
    b"[" * 100_000,
    b'{"a":' * 100_000 + b"1" + b"}" * 100_000,
    b'{"jsonrpc":"2.0","id":77,"method":"memo/list","params":{"deep":' + b"[" * 100_000 + b"]" * 100_000 + b"}}",
    b'{"jsonrpc":"2.0","id":78,"method":"memo/create","params":{"text":"deep","x":' + b"{\"k\":" * 100_000 + b"0"
    + b"}" * 100_000 + b"}}",
], ids=["arrays", "unclosed", "objects", "deep-param", "deep-object-param"])
def test_json_nested_100000_deep_is_a_parse_error(unharmed, raw):
    refused(unharmed, raw, PARSE_ERROR)


@pytest.mark.parametrize("bad", [
    b"\xff\xfe", b"\xc0\xaf", b"\xed\xa0\x80", b"\xe2\x82", b"\x80", b"\xf8\x88\x80\x80\x80", b"\xf4\x90\x80\x80",
], ids=["ff-fe", "overlong", "surrogate", "truncated", "lone-continuation", "5-byte", "above-10ffff"])
def test_invalid_utf8_is_a_parse_error_never_replaced(unharmed, bad):
    raw = b'{"jsonrpc":"2.0","id":21,"method":"memo/create","params":{"text":"bad ' + bad + b' bytes"}}'
    refused(unharmed, raw, PARSE_ERROR)
    refused(unharmed, b"\xff" + b'{"jsonrpc":"2.0","id":22,"method":"memo/list"}', PARSE_ERROR)


def test_raw_nul_inside_a_json_string_is_a_parse_error(unharmed):
    refused(unharmed, b'{"jsonrpc":"2.0","id":31,"method":"memo/create","params":{"text":"raw\x00nul"}}', PARSE_ERROR)
    refused(unharmed, b'{"jsonrpc":"2.0","id":32,"method":"memo/create","params":{"text":"raw\x01control\x1f"}}',
            PARSE_ERROR)
    refused(unharmed, b'{"jsonrpc":"2.0","id":33,"method":"memo/create","params":{"text":"raw\ttab"}}', PARSE_ERROR)


@pytest.mark.parametrize("newline", [b"\r\n", b"\n"], ids=["crlf", "lf"])
def test_crlf_and_lf_line_ends_are_accepted(seeded, newline):
    # The line end of the framing itself: of a JSON line, or of each header line before a body.
    client, before = seeded
    client.send_raw(b'{"jsonrpc":"2.0","id":"crlf-1","method":"memo/list","params":{}}', newline=newline)
    _, response = client.wait_response("crlf-1")
    assert response["result"]["total"] == len(before)
    client.send_raw(b'{"jsonrpc":"2.0","id":"crlf-2","method":"memo/create","params":{"text":"via CRLF\\r\\n"}}',
                    newline=newline)
    notes, response = client.wait_response("crlf-2")
    client.feed(notes)
    assert response["result"]["memo"]["text"] == "via CRLF\r\n"
    client.check_mirror()


def test_request_ids_of_every_allowed_kind_are_echoed(unharmed):
    for request_id in [0, -1, 2**53 - 1, "", "id with spaces", "메모-1", "1"]:
        _, response = unharmed.request("memo/list", {"limit": 1}, id=request_id)
        assert response["id"] == request_id and type(response["id"]) is type(request_id)
        assert "result" in response


def test_a_burst_of_bad_lines_then_good_ones(unharmed):
    bad_lines = [b"garbage", b"[]", b"\xff", b'{"jsonrpc":"2.0","id":"b%d","method":"nope"}', b"{" * 70, b"42"]
    for round_number in range(20):
        for line in bad_lines:
            unharmed.send_raw(line.replace(b"%d", str(round_number).encode()))
    ids = [unharmed.send_request("memo/list", {"limit": 1}) for _ in range(20)]
    for request_id in ids:
        _, response = unharmed.wait_response(request_id, timeout=30)
        assert "result" in response
    errors = [m for m in unharmed.received if "error" in m]
    assert len(errors) == len(bad_lines) * 20, "every bad line gets exactly one reply"

"""The documented resource limits, at their edges: what is just within a limit is served, what is just
beyond it gets the documented error, and the connection stays usable either way."""

from __future__ import annotations

import pytest

from cnsupport.framing import FRAMINGS
from cnsupport.schema import INVALID_PARAMS, PARSE_ERROR


def nested(depth: int) -> str:
    """A params member nested `depth` levels deep in total, counting the message and params objects."""
    inner = depth - 2
    return '{"jsonrpc":"2.0","id":9,"method":"memo/list","params":{"deep":' + "[" * inner + "]" * inner + "}}"


@pytest.mark.parametrize("framing", FRAMINGS)  # bad input: the same in a line and in a body
def test_nesting_up_to_the_limit_is_served_and_one_more_level_is_refused(client):
    depth = 64
    client.send_raw(nested(depth))
    _, response = client.wait_response(9)
    assert "result" in response, response
    client.send_raw(nested(depth + 1))
    message = client.next_message()
    assert message["error"]["code"] == PARSE_ERROR and message["id"] is None, message
    assert client.call("memo/list", {})["total"] == 0


def test_a_memo_of_exactly_the_memo_limit_is_stored_and_one_byte_more_is_refused(client):
    limit = 16 * 1024 * 1024
    text = "가" * (limit // 3) + "x" * (limit % 3)  # multibyte: the limit counts UTF-8 bytes
    assert len(text.encode()) == limit
    memo = client.call("memo/create", {"text": text}, timeout=120)["memo"]
    assert memo["version"] == 1
    error = client.error_of("memo/update", {"id": memo["id"], "text": text + "x"}, timeout=120)
    assert error["code"] == INVALID_PARAMS and error["data"]["param"] == "text"
    # An edit counts the text it would make: one byte more is refused, a same-length change is not.
    error = client.error_of("memo/edit", {"id": memo["id"], "baseVersion": 1, "edits": [
        {"start": limit, "end": limit, "text": "x"}]}, timeout=120)
    assert error["code"] == INVALID_PARAMS and error["data"]["param"] == "edits"
    edited = client.call("memo/edit", {"id": memo["id"], "baseVersion": 1, "edits": [
        {"start": limit - 1, "end": limit, "text": "y"}]}, timeout=120)
    assert edited["version"] == 2 and edited["length"] == limit
    shared = client.call("memo/share", {"id": memo["id"], "format": "text"}, timeout=120)["text"]
    assert len(shared.encode()) == limit and shared.endswith("가y")


def test_logs_at_the_default_level_never_carry_memo_text(servers):
    server = servers.session()
    secret = "secret-diary-entry-7f3a"
    memo = server.call("memo/create", {"text": f"{secret}\nbody {secret}"})["memo"]
    server.call("memo/update", {"id": memo["id"], "text": f"{secret} v2"})
    server.error_of("memo/update", {"id": memo["id"], "text": f"{secret} stale", "baseVersion": 1})
    server.call("memo/search", {"query": secret})
    server.error_of("memo/create", {"text": 5, "note": secret})
    server.send_raw('{"jsonrpc":"2.0","id":77,"method":"memo/create","params":{"text":"' + secret + '"')
    server.next_message()
    assert server.shutdown_and_exit() == 0
    assert server.stderr.strip(), "the server logged nothing at all"
    assert secret not in server.stderr

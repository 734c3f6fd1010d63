"""Framing through the real binary (protocol/README.md, "Framing"): bad Content-Length framing gets its
documented error with `"id": null`, the stream recovers at the next message, and nothing stored changes;
each session is answered in the framing it began in; a message that arrives in many pieces is read whole.

What a well-framed message may hold that is bad (not JSON, bad params, ...) is tested in both framings by
test_bad_input.py, test_bad_input_matrix.py and the transcripts."""

from __future__ import annotations

import io
import json
import subprocess

import pytest

from cnsupport.framing import CONTENT_LENGTH, FRAMINGS, LINES, READERS, frame
from cnsupport.paths import BINARY
from cnsupport.schema import INVALID_REQUEST, PARSE_ERROR
from cnsupport.session import next_response, still_fine

MAX_MESSAGE_BYTES = 32 * 1024 * 1024  # capabilities.limits.maxMessageBytes

# A request that must never run: it would store a memo, and a response to it (its id is never registered
# with the harness) is a protocol violation. Each bad framing below wraps it.
NEVER_RUN = json.dumps({"jsonrpc": "2.0", "id": "never", "method": "memo/create",
                        "params": {"text": "must never be stored"}}).encode()
LENGTH = b"Content-Length: %d" % len(NEVER_RUN)  # its header line, without the line end


@pytest.fixture
def framing() -> str:
    """The tests here speak Content-Length framing, unless they say otherwise."""
    return CONTENT_LENGTH


@pytest.fixture
def stored(client):
    """An initialized session with memos stored, and a snapshot of them."""
    client.create("stored before the bad framing\nwith a body")
    client.create("the selected memo")
    client.check_mirror()
    return client, client.snapshot()


def request_body(request_id, method: str, params: dict) -> bytes:
    return json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params},
                      ensure_ascii=False).encode("utf-8")


def refused_and_recovered(client, before, raw: bytes, code: int, *fragments: str) -> dict:
    """Sends `raw` as it is and a request right behind it. The answers: one error `code` with id null,
    its message naming each of `fragments`, then the request's response; nothing else; and nothing
    stored changed (`before` is the client's snapshot)."""
    client.send_bytes(raw)
    # Behind it at once, as a client pipelines: reading must resume at exactly this message. (A header
    # line, such as a body sent without the blank line before it, ends only where the next line does.)
    request_id = client.send_request("memo/list", {"limit": 1})
    notes, response = next_response(client)
    assert notes == [], f"notifications for refused framing: {notes}"
    assert response["id"] is None and "error" in response, response
    error = response["error"]
    assert error["code"] == code, error
    for fragment in fragments:
        assert fragment in error["message"], (fragment, error)
    notes, response = client.wait_response(request_id)
    assert notes == [] and response["result"]["total"] == len(before), response
    still_fine(client, before)
    assert not client.stray and not client.stray_notes, f"more than one answer: {client.stray} {client.stray_notes}"
    return error


def header(*lines: bytes) -> bytes:
    """Header lines as a client writes them, each ended by \\r\\n, then the blank line."""
    return b"".join(line + b"\r\n" for line in lines) + b"\r\n"



@pytest.mark.parametrize("raw, fragments", [
    (header(b"Content-Type: application/vscode-jsonrpc; charset=utf-8") + NEVER_RUN, ["has no Content-Length"]),
    (header(b"Content-Length: -%d" % len(NEVER_RUN)) + NEVER_RUN, ["Content-Length", "'-%d'" % len(NEVER_RUN)]),
    (header(b"Content-Length: sixty") + NEVER_RUN, ["Content-Length", "'sixty'"]),
    (LENGTH + b"\r\n" + NEVER_RUN, ["must end with an empty line"]),
    (header(LENGTH, b"Content-Length: %d" % (len(NEVER_RUN) + 1)) + NEVER_RUN, ["disagree"]),
    (header(b"Content-Length %d" % len(NEVER_RUN)) + NEVER_RUN, ["'Name: value'"]),
    (header(LENGTH, b"X-Padding: " + b"x" * 9000) + NEVER_RUN, ["longer than 8192 bytes"]),
    (header(LENGTH, *[b"X-Header-%d: y" % n for n in range(32)]) + NEVER_RUN, ["more than 32 header lines"]),
    (header(LENGTH, b"Content-Type: application/json; charset=latin1") + NEVER_RUN, ["UTF-8", "'latin1'"]),
], ids=["missing", "negative", "non-numeric", "no-blank-line", "disagreeing", "no-colon", "line-over-8-kb",
        "33-lines", "charset"])
def test_a_bad_header_is_a_parse_error_and_its_message_is_never_run(stored, raw, fragments):
    client, before = stored
    refused_and_recovered(client, before, raw, PARSE_ERROR, "Parse error: ", *fragments)


def test_a_body_that_is_not_json_is_refused_as_a_line_would_be(stored):
    client, before = stored
    error = refused_and_recovered(client, before, frame(b"this is not json", CONTENT_LENGTH), PARSE_ERROR)
    assert error["message"] == "Parse error: unexpected character at byte 0", error


def test_a_body_is_read_by_its_length_not_by_its_lines(stored):
    # Pretty-printed JSON is one message in a body, line breaks and all.
    client, before = stored
    body = json.dumps({"jsonrpc": "2.0", "id": "pretty", "method": "memo/list", "params": {"limit": 1}}, indent=2)
    assert "\n" in body
    client.send_raw(body)
    notes, response = client.wait_response("pretty")
    assert notes == [] and response["result"]["total"] == len(before), response
    still_fine(client, before)


@pytest.mark.parametrize("framing", FRAMINGS)
def test_a_message_at_the_limit_is_served_and_one_byte_more_is_skipped(stored):
    # The limit counts the line (without its newline) or the body: maxMessageBytes is served, one byte
    # more is refused, and its bytes are dropped as they are read, not run (any answer to "over" fails).
    client, before = stored

    def sized(request_id: bytes, size: int) -> bytes:
        """A memo/list request of exactly `size` bytes, padded by a param the server ignores."""
        head = b'{"jsonrpc":"2.0","id":"%s","method":"memo/list","params":{"limit":1,"padding":"' % request_id
        return head + b"z" * (size - len(head) - 3) + b'"}}'

    at_limit = sized(b"at-limit", MAX_MESSAGE_BYTES)
    assert len(at_limit) == MAX_MESSAGE_BYTES
    client.send_raw(at_limit)
    _, response = client.wait_response("at-limit", timeout=60)
    assert response["result"]["total"] == len(before), response
    refused_and_recovered(client, before, frame(sized(b"over", MAX_MESSAGE_BYTES + 1), client.framing), INVALID_REQUEST,
                          f"Invalid request: the message is {MAX_MESSAGE_BYTES + 1} bytes, over the limit")


@pytest.mark.parametrize("cut, problem", [
    (header(LENGTH) + NEVER_RUN[:10], f"Parse error: the input ended after 10 of the {len(NEVER_RUN)} bytes"),
    (b"Content-Len", "Parse error: the input ended inside a message's header"),
], ids=["inside-a-body", "inside-a-header"])
def test_end_of_input_inside_a_message(servers, stored, cut, problem):
    client, before = stored
    request_id = client.send_request("memo/create", {"text": "sent just before the end"})
    client.send_bytes(cut)
    client.close_stdin()
    messages = client.read_until_eof()
    # What was sent before is answered, then the cut message is refused, and the server ends as at any
    # end of input.
    answered = [m for m in messages if m.get("id") == request_id]
    assert len(answered) == 1 and "result" in answered[0], messages
    errors = [m for m in messages if "error" in m]
    assert errors == [messages[-1]], messages
    assert errors[0]["id"] is None and errors[0]["error"]["code"] == PARSE_ERROR, errors
    assert problem in errors[0]["error"]["message"], errors
    assert client.wait() == 0
    again = servers.session()
    after = again.snapshot()
    assert after[0][2] == "sent just before the end"
    assert after[1:] == before, "a stored memo changed"


# JSON lines only: there a line needs no end to be whole. A body cut short is an error (the test above).
@pytest.mark.parametrize("framing", [LINES])
def test_a_last_line_without_its_newline_still_counts(stored):
    client, before = stored
    client.send_raw(request_body("last", "memo/list", {"limit": 1}), newline=b"")
    client.close_stdin()
    messages = client.read_until_eof()
    assert [m["id"] for m in messages] == ["last"] and messages[0]["result"]["total"] == len(before), messages
    assert client.wait() == 0


@pytest.mark.parametrize("framing", [LINES])
def test_a_content_length_header_in_a_json_lines_session_is_refused_and_its_body_skipped(stored):
    client, before = stored
    refused_and_recovered(client, before, frame(NEVER_RUN, CONTENT_LENGTH), PARSE_ERROR, "JSON lines",
                          "Content-Length header")


@pytest.mark.parametrize("newline", [b"\n", b"\r\n"], ids=["lf", "crlf"])
def test_a_json_line_in_a_content_length_session_is_refused(stored, newline):
    client, before = stored
    refused_and_recovered(client, before, NEVER_RUN + newline, PARSE_ERROR, "Content-Length headers", "JSON line")


@pytest.mark.parametrize("leading", [b"", b"\r\n \t\n"], ids=["at-once", "after-blank-lines"])
@pytest.mark.parametrize("framing", FRAMINGS)
def test_each_session_is_answered_in_the_framing_it_began_in(tmp_root, framing, leading):
    # Raw bytes, read strictly: every byte the server writes belongs to a message in the client's framing.
    requests = [
        request_body(1, "initialize", {"locale": "en-US", "timeZone": "UTC"}),
        b'{"jsonrpc":"2.0","method":"initialized"}',
        request_body(2, "memo/create", {"text": "answered in kind"}),
        request_body(3, "shutdown", {}),
        b'{"jsonrpc":"2.0","method":"exit"}',
    ]
    sent = leading + b"".join(frame(request, framing) for request in requests)
    result = subprocess.run([BINARY, "serve", "--store", str(tmp_root / "kind" / "notes.sqlite")], input=sent,
                            capture_output=True, timeout=60)
    assert result.returncode == 0, result.stderr.decode(errors="replace")[-2000:]
    stream = io.BytesIO(result.stdout)
    messages = [json.loads(payload) for payload in iter(lambda: READERS[framing](stream), None)]
    assert all(message["jsonrpc"] == "2.0" for message in messages), messages
    assert [m["id"] for m in messages if "id" in m] == [1, 2, 3], messages
    assert all("result" in m for m in messages if "id" in m), messages
    if framing == LINES:
        assert b"Content-Length" not in result.stdout
    else:
        assert result.stdout.startswith(b"Content-Length: ")


@pytest.mark.parametrize("use_serve", [True, False], ids=["serve", "default subcommand"])
def test_the_stdio_flag_of_lsp_clients_is_accepted(servers, use_serve):
    srv = servers.session(use_serve=use_serve, args=["--stdio"])
    memo = srv.create("served over stdio")
    assert [row["id"] for row in srv.list_all()["rows"]] == [memo["id"]]
    assert srv.shutdown_and_exit() == 0


def test_messages_split_across_many_small_writes_are_read_whole(stored):
    client, before = stored
    # One byte per write: every boundary (in the header's name and number, between \r and \n, in the
    # body, inside a UTF-8 character) falls between two reads.
    texts = ["written one byte at a time", "메모: split inside its characters"]
    for text in texts:
        request_id = client.new_id()
        client.send_raw(request_body(request_id, "memo/create", {"text": text}), write_size=1)
        notes, response = client.wait_response(request_id)
        client.feed(notes)
        assert response["result"]["memo"]["text"] == text, response
    client.send_raw(b'{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":"long gone"}}', write_size=1)
    # A pipelined burst in pieces of 7 bytes: pieces that end one message and begin the next.
    bodies = [request_body(f"burst-{n}", "memo/list", {"limit": 1}) for n in range(5)]
    for body in bodies:
        client.expect_reply(body)
    client.send_bytes(b"".join(frame(body, CONTENT_LENGTH) for body in bodies), write_size=7)
    for n in range(5):
        notes, response = client.wait_response(f"burst-{n}")
        assert notes == [] and response["result"]["total"] == len(before) + len(texts), response
    assert not client.stray, f"answers to nothing that was asked: {client.stray}"
    client.check_mirror()
    after = client.snapshot()
    assert [memo[2] for memo in after[:len(texts)]] == texts[::-1]
    assert after[len(texts):] == before, "a stored memo changed"

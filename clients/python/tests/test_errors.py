"""Error responses (section 9) as CloudNotesError, and the client's own failures: a dead server, a
timeout, a missing binary, a store that cannot be opened, a misbehaving server."""

from __future__ import annotations

import json
import os
import signal
import sys
import textwrap
from pathlib import Path

import pytest

from cloudnotes_client import (BinaryNotFoundError, ClientError, CloudNotesClient, CloudNotesError, InvalidParams,
                               MemoNotFound, MethodNotFound, RequestTimeoutError, ServerDiedError,
                               VersionConflict)
from conftest import collect

UNKNOWN_ID = "00000000-0000-4000-8000-000000000000"


def test_an_unknown_memo_is_memo_not_found_with_its_id(client):
    for action in (client.select, client.delete, client.share, lambda memo_id: client.update(memo_id, "x")):
        with pytest.raises(MemoNotFound) as refused:
            action(UNKNOWN_ID)
        error = refused.value
        assert isinstance(error, CloudNotesError)
        assert (error.code, error.name, error.data, error.memo_id) == (-33001, "MemoNotFound", {"id": UNKNOWN_ID},
                                                                        UNKNOWN_ID)
        assert isinstance(error.message, str) and error.message
        assert str(error).startswith(error.method + ": ")


def test_a_malformed_id_is_invalid_params(client):
    with pytest.raises(InvalidParams) as refused:
        client.select("not-a-uuid")
    assert refused.value.code == -32602 and refused.value.param == "id"


@pytest.mark.parametrize("method, params, param", [
    ("memo/list", {"limit": 0}, "limit"),
    ("memo/list", {"limit": 1001}, "limit"),
    ("memo/list", {"limit": 1.5}, "limit"),
    ("memo/list", {"offset": -1}, "offset"),
    ("memo/create", {"text": 5}, "text"),
    ("memo/update", {"id": UNKNOWN_ID}, "text"),
    ("memo/search", {}, "query"),
    ("memo/share", {"id": UNKNOWN_ID, "format": "pdf"}, "format"),
])
def test_invalid_params_name_the_param(client, method, params, param):
    with pytest.raises(InvalidParams) as refused:
        client.request(method, params)
    assert refused.value.param == param and refused.value.data == {"param": param}


def test_an_unknown_method_is_method_not_found(client):
    with pytest.raises(MethodNotFound) as refused:
        client.request("memo/archive", {"id": UNKNOWN_ID})
    assert refused.value.code == -32601 and refused.value.data == {"method": "memo/archive"}


def test_a_stale_base_version_is_a_conflict_carrying_the_current_memo(client):
    memo = client.create("v1")
    current = client.update(memo.id, "v2", base_version=1)
    state = client.mirror.snapshot()
    with pytest.raises(VersionConflict) as refused:
        collect(client, client.update, memo.id, "stale edit", base_version=1)
    error = refused.value
    assert (error.code, error.base_version) == (-33002, 1)
    assert set(error.data) == {"baseVersion", "memo"}
    assert error.current_memo == current
    assert client.mirror.snapshot() == state, "a refused update changes nothing"
    assert client.share(memo.id).text == "v2"
    # Merge and retry on the current version.
    merged = client.update(memo.id, "v2 + stale edit", base_version=error.current_memo.version)
    assert merged.version == 3


def test_other_errors_have_no_current_memo():
    error = CloudNotesError.from_response({"code": -32099, "message": "new in a later version"}, "memo/x")
    assert type(error) is CloudNotesError and error.name == "UnknownError"
    assert error.current_memo is None and error.param is None and error.data is None


def test_deleted_and_discarded_memos_are_gone(client):
    blank = client.create("")
    kept = client.create("kept")            # rule S5: the blank memo is discarded
    with pytest.raises(MemoNotFound):
        client.select(blank.id)
    client.delete(kept.id)
    with pytest.raises(MemoNotFound):
        client.delete(kept.id)


def test_a_killed_server_raises_server_died(client):
    client.create("x")
    os.kill(client.pid, signal.SIGKILL)
    with pytest.raises(ServerDiedError) as died:
        client.list()
    assert died.value.returncode == -signal.SIGKILL
    with pytest.raises(ServerDiedError):
        client.create("again")
    assert client.close() == -signal.SIGKILL


def test_an_unopenable_store_fails_at_start_with_exit_code_2(binary, tmp_path):
    store = tmp_path / "not-a-store.sqlite"
    store.write_text("this is not a CloudNotes store\n" * 100, encoding="utf-8")
    with pytest.raises(ServerDiedError) as died:
        CloudNotesClient(store, binary=binary)
    assert died.value.returncode == 2
    assert died.value.stderr.strip(), "the server says why in its log"


def test_a_missing_binary_is_reported_clearly(tmp_path, monkeypatch):
    with pytest.raises(BinaryNotFoundError) as missing:
        CloudNotesClient(tmp_path / "n.sqlite", binary=tmp_path / "no-such-cloudnotes")
    assert isinstance(missing.value, FileNotFoundError) and "no-such-cloudnotes" in str(missing.value)
    monkeypatch.delenv("CLOUDNOTES_BIN", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(BinaryNotFoundError) as missing:
        CloudNotesClient(tmp_path / "n.sqlite")
    assert "CLOUDNOTES_BIN" in str(missing.value)


def test_the_binary_defaults_to_cloudnotes_bin(binary, tmp_path, monkeypatch):
    monkeypatch.setenv("CLOUDNOTES_BIN", binary)
    with CloudNotesClient(tmp_path / "n.sqlite") as client:
        assert client.command[:2] == [binary, "serve"]
        assert client.create("found").title == "found"
    assert client.returncode == 0


def test_a_callback_cannot_wait_for_a_response(client):
    seen = []

    def progress(report):
        try:
            client.list()
        except ClientError as error:
            seen.append(error)
    client.import_memos([{"title": "t", "body": "", "last_modified": 1}], progress=progress)
    assert seen and all("reader thread" in str(error) for error in seen)
    assert client.list().total == 1


# ---------------------------------------------------------------------------------------------------
# A stand-in server, to make the failures a real server should never produce
# ---------------------------------------------------------------------------------------------------

FAKE_SERVER = textwrap.dedent('''\
    import json, os, sys
    mode = os.environ["FAKE_MODE"]
    log = open(os.environ["FAKE_LOG"], "a")
    INIT = {"protocolVersion": "1.0", "serverInfo": {"name": "fake", "version": "0"},
            "capabilities": {"requests": [], "notifications": [], "serverNotifications": [], "shareFormats": [],
                             "exportFormats": [], "limits": {"maxMessageBytes": 1, "maxMemoBytes": 1,
                                                             "maxNestingDepth": 1, "maxListLimit": 1000}}}
    def answer(message, result):
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": message["id"], "result": result}) + "\\n")
        sys.stdout.flush()
    for line in sys.stdin:
        log.write(line)
        log.flush()
        message = json.loads(line)
        method = message["method"]
        if method == "exit":
            sys.exit(0)
        if "id" not in message:
            continue
        if method == "initialize":
            answer(message, INIT)
        elif method in ("memo/list", "shutdown"):
            answer(message, {"total": 0, "rows": []} if method == "memo/list" else None)
        elif mode == "crash":
            sys.stderr.write("simulated crash in " + method + "\\n")
            sys.stderr.flush()
            sys.exit(3)
        elif mode == "garbage":
            sys.stdout.write("this is not JSON\\n")
            sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": 999, "result": None}) + "\\n")
            answer(message, {"total": 0, "rows": []})
        # mode "silent": never answers
''')


@pytest.fixture
def fake_server(tmp_path, monkeypatch):
    """Starts a client on a stand-in server in one of the modes crash, silent or garbage."""
    script = tmp_path / "fake-cloudnotes"
    script.write_text(f"#!{sys.executable}\n" + FAKE_SERVER, encoding="utf-8")
    script.chmod(0o755)
    log = tmp_path / "fake.log"
    started = []

    def start(mode):
        client = CloudNotesClient(tmp_path / "n.sqlite", binary=script, timeout=10,
                                  env={"FAKE_MODE": mode, "FAKE_LOG": str(log)})
        started.append(client)
        return client
    yield start, log
    for client in started:
        client.close(timeout=5)


def test_a_server_that_dies_during_a_request_raises_server_died(fake_server):
    start, _ = fake_server
    client = start("crash")
    with pytest.raises(ServerDiedError) as died:
        client.create("boom")
    assert died.value.returncode == 3
    assert "simulated crash in memo/create" in str(died.value)
    assert not isinstance(died.value, CloudNotesError)


def test_a_server_that_does_not_answer_times_out_and_is_asked_to_cancel(fake_server):
    start, log = fake_server
    client = start("silent")
    with pytest.raises(RequestTimeoutError) as timed_out:
        client.select(UNKNOWN_ID, timeout=0.3)
    assert timed_out.value.method == "memo/select" and timed_out.value.timeout == 0.3
    assert not isinstance(timed_out.value, CloudNotesError)
    client.list()   # a round trip, so the stand-in has logged the cancellation
    sent = [json.loads(line) for line in Path(log).read_text(encoding="utf-8").splitlines()]
    cancels = [m for m in sent if m["method"] == "$/cancelRequest"]
    assert cancels == [{"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": timed_out.value.request_id}}]


def test_lines_that_are_not_protocol_messages_are_recorded_not_fatal(fake_server):
    start, _ = fake_server
    client = start("garbage")
    assert client.request("memo/search", {"query": ""}) == {"total": 0, "rows": []}
    problems = "\n".join(client.problems)
    assert "not a JSON message" in problems
    assert "matches no request" in problems

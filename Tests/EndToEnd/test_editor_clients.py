"""Three editors' own JSON-RPC clients, with no adapter of ours, each drive a whole session against the server.

Editors spawn language servers through stock JSON-RPC clients that speak the LSP base protocol
(`Content-Length: N` headers, then the body). The server detects that framing and answers in kind, so a
plugin can use its editor's client as it is. These tests make sure of it with three such clients:

- python-lsp-jsonrpc (`pylsp_jsonrpc`): its `JsonRpcStreamReader`, `JsonRpcStreamWriter` and `Endpoint`;
- Neovim 0.7.2's `vim.lsp.rpc`, in a headless Neovim running `editor_clients/session.lua`;
- Emacs 28.2's `jsonrpc.el`, in `emacs --batch` running `editor_clients/session.el`.

Each runs the same session (`session_steps`): `initialize`, `initialized`, `memo/create`, `memo/list`, a
request for an unknown method, a Korean memo, `memo/list` again, `shutdown`, `exit`. Each reports, in one
format, what the client delivered to its caller in the order it delivered it: every notification, every
response (a result, or an error) and the server's exit code. One checker, `check_session`, checks every
report: the notifications each request caused arrived before its response, the results are right, the
unknown method came back to the client as a -32601 error, and the server exited with code 0.

A server that answered in JSON lines instead would leave each client waiting for a header forever: the
first request then times out, and the test fails (nothing here is timed otherwise; the timeouts are
generous, so a slow machine does not fail them).

The clients' tools come from Debian (`neovim`, `emacs-nox`) and PyPI (`python-lsp-jsonrpc`); scripts/test
installs them. A missing tool skips its test on a developer's machine, and fails it in CI (CI=true).
"""

from __future__ import annotations

import concurrent.futures
import importlib.util
import json
import os
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any

import pytest

from cnsupport.paths import BINARY

DRIVERS = Path(__file__).resolve().parent / "editor_clients"

# Seconds to wait for each answer, and for the server to exit after `exit`; the drivers get it in the plan.
ANSWER_TIMEOUT = 60

SHOPPING = "Shopping\nmilk\neggs"
GROCERIES = "장보기 목록\n우유 2통\n계란 한 판"
UNKNOWN_METHOD = "memo/frobnicate"


def session_steps(client_name: str) -> list[dict[str, Any]]:
    """The session every client runs: requests (each sent after the previous one was answered) and notifications."""
    page = {"offset": 0, "limit": 50}
    return [
        {"request": "initialize",
         "params": {"clientInfo": {"name": client_name}, "locale": "en-US", "timeZone": "UTC", "capabilities": {}}},
        {"notify": "initialized", "params": {}},
        {"request": "memo/create", "params": {"text": SHOPPING}},
        {"request": "memo/list", "params": page},
        {"request": UNKNOWN_METHOD, "params": {}},
        {"request": "memo/create", "params": {"text": GROCERIES}},
        {"request": "memo/list", "params": page},
        {"request": "shutdown"},
        {"notify": "exit"},
    ]


def server_command(tmp_path: Path) -> list[str]:
    """`cloudnotes serve --stdio`, as editors spawn language servers, on a store of this test's own."""
    return [os.path.abspath(BINARY), "serve", "--stdio", "--store", str(tmp_path / "notes.sqlite")]


def require_tool(present: object, what: str, install: str) -> None:
    """Skip when a client's tool is missing, except in CI, where scripts/test installs it: fail there."""
    if present:
        return
    message = f"{what} is not installed ({install}; scripts/test installs it)"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


# ---------------------------------------------------------------------------------------------------
# The clients. Each returns a report: {"events": [...], "failure": null or why the session stopped}, where
# an event is {"notification": method, "params": ...}, {"response": method, "result": ...},
# {"response": method, "error": {"code", "message", "data"}} or {"exit": code}.
# ---------------------------------------------------------------------------------------------------


def run_python_client(command: list[str], steps: list[dict], tmp_path: Path) -> dict:
    """python-lsp-jsonrpc's stream reader, writer and endpoint, used as they are."""
    from pylsp_jsonrpc.endpoint import Endpoint
    from pylsp_jsonrpc.exceptions import JsonRpcException
    from pylsp_jsonrpc.streams import JsonRpcStreamReader, JsonRpcStreamWriter

    events: list[dict] = []

    class RecordNotifications(dict):
        """The endpoint's dispatcher: a handler for every notification method, which records it."""

        def __missing__(self, method: str):
            return lambda params: events.append({"notification": method, "params": params})

    with open(tmp_path / "server.stderr", "wb") as stderr:
        server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=stderr)
    reader, writer = JsonRpcStreamReader(server.stdout), JsonRpcStreamWriter(server.stdin)
    endpoint = Endpoint(RecordNotifications(), writer.write)
    # The reader thread hands each message to the endpoint, which calls the dispatcher for a notification and
    # resolves the request's future for a response: notifications are recorded before their response is.
    listener = threading.Thread(target=reader.listen, args=(endpoint.consume,), daemon=True)
    listener.start()
    failure = None
    try:
        for step in steps:
            if "notify" in step:
                endpoint.notify(step["notify"], step.get("params"))
                continue
            answer = endpoint.request(step["request"], step.get("params"))
            try:
                events.append({"response": step["request"], "result": answer.result(timeout=ANSWER_TIMEOUT)})
            except JsonRpcException as error:
                events.append({"response": step["request"],
                               "error": {"code": error.code, "message": error.message, "data": error.data}})
        events.append({"exit": server.wait(timeout=ANSWER_TIMEOUT)})
    except concurrent.futures.TimeoutError:
        failure = f"no answer to {step.get('request')} within {ANSWER_TIMEOUT} s"
    except subprocess.TimeoutExpired:
        failure = f"the server did not exit within {ANSWER_TIMEOUT} s"
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
        listener.join(timeout=ANSWER_TIMEOUT)
        endpoint.shutdown()
        writer.close()
        reader.close()
    return {"events": events, "failure": failure}


def run_driver(argv: list[str], steps: list[dict], tmp_path: Path) -> dict:
    """Run an editor on a driver script, which runs the session with the editor's client and writes a report.

    The editor gets the plan ({command, steps, timeoutSeconds}) and the report's path in $CLOUDNOTES_SESSION
    and $CLOUDNOTES_REPORT, and a home, XDG folders and TMPDIR of its own under tmp_path.
    """
    plan, report = tmp_path / "session.json", tmp_path / "report.json"
    plan.write_text(json.dumps({"command": server_command(tmp_path), "steps": steps,
                                "timeoutSeconds": ANSWER_TIMEOUT}, ensure_ascii=False), encoding="utf-8")
    env = {name: value for name, value in os.environ.items()
           if name not in ("NVIM", "NVIM_LISTEN_ADDRESS", "VIMINIT", "MYVIMRC", "EMACSLOADPATH")}
    for name, folder in [("HOME", "home"), ("XDG_CONFIG_HOME", "config"), ("XDG_CACHE_HOME", "cache"),
                         ("XDG_DATA_HOME", "data"), ("XDG_STATE_HOME", "state"), ("TMPDIR", "tmp")]:
        (tmp_path / folder).mkdir()
        env[name] = str(tmp_path / folder)
    env.update(CLOUDNOTES_SESSION=str(plan), CLOUDNOTES_REPORT=str(report))
    try:
        done = subprocess.run(argv, cwd=tmp_path, env=env, stdin=subprocess.DEVNULL, capture_output=True,
                              timeout=ANSWER_TIMEOUT * (len(steps) + 2))
    except subprocess.TimeoutExpired as error:
        pytest.fail(f"{argv[0]} did not finish the session: {error}\nstderr: {error.stderr!r}")
    output = f"{argv[0]} exited with {done.returncode}\nstdout: {done.stdout.decode(errors='replace')}\n" \
             f"stderr: {done.stderr.decode(errors='replace')}"
    if not report.exists():
        pytest.fail(f"the driver wrote no report; {output}")
    result = json.loads(report.read_text(encoding="utf-8"))
    assert (done.returncode == 0) == (result.get("failure") is None), f"{result.get('failure')}; {output}"
    return result


# ---------------------------------------------------------------------------------------------------
# The checker
# ---------------------------------------------------------------------------------------------------


def exchanges(report: dict) -> tuple[list[tuple[str, list[dict], dict]], int | None]:
    """Split a report into (method, the notifications delivered since the previous response, the response)."""
    if report.get("failure"):
        pytest.fail(f"the session stopped: {report['failure']}\nevents so far: {report['events']}")
    found, notifications, exit_code = [], [], None
    for event in report["events"] or []:
        if "notification" in event:
            notifications.append(event)
        elif "response" in event:
            found.append((event["response"], notifications, event))
            notifications = []
        elif "exit" in event:
            exit_code = event["exit"]
        else:
            pytest.fail(f"the client reported a problem: {event}")
    assert not notifications, f"notifications after the last response: {notifications}"
    return found, exit_code


def methods(notifications: list[dict]) -> list[str]:
    return [note["notification"] for note in notifications]


def result_of(response: dict) -> Any:
    assert response.get("error") is None, f"{response['response']} failed: {response['error']}"
    return response.get("result")


def check_initialize(notifications: list[dict], response: dict) -> None:
    assert notifications == []
    result = result_of(response)
    assert result["protocolVersion"] == "1.2"
    capabilities = result["capabilities"]
    assert {"initialize", "shutdown", "memo/create", "memo/list"} <= set(capabilities["requests"])
    assert {"initialized", "exit"} <= set(capabilities["notifications"])
    assert {"list/didInsert", "selection/didChange", "detail/didShow", "detail/didClear"} \
        <= set(capabilities["serverNotifications"])
    assert set(capabilities["limits"]) >= {"maxMessageBytes", "maxMemoBytes", "maxNestingDepth", "maxListLimit"}


def check_create(notifications: list[dict], response: dict, text: str, title: str, preview: str) -> dict:
    """memo/create's notifications, in order, and its result: split-view rule S2. Returns the new row."""
    assert methods(notifications) == ["list/didInsert", "selection/didChange", "detail/didShow"]
    insert, selection, show = (note["params"] for note in notifications)
    memo = result_of(response)["memo"]
    assert (memo["text"], memo["title"], memo["version"]) == (text, title, 1)
    assert insert["index"] == 0
    row = insert["row"]
    assert (row["id"], row["title"], row["preview"], row["modifiedAt"]) == \
        (memo["id"], title, preview, memo["modifiedAt"])
    assert selection == {"id": memo["id"], "index": 0}
    assert show == {"memo": memo, "editable": True}
    return row


def check_list(notifications: list[dict], response: dict, rows: list[dict]) -> None:
    assert notifications == []
    assert result_of(response) == {"total": len(rows), "rows": rows}


def check_unknown_method(notifications: list[dict], response: dict) -> None:
    """The error reached the client as an error, with the code and data of section 9, and nothing else."""
    assert notifications == []
    error = response.get("error")
    assert error is not None, f"{UNKNOWN_METHOD} was answered with a result: {response}"
    assert error["code"] == -32601
    assert isinstance(error["message"], str) and error["message"]
    assert error["data"] == {"method": UNKNOWN_METHOD}


def check_session(report: dict) -> None:
    found, exit_code = exchanges(report)
    assert [method for method, _, _ in found] == \
        ["initialize", "memo/create", "memo/list", UNKNOWN_METHOD, "memo/create", "memo/list", "shutdown"]
    initialize, create_1, list_1, unknown, create_2, list_2, shutdown = \
        ((notifications, response) for _, notifications, response in found)

    check_initialize(*initialize)
    # `initialized` on an empty store clears the detail pane (rule S1), before anything memo/create causes.
    notifications, response = create_1
    assert notifications[:1] == [{"notification": "detail/didClear", "params": {"editable": False}}]
    shopping = check_create(notifications[1:], response, SHOPPING, "Shopping", "milk eggs")
    check_list(*list_1, [shopping])
    check_unknown_method(*unknown)
    groceries = check_create(*create_2, GROCERIES, "장보기 목록", "우유 2통 계란 한 판")
    check_list(*list_2, [groceries, shopping])
    notifications, response = shutdown
    assert notifications == [] and result_of(response) is None
    assert exit_code == 0


# ---------------------------------------------------------------------------------------------------
# The tests
# ---------------------------------------------------------------------------------------------------


def test_python_lsp_jsonrpc(tmp_path):
    require_tool(importlib.util.find_spec("pylsp_jsonrpc"), "python-lsp-jsonrpc", "pip install python-lsp-jsonrpc")
    check_session(run_python_client(server_command(tmp_path), session_steps("python-lsp-jsonrpc"), tmp_path))


def test_neovim_vim_lsp_rpc(tmp_path):
    require_tool(shutil.which("nvim"), "Neovim", "apt-get install neovim")
    script = json.dumps(str(DRIVERS / "session.lua"), ensure_ascii=False)  # a JSON string is a Lua string
    argv = ["nvim", "--headless", "-u", "NONE", "-i", "NONE", "-n", "-c", f"lua dofile({script})"]
    check_session(run_driver(argv, session_steps("neovim vim.lsp.rpc"), tmp_path))


def test_emacs_jsonrpc_el(tmp_path):
    require_tool(shutil.which("emacs"), "Emacs", "apt-get install emacs-nox")
    argv = ["emacs", "--batch", "-Q", "-l", str(DRIVERS / "session.el")]
    check_session(run_driver(argv, session_steps("emacs jsonrpc.el"), tmp_path))

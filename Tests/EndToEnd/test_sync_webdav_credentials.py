"""What `cloudnotes sync` with a WebDAV remote prints (one error line on failure, never a log line), and
where its credentials come from (the environment, a netrc file) against Apache with Basic auth: a wrong
password fails with exit 1 and says so, and a password never shows (output, server log, store), nor a
URL with one in it."""

from __future__ import annotations

import base64
import json
import re

import pytest

from cnsupport.cli import Cli
from cnsupport.dav_http import propfind
from cnsupport.dav_kinds import ApacheDav, dav_server_fixture
from cnsupport.dav_servers import free_port
from cnsupport.remote import read_remote

# ---------------------------------------------------------------------------------------------------
# What the shell prints
# ---------------------------------------------------------------------------------------------------

LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\dT\S+ (trace|debug|info|notice|warning|error|critical) ")


def test_a_failed_sync_prints_one_error_line_and_a_clean_one_no_log_lines(dav_url, two_stores):
    """The shell's interface: a failure prints one `cloudnotes: error: ...` line on stderr, exit 1; and
    `sync --json` prints its JSON; neither shows the sync engine's log lines."""
    a, _ = two_stores
    a.new("Printed\nonce")
    problems = []
    run = a.run("sync", "--remote", dav_url, "--json")
    assert run.code == 0 and json.loads(run.out)["published"] == 1, run
    if [line for line in run.err.splitlines() if LOG_LINE.match(line)]:
        problems.append(f"a successful `sync --json` wrote log lines on stderr: {run.err!r}")
    a.ok("sync", "--remote", f"http://127.0.0.1:{free_port()}/dav/nobody/", "--status")
    run = a.run("sync", env={"CLOUDNOTES_REMOTE_TIMEOUT": "2"})
    assert run.code == 1 and run.out == "", run
    if not (run.err.startswith("cloudnotes: error: ") and run.err.count("\n") == 1):
        problems.append(f"a failed sync should write one error line on stderr, wrote: {run.err!r}")
    assert not problems, "\n".join(problems)


def test_a_remote_that_refuses_connections_fails_fast(two_stores):
    """Nothing listens on the port: the sync fails at once with the reason, rather than retrying until the
    request timeout. That timeout is an hour here: a sync that waited for it would outlive the command's
    guard against a hang (two minutes), and fail the test whatever the machine's speed."""
    a, _ = two_stores
    a.new("Nowhere to go")
    a.ok("sync", "--remote", f"http://127.0.0.1:{free_port()}/dav/nobody/", "--status")
    run = a.fails("sync", env={"CLOUDNOTES_REMOTE_TIMEOUT": "3600"}, timeout=120)
    assert "refused" in run.err.lower(), run.err


# ---------------------------------------------------------------------------------------------------
# Credentials (Apache with Basic auth)
# ---------------------------------------------------------------------------------------------------

USER = "sync-tester"
PASSWORD = "Hunter2-zx81-PLUGH-unique-4711"
TOKEN = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
WRONG = "Wrong-pass-Xyzzy-9000-unique"
WRONG_TOKEN = base64.b64encode(f"{USER}:{WRONG}".encode()).decode()
SECRETS = (PASSWORD, TOKEN, WRONG, WRONG_TOKEN)


apache_auth = dav_server_fixture("apache_auth", ApacheDav, "module", auth=(USER, PASSWORD))


@pytest.fixture
def auth_url(apache_auth) -> str:
    """A fresh collection on the Apache that asks for USER and PASSWORD."""
    return apache_auth.new_collection()


def assert_no_secret(text: str | bytes, where: str) -> None:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    for secret in SECRETS:
        assert secret not in text, f"{where} shows a credential ({secret[:6]}…): {text[-2000:]}"


def store_bytes(cli: Cli) -> bytes:
    return b"".join(p.read_bytes() for p in cli.store.parent.glob(cli.store.name + "*") if p.is_file())


def test_credentials_from_the_environment(auth_url, two_stores):
    a, b = two_stores
    env = {"CLOUDNOTES_REMOTE_USER": USER, "CLOUDNOTES_REMOTE_PASSWORD": PASSWORD}
    memo = a.new("Behind a password\nyes")
    outputs = [a.sync_run(auth_url, env=env)]
    assert outputs[0].code == 0, outputs[0].err
    outputs.append(b.sync_run(auth_url, env=env))
    assert outputs[1].code == 0, outputs[1].err
    assert b.texts() == {memo: "Behind a password\nyes"}
    outputs.append(a.run("sync", "--status", env=env))
    outputs.append(a.run("sync", env=env))                  # the human-readable report too
    assert outputs[-1].code == 0, outputs[-1].err
    for run in outputs:
        assert_no_secret(run.both, "cloudnotes sync's output")
    assert_no_secret(store_bytes(a), "the store file")
    read_remote(auth_url, auth=(USER, PASSWORD), published_by={a.status()["device"]})


@pytest.mark.parametrize("where", ["NETRC", "HOME"])
def test_credentials_from_a_netrc_file(auth_url, two_stores, where):
    a, b = two_stores
    netrc = f"machine example.org login someone password other\nmachine 127.0.0.1 login {USER} password {PASSWORD}\n"
    if where == "NETRC":
        path = a.home / "credentials" / "my-netrc"
        path.parent.mkdir()
        env = {"NETRC": str(path)}
    else:
        path = a.home / ".netrc"
        env = {}
    path.write_text(netrc)
    path.chmod(0o600)
    memo = a.new("Netrc\nworks")
    run = a.sync_run(auth_url, env=env)
    assert run.code == 0, run.err
    assert_no_secret(run.both, "cloudnotes sync's output")
    # B has no credentials at all: refused, with a message that says where credentials come from
    run = b.fails("sync", "--remote", auth_url)
    assert "credentials" in run.err and "CLOUDNOTES_REMOTE_USER" in run.err, run.err
    (b.home / ".netrc").write_text(netrc)
    (b.home / ".netrc").chmod(0o600)
    b.sync()
    assert b.texts() == {memo: "Netrc\nworks"}


@pytest.mark.parametrize("source", ["environment", "netrc"])
def test_a_wrong_password_fails_with_exit_1_and_says_so_without_showing_it(auth_url, two_stores, source):
    a, _ = two_stores
    a.new("Not published\nwith a wrong password")
    if source == "environment":
        env = {"CLOUDNOTES_REMOTE_USER": USER, "CLOUDNOTES_REMOTE_PASSWORD": WRONG}
    else:
        (a.home / ".netrc").write_text(f"machine 127.0.0.1\n  login {USER}\n  password {WRONG}\n")
        env = {}
    run = a.fails("sync", "--remote", auth_url, env=env)
    assert "credentials" in run.err, run.err
    assert_no_secret(run.both, "a refused sync's output")
    status = a.run("sync", "--status", "--json", env=env)
    assert_no_secret(status.both, "sync --status")
    assert json.loads(status.out)["state"] == "failed" and "credentials" in json.loads(status.out)["lastError"]
    assert_no_secret(store_bytes(a), "the store file")
    assert propfind(auth_url, auth=(USER, PASSWORD)) == [], "nothing was written"


def test_the_server_never_logs_or_sends_a_password(auth_url, servers, tmp_root):
    """`cloudnotes serve --log-file` at trace level: wrong password, then right password, then a URL with
    credentials in it: neither password, nor the Basic token, reaches the log, stdout or stderr."""
    log = tmp_root / "logs" / "server.log"
    log.parent.mkdir()
    store = tmp_root / "served" / "notes.sqlite"
    home = tmp_root / "served-home"
    home.mkdir()
    args = ["--log-file", str(log), "--log-level", "trace", "--sync-interval", "0"]

    wrong = servers.start(store, args=args, env={"HOME": str(home), "CLOUDNOTES_REMOTE_USER": USER,
                                                 "CLOUDNOTES_REMOTE_PASSWORD": WRONG})
    wrong.initialize()
    wrong.create("Served memo\nsynced by the server")
    status = wrong.call("sync/configure", {"remote": auth_url, "intervalSeconds": 0})
    assert status["remote"] == auth_url
    _, response = wrong.request("sync/now", {"workDoneToken": "wrong-1"}, timeout=60)
    error = response.get("error")
    assert error and error["code"] == -33006 and error["data"]["reason"] == "unauthorized", response
    assert "credentials" in error["message"], error
    # a URL with credentials is refused, and not repeated
    _, response = wrong.request("sync/configure", {"remote": auth_url.replace("http://", f"http://{USER}:{PASSWORD}@")})
    assert response.get("error", {}).get("code") == -32602, response
    assert wrong.call("sync/status")["remote"] == auth_url
    wrong.shutdown_and_exit()

    right = servers.start(store, args=args, env={"HOME": str(home), "CLOUDNOTES_REMOTE_USER": USER,
                                                 "CLOUDNOTES_REMOTE_PASSWORD": PASSWORD})
    right.initialize()
    notes, result = right.call_notes("sync/now", {"workDoneToken": "right-1"}, timeout=60)
    # The server's own sync at start may have published the memo before this one ran: either way it is out.
    assert result["status"]["state"] == "idle" and result["status"]["pendingChanges"] == 0, result
    assert "lastError" not in result["status"], result
    progress = [n["params"]["value"]["kind"] for n in notes if n["method"] == "$/progress"
                and n["params"]["token"] == "right-1"]
    assert progress[0] == "begin" and progress[-1] == "end", progress
    right.shutdown_and_exit()

    for server in (wrong, right):
        assert_no_secret(json.dumps(server.received), "the server's stdout")
        assert_no_secret(server.stderr, "the server's stderr")
    text = log.read_text(errors="replace")
    assert "sync" in text, "the log was written"
    assert_no_secret(text, "the server's log file")
    assert_no_secret(store_bytes(Cli(store)), "the store file")


def test_a_url_with_credentials_is_refused_without_echoing_them(auth_url, two_stores):
    a, _ = two_stores
    for bad in (auth_url.replace("http://", f"http://{USER}:{PASSWORD}@"),
                auth_url.replace("http://", f"http://:{PASSWORD}@"),
                auth_url.replace("http://", f"http://{USER}:{PASSWORD}@") + "?x=1"):
        run = a.fails("sync", "--remote", bad)
        assert_no_secret(run.both, "a refused URL's error")
        assert "credentials" in run.err, run.err
    assert "remote" not in a.status(), "nothing was recorded"
    assert_no_secret(store_bytes(a), "the store file")

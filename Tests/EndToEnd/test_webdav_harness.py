"""Self-test of the WebDAV harness (`cnsupport.dav_http`, `dav_servers`, `dav_kinds`, `fault_proxy`): the
servers behave as the sync tests will assume, and every fault of `FaultProxy` really happens.  If one of
these fails, a failing sync test says nothing about sync.

Both servers run once per session (fixtures `apache_dav`, `nginx_dav`); each test gets a fresh collection.
"""

from __future__ import annotations

import http.client
import os
import socket
import time

import pytest

from cnsupport import dav_servers
from cnsupport.dav_http import Reply, http_request, propfind
from cnsupport.dav_kinds import ApacheDav, NginxDav, dav_available, dav_server_fixture
from cnsupport.dav_servers import DAV_PREFIX, DavStartError, DavUnavailable

PAYLOAD = bytes(range(256)) * 40          # every byte value, 10 KiB
CREDENTIALS = ("sync-user", "s3cret pass")


def put(url: str, data: bytes, **options) -> int:
    return http_request("PUT", url, data, **options).status


def get(url: str, **options) -> Reply:
    return http_request("GET", url, **options)


def wait_until(condition, seconds: float = 60.0) -> bool:
    """Poll for something a server does just after answering (a fault may race the check); `seconds` only
    guards against a hang."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


# ---------------------------------------------------------------------------------------------------
# The servers
# ---------------------------------------------------------------------------------------------------

def test_put_then_get_returns_the_bytes(dav_collection):
    server, url = dav_collection
    assert put(url + "note.bin", PAYLOAD) == 201
    reply = get(url + "note.bin")
    assert (reply.status, reply.body) == (200, PAYLOAD)
    assert server.path_of(url + "note.bin").read_bytes() == PAYLOAD


def test_put_overwrites(dav_url):
    assert put(dav_url + "note.txt", b"first version, longer") == 201
    assert put(dav_url + "note.txt", b"second") == 204
    assert get(dav_url + "note.txt").body == b"second"


def test_mkcol_nested(dav_collection):
    server, url = dav_collection
    assert http_request("MKCOL", url + "a/").status == 201
    assert http_request("MKCOL", url + "a/b/").status == 201
    assert http_request("MKCOL", url + "a/").status == 405, "MKCOL on an existing collection"
    assert http_request("MKCOL", url + "x/y/").status == 409, "MKCOL with a missing parent"
    assert (server.path_of(url) / "a" / "b").is_dir()
    [entry] = propfind(url + "a/")
    assert (entry.name, entry.is_collection) == ("b", True)


def test_propfind_depth_1_lists_the_children_only(dav_url):
    put(dav_url + "one.txt", b"1")
    put(dav_url + "two words é.txt".replace(" ", "%20").replace("é", "%C3%A9"), b"22")
    http_request("MKCOL", dav_url + "sub/")
    put(dav_url + "sub/deeper.txt", b"333")
    entries = {e.name: e for e in propfind(dav_url)}
    assert sorted(entries) == ["one.txt", "sub", "two words é.txt"]
    assert entries["sub"].is_collection and not entries["one.txt"].is_collection
    assert (entries["one.txt"].length, entries["two words é.txt"].length) == (1, 2)
    assert all(e.last_modified for e in entries.values())
    assert entries["sub"].path == urlpath(dav_url) + "sub/"


def urlpath(url: str) -> str:
    return url[url.index(DAV_PREFIX):]


def test_get_missing_is_404(dav_url):
    assert get(dav_url + "missing.txt").status == 404


def test_delete_removes(dav_url):
    put(dav_url + "gone.txt", b"x")
    assert http_request("DELETE", dav_url + "gone.txt").status == 204
    assert get(dav_url + "gone.txt").status == 404


def test_conditional_put_strong_on_apache_ignored_by_nginx(dav_collection):
    """The premise of the sync tests: Apache refuses a PUT whose precondition fails, nginx stores it anyway."""
    server, url = dav_collection
    put(url + "c.txt", b"v1")
    expected = {"apache": 412, "nginx": 204}[server.kind]
    assert http_request("PUT", url + "c.txt", b"v2", {"If-Match": '"not-the-etag"'}).status == expected
    assert http_request("PUT", url + "c.txt", b"v3", {"If-None-Match": "*"}).status == expected
    assert get(url + "c.txt").header("ETag"), "both send an ETag on GET"


def test_propfind_hides_dot_files_on_nginx_only(dav_collection):
    """nginx's dav_ext leaves names starting with "." out of PROPFIND (GET still serves them)."""
    server, url = dav_collection
    put(url + ".hidden.txt", b"x")
    assert get(url + ".hidden.txt").status == 200
    assert [e.name for e in propfind(url)] == {"apache": [".hidden.txt"], "nginx": []}[server.kind]


def test_new_collections_are_empty_and_distinct(dav_collection):
    server, url = dav_collection
    other = server.new_collection()
    assert other != url and other.endswith("/")
    put(url + "only-here.txt", b"x")
    assert propfind(other) == []
    assert put(other + "written-by-server.txt", b"ok") == 201, "the workers can write a collection made on disk"


def test_files_written_behind_the_back_can_be_replaced(dav_collection):
    server, url = dav_collection
    server.write_file(url + "planted.txt", b"planted")
    assert get(url + "planted.txt").body == b"planted"
    assert put(url + "planted.txt", b"replaced") == 204


apache_with_auth = dav_server_fixture("apache_with_auth", ApacheDav, "module", auth=CREDENTIALS)


def test_apache_basic_auth(apache_with_auth):
    url = apache_with_auth.new_collection()
    refused = http_request("PUT", url + "secret.txt", b"x")
    assert refused.status == 401
    assert refused.header("WWW-Authenticate").startswith("Basic")
    assert http_request("GET", url + "secret.txt", auth=(CREDENTIALS[0], "wrong")).status == 401
    assert put(url + "secret.txt", b"x", auth=CREDENTIALS) == 201
    assert get(url + "secret.txt", auth=CREDENTIALS).body == b"x"
    assert [e.name for e in propfind(url, auth=CREDENTIALS)] == ["secret.txt"]


def test_credentials_pass_through_the_proxy(apache_with_auth, fault_proxy_factory):
    proxy = fault_proxy_factory(apache_with_auth.new_collection())
    refused = http_request("PUT", proxy.url + "p.txt", b"x")
    assert (refused.status, refused.header("WWW-Authenticate")[:5]) == (401, "Basic")
    assert http_request("PUT", proxy.url + "p.txt", b"x", auth=CREDENTIALS).status == 201


def test_missing_binary_is_an_error_not_a_skip(tmp_path, monkeypatch):
    assert dav_available("apache") and dav_available("nginx")
    monkeypatch.setattr(NginxDav, "binary", tmp_path / "no-nginx")
    assert not dav_available("nginx")
    with pytest.raises(DavUnavailable, match="apt-get install"):
        NginxDav(tmp_path).start()


def test_a_server_that_cannot_start_says_why(tmp_path, monkeypatch):
    good_config = ApacheDav.config_text
    monkeypatch.setattr(ApacheDav, "config_text", lambda self: good_config(self) + "NoSuchDirective on\n")
    with pytest.raises(DavStartError, match="NoSuchDirective"):
        ApacheDav(tmp_path).start()


def test_start_retries_when_the_port_was_taken(tmp_path, monkeypatch):
    """Apache only: nginx retries a failed bind by itself for 2.5 s first (same code path here afterwards)."""
    with socket.socket() as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        ports = iter([squatter.getsockname()[1]])
        real_free_port = dav_servers.free_port
        monkeypatch.setattr(dav_servers, "free_port", lambda: next(ports, None) or real_free_port())
        with ApacheDav(tmp_path) as server:
            assert server.port != squatter.getsockname()[1]
            assert http_request("OPTIONS", server.url).status == 200


def group_members(group: int) -> list[int]:
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getpgid(int(entry)) == group:
                    members.append(int(entry))
            except ProcessLookupError:
                pass
    return members


@pytest.mark.parametrize("kind", [ApacheDav, NginxDav])
def test_stop_kills_master_and_workers(kind, tmp_path):
    server = kind(tmp_path).start()
    group = server.process.pid
    assert len(group_members(group)) >= 2, "a master and at least one worker"
    server.stop()
    assert group_members(group) == []
    with pytest.raises(OSError):
        http_request("GET", f"http://127.0.0.1:{server.port}/", timeout=1)


# ---------------------------------------------------------------------------------------------------
# FaultProxy
# ---------------------------------------------------------------------------------------------------

@pytest.fixture
def proxied(dav_collection, fault_proxy_factory):
    """`(server, direct url, proxy, proxied url)` for a fresh collection, once per server kind."""
    server, url = dav_collection
    proxy = fault_proxy_factory(url, hang_seconds=3.0)
    return server, url, proxy, proxy.url_for(url)


def test_proxy_forwards_and_counts_on_one_kept_alive_connection(proxied):
    server, url, proxy, purl = proxied
    connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=5)
    path = urlpath(purl)
    replies, sockets = [], set()
    for method, target, body in [("PUT", "f.txt", PAYLOAD), ("GET", "f.txt", None), ("MKCOL", "sub/", None),
                                 ("PROPFIND", "", None), ("GET", "nope", None)]:
        connection.request(method, path + target, body=body, headers={"Depth": "1"} if method == "PROPFIND" else {})
        response = connection.getresponse()
        replies.append((response.status, response.read(), response.getheader("Location")))
        sockets.add(id(connection.sock))
    assert len(sockets) == 1, "the proxy keeps the client connection alive"
    assert [r[0] for r in replies] == [201, 200, 201, 207, 404]
    assert replies[1][1] == PAYLOAD
    assert replies[0][2] == purl + "f.txt", "Location points at the proxy"
    assert proxy.requests == [("PUT", path + "f.txt"), ("GET", path + "f.txt"), ("MKCOL", path + "sub/"),
                              ("PROPFIND", path), ("GET", path + "nope")]
    assert proxy.count("GET") == 2 and proxy.count(path_contains="f.txt") == 2
    proxy.reset_counts()
    assert proxy.requests == []
    assert proxy.errors == []


def test_proxy_forwards_chunked_uploads(proxied):
    server, url, proxy, purl = proxied
    connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=5)
    connection.request("PUT", urlpath(purl) + "chunked.bin", body=iter([PAYLOAD[:1000], PAYLOAD[1000:]]),
                       encode_chunked=True)
    assert connection.getresponse().status == 201
    assert server.path_of(url + "chunked.bin").read_bytes() == PAYLOAD


def put_with_fault(proxied, fault: str, **options) -> tuple:
    """A PUT of PAYLOAD to f.txt through the proxy, whose next PUT suffers `fault`: (its status, or the error
    it raised; what the server then holds at f.txt, or None)."""
    server, url, proxy, purl = proxied
    proxy.fail(fault, method="PUT")
    try:
        outcome = put(purl + "f.txt", PAYLOAD, **options)
    except (ConnectionError, TimeoutError) as error:
        outcome = error
    path = server.path_of(url + "f.txt")
    return outcome, path.read_bytes() if path.exists() else None


def test_cut_before_leaves_the_server_untouched(proxied):
    server, url, proxy, purl = proxied
    rule = proxy.fail("cut_before", method="PUT")
    with pytest.raises(ConnectionError):
        put(purl + "f.txt", PAYLOAD)
    assert rule.fired == 1
    assert not server.path_of(url + "f.txt").exists()
    assert put(purl + "f.txt", PAYLOAD) == 201, "times=1: the next PUT goes through"


def test_cut_after_leaves_the_server_changed(proxied):
    outcome, stored = put_with_fault(proxied, "cut_after")
    assert isinstance(outcome, ConnectionError) and stored == PAYLOAD


def test_http500_does_not_forward(proxied):
    assert put_with_fault(proxied, "http500") == (500, None)


def test_http500_after_forwards(proxied):
    assert put_with_fault(proxied, "http500_after") == (500, PAYLOAD)


def test_timeout_holds_the_request(proxied):
    # No answer, and the connection held open, until the client gave up.
    outcome, stored = put_with_fault(proxied, "timeout", timeout=1.0)
    assert isinstance(outcome, TimeoutError) and stored is None
    assert [event[:2] for event in proxied[2].events] == [("timeout", "PUT")]


def test_timeout_after_loses_the_answer(proxied):
    outcome, stored = put_with_fault(proxied, "timeout_after", timeout=1.0)
    assert isinstance(outcome, TimeoutError) and stored == PAYLOAD


def test_truncate_response_sends_half_the_body(proxied):
    server, url, proxy, purl = proxied
    put(url + "f.bin", PAYLOAD)
    proxy.fail("truncate_response", method="GET")
    connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=5)
    connection.request("GET", urlpath(purl) + "f.bin")
    response = connection.getresponse()
    assert (response.status, response.getheader("Content-Length")) == (200, str(len(PAYLOAD)))
    with pytest.raises(http.client.IncompleteRead) as cut:
        response.read()
    assert cut.value.partial == PAYLOAD[: len(PAYLOAD) // 2]


def test_truncate_request_stores_no_partial_file(proxied):
    """Both servers spool an upload and move it into place only when complete: a half upload leaves the old
    file (or no file) and no temporary file behind."""
    server, url, proxy, purl = proxied
    put(url + "old.bin", b"old contents")
    proxy.fail("truncate_request", method="PUT", times=None)
    for name in ("old.bin", "new.bin"):
        with pytest.raises(ConnectionError):
            put(purl + name, PAYLOAD)
    folder = server.path_of(url)
    assert wait_until(lambda: sorted(os.listdir(folder)) == ["old.bin"]), os.listdir(folder)
    assert (folder / "old.bin").read_bytes() == b"old contents"
    assert get(url + "new.bin").status == 404
    assert [e[0] for e in proxy.events] == ["truncate_request"] * 2
    assert all(f"sent {len(PAYLOAD) // 2} of {len(PAYLOAD)}" in e[3] for e in proxy.events)


def test_rules_after_and_times(proxied):
    server, url, proxy, purl = proxied
    put(url + "a.txt", b"a")
    rule = proxy.fail("http500", method="GET", path_contains="a.txt", after=2, times=2)
    statuses = [get(purl + "a.txt").status for _ in range(5)]
    assert statuses == [200, 200, 500, 500, 200]
    assert (rule.seen, rule.fired) == (5, 2)
    assert put(purl + "a.txt", b"b") == 204, "other methods are not matched"
    assert get(purl + "other.txt").status == 404, "other paths are not matched"


def test_rules_forever_and_clear(proxied):
    server, url, proxy, purl = proxied
    proxy.fail("http500", times=None)
    assert [get(purl + "x").status for _ in range(3)] == [500, 500, 500]
    proxy.clear()
    assert get(purl + "x").status == 404
    assert proxy.count() == 4


def test_first_due_rule_wins_and_every_matching_rule_counts(proxied):
    server, url, proxy, purl = proxied
    first = proxy.fail("http500", method="GET")
    second = proxy.fail("cut_before", method="GET")
    assert get(purl + "x").status == 500
    with pytest.raises(ConnectionError):
        get(purl + "x")
    assert get(purl + "x").status == 404
    assert (first.seen, first.fired, second.seen, second.fired) == (3, 1, 3, 1)


def test_http500_keeps_the_client_connection(proxied):
    server, url, proxy, purl = proxied
    proxy.fail("http500")
    connection = http.client.HTTPConnection("127.0.0.1", proxy.port, timeout=5)
    for expected in (500, 404):
        connection.request("GET", urlpath(purl) + "x")
        response = connection.getresponse()
        response.read()
        assert response.status == expected


def test_unknown_fault_is_rejected(proxied):
    server, url, proxy, purl = proxied
    with pytest.raises(ValueError):
        proxy.fail("explode")

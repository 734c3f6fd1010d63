"""Fixtures of the end-to-end tests of the `cloudnotes` server; the harness itself is the `cnsupport`
package beside this file.

Servers are spawned with pipes and spoken to in either framing (the `framing` fixture); EVERY message a
server writes to stdout is checked (framed exactly as documented, valid UTF-8, a JSON-RPC 2.0 object,
valid against `protocol/protocol.schema.json`), and a message that is not that fails the test. A server
started with `initialize(mirror=True)` (the `client` fixture) keeps a front end's mirror, so that a test
can assert after each request that it holds exactly what `memo/list` returns (split-view rule S7).
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from cnsupport.cli import Cli
from cnsupport.dav_kinds import ApacheDav, NginxDav, dav_server_fixture
from cnsupport.dav_servers import DavServer
from cnsupport.fault_proxy import FaultProxy
from cnsupport.framing import FRAMINGS, LINES
from cnsupport.paths import BINARY, REPO  # noqa: F401  (test_benchmark.py imports them from here)
from cnsupport.s3_servers import MotoS3, RcloneS3, s3_server_fixture
from cnsupport.server import Server, ServerFactory
from cnsupport.session import make_entries
from cnsupport.syncing import make_store

try:  # Hypothesis' example database, kept between runs, under the git-ignored .build/: not in $TMPDIR,
    # which the tests must leave as they found it (scripts/test checks)
    from hypothesis.configuration import set_hypothesis_home_dir
    set_hypothesis_home_dir(REPO / ".build" / "hypothesis" / "end-to-end")
except ImportError:  # pragma: no cover - older Hypothesis
    pass


@pytest.fixture
def tmp_root():
    path = Path(tempfile.mkdtemp(prefix="cloudnotes-e2e-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


# -- servers ------------------------------------------------------------------------------------------

@pytest.fixture
def framing() -> str:
    """The framing `servers` start servers in: JSON lines.

    A module whose every test must hold in both framings sets `framing = each_framing`, which runs each
    of its tests once per framing; a single test names its own with
    `@pytest.mark.parametrize("framing", [...])`. The rest of the suite stays in one framing: what
    does not depend on framing need not run twice."""
    return LINES


@pytest.fixture(params=FRAMINGS)
def each_framing(request) -> str:
    """Each framing in turn: see `framing`."""
    return request.param


@pytest.fixture
def servers(tmp_root, framing):
    """A factory of servers on a fresh temporary store; every stdout message of every server is checked."""
    factory = ServerFactory(tmp_root, framing)
    yield factory
    violations = factory.close()
    assert not violations, "the server wrote to stdout what is not a valid protocol message:\n" + "\n".join(
        violations[:10])


@pytest.fixture
def server(servers) -> Server:
    """A started, not yet initialized server on a fresh store."""
    return servers.start()


@pytest.fixture
def client(servers) -> Server:
    """An initialized server (en-US, UTC) with a front end's mirror attached, on a fresh store."""
    srv = servers.start()
    srv.initialize(mirror=True)
    return srv


@pytest.fixture(scope="session")
def big_import_file(tmp_path_factory) -> Path:
    """A file of 100,000 generated memos in the original app's import format."""
    path = tmp_path_factory.mktemp("big") / "memos-100k.json"
    path.write_text(json.dumps(make_entries(100_000, "bulk", 1_500_000_000)), encoding="utf-8")
    return path


# -- the shell and sync -------------------------------------------------------------------------------

@pytest.fixture
def shell(tmp_root) -> Cli:
    """The shell subcommands on a fresh store, named by CLOUDNOTES_STORE."""
    return Cli(tmp_root / "notes.sqlite", store_flag=False)


@pytest.fixture
def two_stores(tmp_root) -> tuple[Cli, Cli]:
    """Two stores (devices), A and B, each in a folder of its own that is also its HOME."""
    return make_store(tmp_root, "a"), make_store(tmp_root, "b")


@pytest.fixture
def remote(tmp_root) -> Path:
    """An empty folder remote."""
    path = tmp_root / "remote"
    path.mkdir()
    return path


# -- WebDAV ---------------------------------------------------------------------------------------------

# One Apache and one nginx for the whole session; tests isolate themselves with `new_collection()`.
apache_dav = dav_server_fixture("apache_dav", ApacheDav)
nginx_dav = dav_server_fixture("nginx_dav", NginxDav)


@pytest.fixture(params=["apache", "nginx"])
def dav_collection(request):
    """`(server, url)`: a fresh empty collection, once on Apache and once on nginx."""
    server: DavServer = request.getfixturevalue(f"{request.param}_dav")
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name)[:80] + f"-{time.monotonic_ns()}"
    url = server.new_collection(name)
    yield server, url
    shutil.rmtree(server.path_of(url), ignore_errors=True)


@pytest.fixture
def dav_url(dav_collection) -> str:
    """The URL of a fresh empty collection, once on Apache and once on nginx."""
    return dav_collection[1]


# -- S3 ------------------------------------------------------------------------------------------------

moto_s3 = s3_server_fixture("moto_s3", MotoS3)
rclone_s3 = s3_server_fixture("rclone_s3", RcloneS3)


@pytest.fixture(params=["moto", "rclone"])
def s3_bucket(request):
    """`(server, bucket)`: a fresh empty bucket, once on moto's server and once on rclone's."""
    server = request.getfixturevalue(f"{request.param}_s3")
    return server, server.new_bucket()


@pytest.fixture
def fault_proxy_factory():
    """`make(upstream_url, **options) -> FaultProxy`; every proxy made is stopped after the test."""
    proxies: list[FaultProxy] = []

    def make(upstream: str, **options) -> FaultProxy:
        proxies.append(FaultProxy(upstream, **options))
        return proxies[-1]

    yield make
    for proxy in proxies:
        proxy.stop()

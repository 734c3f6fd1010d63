"""WebDAV servers and a fault-injecting proxy for the sync end-to-end tests.

Sync has to work against real servers, not against a mock that agrees with our own reading of RFC 4918, so
the tests run two of them: Apache's mod_dav (a strong server: ETags on GET and in PROPFIND, honours If-Match and
If-None-Match with 412) and nginx with the dav_ext module (a deliberately weak one: ignores If-Match on PUT, no
ETag in PROPFIND).  Neither sends an ETag in its answer to a PUT.
Each runs as a child process group on a free port of 127.0.0.1, with its configuration, pid file, logs,
lock database and data all in one temporary folder, so no system service is ever started and `stop()` can
kill master and workers together.

`FaultProxy` sits between a client and such a server and breaks chosen requests the ways a network does:
a connection cut before or after the server acted, a 500, a hang, a response or an upload cut in half.

The binaries come from Debian (see `DEBIAN_PACKAGES`); `scripts/test` installs them.  A missing binary is
an error, never a skip, so that CI cannot go green without having run the sync tests.
"""

from __future__ import annotations

import base64
import grp
import hashlib
import http.client
import itertools
import os
import pwd
import re
import shutil
import signal
import socket
import socketserver
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import urllib.parse
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

__all__ = [
    "DEBIAN_PACKAGES", "DavUnavailable", "DavStartError", "Reply", "DavEntry", "http_request", "propfind",
    "DavServer", "ApacheDav", "NginxDav", "dav_available", "FaultProxy", "FaultRule", "FAULTS",
    "apache_dav", "nginx_dav", "dav_collection", "fault_proxy_factory",
]

DEBIAN_PACKAGES = ("apache2", "apache2-utils", "nginx", "libnginx-mod-http-dav-ext")
APACHE_BINARY = Path("/usr/sbin/apache2")
APACHE_MODULES = Path("/usr/lib/apache2/modules")
NGINX_BINARY = Path("/usr/sbin/nginx")
NGINX_DAV_EXT = Path("/usr/lib/nginx/modules/ngx_http_dav_ext_module.so")
WORKER_USER = "www-data"     # httpd refuses to serve as root; nginx is given the same user for symmetry
DAV_PREFIX = "/dav/"          # every server serves its `root` folder under this path
START_TIMEOUT = 15.0
STOP_TIMEOUT = 5.0
DAV_NS = "DAV:"


class DavUnavailable(RuntimeError):
    """A server binary or module is missing: the test command must install `DEBIAN_PACKAGES`."""


class DavStartError(RuntimeError):
    """A server did not come up; the message carries its error log."""


# ---------------------------------------------------------------------------------------------------
# A small HTTP client, so tests and fixtures speak to the servers the same way
# ---------------------------------------------------------------------------------------------------

@dataclass
class Reply:
    status: int
    reason: str
    headers: http.client.HTTPMessage
    body: bytes

    def header(self, name: str) -> str | None:
        return self.headers.get(name)


def basic_auth(auth: tuple[str, str]) -> str:
    """The `Authorization` value for HTTP Basic credentials."""
    token = base64.b64encode(f"{auth[0]}:{auth[1]}".encode()).decode("ascii")
    return f"Basic {token}"


def _target(url: str) -> tuple[str, int, str]:
    """Host, port and request target (path plus query) of an http:// URL."""
    parts = urllib.parse.urlsplit(url)
    if parts.scheme != "http":
        raise ValueError(f"only http:// URLs are supported: {url}")
    path = parts.path or "/"
    if parts.query:
        path += "?" + parts.query
    return parts.hostname or "127.0.0.1", parts.port or 80, path


def http_request(method: str, url: str, body: bytes | None = None, headers: dict[str, str] | None = None, *,
                 auth: tuple[str, str] | None = None, timeout: float = 10.0) -> Reply:
    """One request on a fresh connection; connection errors propagate so fault tests can see them."""
    host, port, path = _target(url)
    all_headers = dict(headers or {})
    if auth is not None:
        all_headers.setdefault("Authorization", basic_auth(auth))
    connection = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        connection.request(method, path, body=body, headers=all_headers)
        response = connection.getresponse()
        return Reply(response.status, response.reason, response.msg, response.read())
    finally:
        connection.close()


@dataclass
class DavEntry:
    """One `<D:response>` of a PROPFIND: `path` is the decoded URL path, `name` the last segment."""
    href: str
    path: str
    name: str
    is_collection: bool
    length: int | None
    etag: str | None
    last_modified: str | None


PROPFIND_BODY = (b'<?xml version="1.0" encoding="utf-8"?>\n<D:propfind xmlns:D="DAV:"><D:prop>'
                 b'<D:resourcetype/><D:getcontentlength/><D:getetag/><D:getlastmodified/>'
                 b'</D:prop></D:propfind>')


def propfind(url: str, depth: int | str = 1, *, auth: tuple[str, str] | None = None,
             include_self: bool = False) -> list[DavEntry]:
    """The members of a collection (by default without the collection itself), whatever the server's XML style."""
    reply = http_request("PROPFIND", url, PROPFIND_BODY, {"Depth": str(depth), "Content-Type": "application/xml"},
                         auth=auth)
    if reply.status != 207:
        raise AssertionError(f"PROPFIND {url} answered {reply.status} {reply.reason}: {reply.body[:500]!r}")
    own_path = urllib.parse.unquote(urllib.parse.urlsplit(url).path).rstrip("/")
    entries = [_entry(element) for element in ET.fromstring(reply.body).iter(f"{{{DAV_NS}}}response")]
    return [e for e in entries if include_self or e.path.rstrip("/") != own_path]


def _entry(response: ET.Element) -> DavEntry:
    href = (response.findtext(f"{{{DAV_NS}}}href") or "").strip()
    path = urllib.parse.unquote(urllib.parse.urlsplit(href).path)
    ok_props = [p for s in response.iter(f"{{{DAV_NS}}}propstat") if " 200 " in (s.findtext(f"{{{DAV_NS}}}status") or "")
                for p in s.iter(f"{{{DAV_NS}}}prop")]

    def prop(name: str) -> ET.Element | None:
        return next((found for p in ok_props if (found := p.find(f"{{{DAV_NS}}}{name}")) is not None), None)

    resource_type = prop("resourcetype")
    is_collection = resource_type is not None and resource_type.find(f"{{{DAV_NS}}}collection") is not None
    length = prop("getcontentlength")
    etag, modified = prop("getetag"), prop("getlastmodified")
    return DavEntry(href=href, path=path, name=path.rstrip("/").rsplit("/", 1)[-1], is_collection=is_collection,
                    length=int(length.text) if length is not None and (length.text or "").strip() else None,
                    etag=etag.text if etag is not None else None,
                    last_modified=modified.text if modified is not None else None)


# ---------------------------------------------------------------------------------------------------
# Servers
# ---------------------------------------------------------------------------------------------------

def free_port() -> int:
    """A port nobody listens on right now (a race remains, which `start()` absorbs by retrying)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _worker_account() -> pwd.struct_passwd | None:
    """Whom the server's workers run as: www-data when we are root (httpd refuses root), else ourselves."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(WORKER_USER)
    except KeyError as error:
        raise DavUnavailable(f"user {WORKER_USER} is missing (the apache2 / nginx packages create it)") from error


def _traversable_by(folder: Path, account: pwd.struct_passwd) -> bool:
    """Whether `account` may enter `folder` and each of its parents (pytest's root temp folder is 0700)."""
    groups = {account.pw_gid} | {g.gr_gid for g in grp.getgrall() if account.pw_name in g.gr_mem}
    for each in [folder, *folder.parents]:
        st = each.stat()
        bit = 0o100 if st.st_uid == account.pw_uid else 0o010 if st.st_gid in groups else 0o001
        if not st.st_mode & bit:
            return False
    return True


def _give(path: Path, account: pwd.struct_passwd | None) -> None:
    """Hand a folder or file we made to the worker account, so the server can write there."""
    if account is not None:
        os.chown(path, account.pw_uid, account.pw_gid)


def dav_available(kind: str) -> bool:
    """Whether the binaries and modules for `kind` ("apache" or "nginx") are installed."""
    return not _SERVER_CLASSES[kind].missing_files()


class DavServer:
    """A WebDAV server of one kind in a folder of its own: subclasses say how to configure and run it.

    Layout of `base`: conf/ (configuration), logs/ (error log, access log, console output), run/ (pid file),
    lock/ (lock database), tmp/ (upload temp files), htdocs/dav/ = `root`, served at `url`.
    """

    kind = ""
    binary = Path()
    ready_server_header = ""   # the `Server` header that proves our process, not a stranger, took the port

    def __init__(self, tmpdir: Path | str | None = None, auth: tuple[str, str] | None = None):
        self._require_binaries()
        self.auth = auth
        self.account = _worker_account()
        self.base, self._base_is_ours = self._make_base(tmpdir)
        self.root = self.base / "htdocs" / DAV_PREFIX.strip("/")
        self.port = 0
        self.process: subprocess.Popen | None = None
        self._collections = itertools.count(1)
        self._lay_out()

    # -- what subclasses provide --------------------------------------------------------------------

    @classmethod
    def required_files(cls) -> list[Path]:
        return [cls.binary]

    def config_text(self) -> str:
        raise NotImplementedError

    def command(self) -> list[str]:
        raise NotImplementedError

    def prepare(self) -> None:
        """Extra files the configuration refers to (a password file, say)."""

    # -- layout -------------------------------------------------------------------------------------

    def _make_base(self, tmpdir: Path | str | None) -> tuple[Path, bool]:
        """A fresh folder under `tmpdir` when the workers can reach it, else one under the system temp folder.

        As root the workers are www-data, who cannot enter pytest's 0700 temp root; the second result says
        whether `stop()` must delete the folder because pytest will not.
        """
        if tmpdir is not None:
            Path(tmpdir).mkdir(parents=True, exist_ok=True)
            if self.account is None or _traversable_by(Path(tmpdir), self.account):
                return Path(tempfile.mkdtemp(prefix=f"{self.kind}-", dir=tmpdir)), False
        base = Path(tempfile.mkdtemp(prefix=f"cloudnotes-{self.kind}-"))
        base.chmod(0o755)
        return base, True

    def _lay_out(self) -> None:
        self.base.chmod(0o755)
        for name in ("conf", "logs", "run"):
            (self.base / name).mkdir(mode=0o755)
        for folder in (self.base / "lock", self.base / "tmp", self.base / "htdocs", self.root):
            folder.mkdir(mode=0o755)
            _give(folder, self.account)

    @property
    def conf_path(self) -> Path:
        return self.base / "conf" / f"{self.kind}.conf"

    @property
    def logs(self) -> Path:
        return self.base / "logs"

    @property
    def url(self) -> str:
        """Base URL of the served, writable collection (ends in "/")."""
        if not self.port:
            raise RuntimeError(f"{self.kind} is not started")
        return f"http://127.0.0.1:{self.port}{DAV_PREFIX}"

    # -- life cycle ---------------------------------------------------------------------------------

    @classmethod
    def missing_files(cls) -> list[Path]:
        return [path for path in cls.required_files() if not path.exists()]

    @classmethod
    def _require_binaries(cls) -> None:
        """Fail loudly, never skip: CI must not pass without having run the WebDAV tests."""
        missing = cls.missing_files()
        if missing:
            raise DavUnavailable(f"{cls.kind} WebDAV server unavailable, missing {', '.join(map(str, missing))}: "
                                 f"apt-get install -y {' '.join(DEBIAN_PACKAGES)}")

    def start(self) -> "DavServer":
        """Start on a free port and return once the server answers HTTP; retry if the port got taken meanwhile.

        On failure the error (with the server's logs) is raised after everything is cleaned up, since callers
        usually write `server = ApacheDav(...).start()` and keep no handle to stop it.
        """
        self._require_binaries()
        self.prepare()
        for attempt in range(5):
            self._clear_logs()   # so that only this attempt's words decide whether to retry
            self.port = free_port()
            self.conf_path.write_text(self.config_text(), encoding="utf-8")
            self._spawn()
            try:
                self._wait_ready()
                return self
            except DavStartError:
                self._kill()
                if "Address already in use" not in self.error_log() or attempt == 4:
                    self.stop()
                    raise
        raise AssertionError("unreachable")

    def stop(self) -> None:
        """Kill the whole process group (master and workers) and, if pytest will not, delete the folder."""
        self._kill()
        if self._base_is_ours:
            shutil.rmtree(self.base, ignore_errors=True)

    def __enter__(self) -> "DavServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _spawn(self) -> None:
        console = open(self.logs / "console.log", "ab")
        try:
            self.process = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=console,
                                            stderr=subprocess.STDOUT, cwd=self.base, start_new_session=True)
        finally:
            console.close()

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise DavStartError(self._failure(f"exited with status {self.process.returncode}"))
            try:
                # a short timeout: whoever holds the port may be a stranger that never answers
                reply = http_request("OPTIONS", f"http://127.0.0.1:{self.port}{DAV_PREFIX}", timeout=0.3)
            except OSError:
                time.sleep(0.05)
                continue
            if self.ready_server_header in (reply.header("Server") or ""):
                return
            raise DavStartError(self._failure(f"port {self.port} answered as {reply.header('Server')!r}"))
        raise DavStartError(self._failure(f"did not answer within {START_TIMEOUT:.0f} s"))

    def _failure(self, what: str) -> str:
        return f"{self.kind} on 127.0.0.1:{self.port} {what}; its logs:\n{self.error_log()}"

    def _kill(self) -> None:
        """SIGTERM the group, wait for the master, then make sure no worker of the group outlives it."""
        if self.process is None:
            return
        group = self.process.pid     # start_new_session: the group id is the master's pid
        _signal_group(group, signal.SIGTERM)
        try:
            self.process.wait(STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            _signal_group(group, signal.SIGKILL)
            self.process.wait()
        deadline = time.monotonic() + STOP_TIMEOUT
        while _signal_group(group, 0) and time.monotonic() < deadline:
            time.sleep(0.05)
        _signal_group(group, signal.SIGKILL)
        self.process = None

    def _clear_logs(self) -> None:
        for name in ("console.log", "error.log"):
            (self.logs / name).unlink(missing_ok=True)

    def error_log(self) -> str:
        """Everything the server said: console output and error log (for failure messages)."""
        texts = []
        for name in ("console.log", "error.log"):
            path = self.logs / name
            if path.exists():
                texts.append(f"--- {name}\n{path.read_text(errors='replace')[-20000:]}")
        return "\n".join(texts) or "(no logs)"

    # -- helpers for tests --------------------------------------------------------------------------

    def new_collection(self, name: str | None = None) -> str:
        """A fresh empty collection (made on disk, owned by the workers); returns its URL ending in "/"."""
        parts = Path((name or f"c{next(self._collections)}").strip("/")).parts
        (self.root / Path(*parts)).mkdir(parents=True, exist_ok=False)
        for depth in range(1, len(parts) + 1):
            _give(self.root.joinpath(*parts[:depth]), self.account)
        return self.url_of(Path(*parts)) + "/"

    def url_of(self, path: Path | str) -> str:
        """The URL of a file or folder under `root`."""
        relative = Path(path).relative_to(self.root) if Path(path).is_absolute() else Path(path)
        return self.url + ("" if relative == Path(".") else urllib.parse.quote(relative.as_posix()))

    def path_of(self, url: str) -> Path:
        """The file behind a URL of this server (to inspect or corrupt it behind the server's back)."""
        path = urllib.parse.unquote(urllib.parse.urlsplit(url).path)
        if not path.startswith(DAV_PREFIX):
            raise ValueError(f"{url} is not under {DAV_PREFIX}")
        return self.root / path[len(DAV_PREFIX):]

    def write_file(self, url_or_relative: str, data: bytes) -> Path:
        """Put a file in place behind the server's back, owned by the workers so they may replace it."""
        path = self.path_of(url_or_relative) if "://" in url_or_relative else self.root / url_or_relative
        path.write_bytes(data)
        _give(path, self.account)
        return path

    def request(self, method: str, url: str, body: bytes | None = None, headers: dict[str, str] | None = None,
                **options) -> Reply:
        """`http_request` with this server's credentials."""
        options.setdefault("auth", self.auth)
        return http_request(method, url, body, headers, **options)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.url if self.port else 'stopped'} root={self.root}>"


def _signal_group(group: int, signum: int) -> bool:
    """Signal a process group; False once it has no member left."""
    try:
        os.killpg(group, signum)
        return True
    except ProcessLookupError:
        return False


class ApacheDav(DavServer):
    """Apache httpd 2.4 with mod_dav / mod_dav_fs, optionally behind HTTP Basic auth (`auth=(user, password)`)."""

    kind = "apache"
    binary = APACHE_BINARY
    ready_server_header = "Apache"
    modules = ("mpm_event", "authz_core", "dav", "dav_fs", "dav_lock")
    auth_modules = ("auth_basic", "authn_core", "authn_file", "authz_user")

    @classmethod
    def required_files(cls) -> list[Path]:
        return [cls.binary] + [APACHE_MODULES / f"mod_{m}.so" for m in cls.modules + cls.auth_modules]

    def command(self) -> list[str]:
        return [str(self.binary), "-f", str(self.conf_path), "-DFOREGROUND"]

    @property
    def password_file(self) -> Path:
        return self.base / "conf" / "htpasswd"

    def prepare(self) -> None:
        """An htpasswd file in the `{SHA}` format, which needs no htpasswd binary (test credentials only)."""
        if self.auth:
            user, password = self.auth
            digest = base64.b64encode(hashlib.sha1(password.encode()).digest()).decode("ascii")
            self.password_file.write_text(f"{user}:{{SHA}}{digest}\n", encoding="utf-8")
            self.password_file.chmod(0o644)

    def config_text(self) -> str:
        modules = self.modules + (self.auth_modules if self.auth else ())
        load = "\n".join(f"LoadModule {m}_module {APACHE_MODULES}/mod_{m}.so" for m in modules)
        user = f"User {self.account.pw_name}\nGroup {self.account.pw_name}" if self.account else ""
        if self.auth:
            access = (f'AuthType Basic\n    AuthName "CloudNotes test"\n    AuthBasicProvider file\n'
                      f'    AuthUserFile "{self.password_file}"\n    Require valid-user')
        else:
            access = "Require all granted"
        return f"""# Written by Tests/EndToEnd/webdav.py: a private Apache serving {self.root}
ServerRoot "{self.base}"
ServerName 127.0.0.1
Listen 127.0.0.1:{self.port}
PidFile "{self.base}/run/apache2.pid"
DefaultRuntimeDir "{self.base}/run"
ErrorLog "{self.logs}/error.log"
LogLevel warn
LogFormat "%h \\"%r\\" %>s %b" short
CustomLog "{self.logs}/access.log" short
{user}
{load}
StartServers 1
ServerLimit 2
ThreadsPerChild 16
MaxRequestWorkers 32
MinSpareThreads 4
MaxSpareThreads 32
KeepAlive On
KeepAliveTimeout 30
MaxKeepAliveRequests 0
DocumentRoot "{self.base}/htdocs"
DavLockDB "{self.base}/lock/DavLock"
<Directory />
    AllowOverride None
    Require all denied
</Directory>
<Directory "{self.root}">
    Dav On
    {access}
</Directory>
"""


class NginxDav(DavServer):
    """nginx with its dav module plus dav_ext for PROPFIND: the weak server (no If-Match, no ETag on PUT)."""

    kind = "nginx"
    binary = NGINX_BINARY
    ready_server_header = "nginx"

    def __init__(self, tmpdir: Path | str | None = None):
        super().__init__(tmpdir)

    @classmethod
    def required_files(cls) -> list[Path]:
        return [cls.binary, NGINX_DAV_EXT]

    def command(self) -> list[str]:
        return [str(self.binary), "-p", f"{self.base}/", "-c", str(self.conf_path), "-e", str(self.logs / "error.log")]

    def config_text(self) -> str:
        user = f"user {self.account.pw_name} {self.account.pw_name};" if self.account else ""
        temp = "\n".join(f"    {kind}_temp_path {self.base}/tmp/{kind};"
                         for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
        return f"""# Written by Tests/EndToEnd/webdav.py: a private nginx serving {self.root}
load_module {NGINX_DAV_EXT};
daemon off;
master_process on;
worker_processes 1;
{user}
pid {self.base}/run/nginx.pid;
error_log {self.logs}/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log {self.logs}/access.log;
{temp}
    default_type application/octet-stream;
    keepalive_timeout 30s;
    server {{
        listen 127.0.0.1:{self.port};
        server_name 127.0.0.1;
        client_max_body_size 0;
        location {DAV_PREFIX} {{
            root {self.base}/htdocs;
            dav_methods PUT DELETE MKCOL COPY MOVE;
            dav_ext_methods PROPFIND OPTIONS;
            dav_access user:rw group:rw all:r;
            create_full_put_path on;
            autoindex on;
        }}
    }}
}}
"""


_SERVER_CLASSES: dict[str, type[DavServer]] = {"apache": ApacheDav, "nginx": NginxDav}


# ---------------------------------------------------------------------------------------------------
# Fixtures (conftest.py imports them)
# ---------------------------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def apache_dav(tmp_path_factory):
    """One Apache for the whole session; tests isolate themselves with `new_collection()`."""
    server = ApacheDav(tmp_path_factory.mktemp("apache-dav")).start()
    yield server
    server.stop()


@pytest.fixture(scope="session")
def nginx_dav(tmp_path_factory):
    """One nginx for the whole session; tests isolate themselves with `new_collection()`."""
    server = NginxDav(tmp_path_factory.mktemp("nginx-dav")).start()
    yield server
    server.stop()


def _collection_name(request) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", request.node.name)[:80] + f"-{time.monotonic_ns()}"


@pytest.fixture(params=["apache", "nginx"])
def dav_collection(request):
    """`(server, url)`: a fresh empty collection, once on Apache and once on nginx."""
    server: DavServer = request.getfixturevalue(f"{request.param}_dav")
    url = server.new_collection(_collection_name(request))
    yield server, url
    shutil.rmtree(server.path_of(url), ignore_errors=True)


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


# ---------------------------------------------------------------------------------------------------
# Fault-injecting reverse proxy
# ---------------------------------------------------------------------------------------------------

FAULTS = frozenset({
    "cut_before",         # close the client connection without forwarding
    "cut_after",          # forward (the server acts), then close the client connection without any response
    "http500",            # answer 500 without forwarding
    "http500_after",      # forward (the server acts), then answer 500 instead of the real response
    "timeout",            # hold the connection unanswered for hang_seconds (or until stop), then close it
    "timeout_after",      # forward (the server acts), then hang like "timeout": the answer is lost
    "truncate_response",  # forward, send the real status and headers, half the body, then close
    "truncate_request",   # send the server half the body under the full Content-Length, close; then the client
})

# Headers that describe one connection, not the message (RFC 9110 7.6.1), plus framing the proxy redoes itself.
HOP_BY_HOP = frozenset({"connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding",
                        "upgrade", "expect", "host", "content-length", "proxy-authorization", "proxy-authenticate"})
NO_BODY_STATUSES = frozenset({204, 304})


@dataclass
class FaultRule:
    """Which requests a fault hits: `seen` counts matching requests, `fired` the faults applied."""
    fault: str
    method: str | None = None
    path_contains: str | None = None
    times: int | None = 1
    after: int = 0
    seen: int = 0
    fired: int = 0

    def matches(self, method: str, path: str) -> bool:
        return ((self.method is None or self.method.upper() == method.upper())
                and (self.path_contains is None or self.path_contains in path))

    def count(self) -> bool:
        """Count one matching request; True if the fault is due for it."""
        self.seen += 1
        return self.seen > self.after and (self.times is None or self.fired < self.times)


@dataclass
class _Upstream:
    """The server's answer, read whole."""
    status: int
    reason: str
    headers: list[tuple[str, str]]
    body: bytes
    will_close: bool


class FaultProxy:
    """A threaded HTTP/1.1 reverse proxy on 127.0.0.1 in front of one upstream server, breaking chosen requests.

    Rules (`fail`) are checked in the order they were added: every rule that matches a request counts it (for
    `after`), and the first one with a fault due applies it; a later rule that was due keeps its fault for its next
    match.  `requests` lists every request received, faulted or not.
    """

    def __init__(self, upstream: str, *, hang_seconds: float = 30.0, upstream_timeout: float = 60.0):
        parts = urllib.parse.urlsplit(upstream)
        if parts.scheme != "http" or not parts.port:
            raise ValueError(f"upstream must be an http:// URL with a port: {upstream}")
        self.upstream_netloc = parts.netloc
        self.upstream_address = (parts.hostname, parts.port)
        self.hang_seconds = hang_seconds
        self.upstream_timeout = upstream_timeout
        self.events: list[tuple] = []     # (fault, method, path, what happened) for every fault applied
        self.errors: list[str] = []       # unexpected exceptions inside the proxy
        self._requests: list[tuple[str, str]] = []
        self._rules: list[FaultRule] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._server = _ProxyServer(self)
        self.port = self._server.server_address[1]
        self.base_url = f"http://127.0.0.1:{self.port}"
        self.url = self.url_for(upstream)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.1},
                                        name=f"FaultProxy:{self.port}", daemon=True)
        self._thread.start()

    # -- mapping ------------------------------------------------------------------------------------

    def url_for(self, upstream_url: str) -> str:
        """The proxy URL with the same path as `upstream_url` (which must point at the upstream server)."""
        parts = urllib.parse.urlsplit(upstream_url)
        if parts.netloc != self.upstream_netloc:
            raise ValueError(f"{upstream_url} is not on the upstream {self.upstream_netloc}")
        return urllib.parse.urlunsplit(parts._replace(netloc=f"127.0.0.1:{self.port}"))

    def _to_upstream(self, value: str) -> str:
        return value.replace(f"//127.0.0.1:{self.port}/", f"//{self.upstream_netloc}/")

    def _to_client(self, value: str) -> str:
        return value.replace(f"//{self.upstream_netloc}/", f"//127.0.0.1:{self.port}/")

    # -- rules and records --------------------------------------------------------------------------

    def fail(self, fault: str, method: str | None = None, path_contains: str | None = None, times: int | None = 1,
             after: int = 0) -> FaultRule:
        """Apply `fault` to matching requests after skipping `after` of them, `times` times (None: forever)."""
        if fault not in FAULTS:
            raise ValueError(f"unknown fault {fault!r}; known: {sorted(FAULTS)}")
        rule = FaultRule(fault, method, path_contains, times, after)
        with self._lock:
            self._rules.append(rule)
        return rule

    def clear(self) -> None:
        with self._lock:
            self._rules.clear()

    @property
    def requests(self) -> list[tuple[str, str]]:
        """A snapshot of every `(method, path)` received, in order of arrival."""
        with self._lock:
            return list(self._requests)

    def count(self, method: str | None = None, path_contains: str | None = None) -> int:
        matcher = FaultRule("", method, path_contains)
        return sum(matcher.matches(m, p) for m, p in self.requests)

    def reset_counts(self) -> None:
        with self._lock:
            self._requests.clear()

    def _admit(self, method: str, path: str) -> str | None:
        """Record a request and pick its fault, atomically so concurrent requests count exactly once."""
        with self._lock:
            self._requests.append((method, path))
            chosen = None
            for rule in self._rules:
                if rule.matches(method, path) and rule.count() and chosen is None:
                    rule.fired += 1
                    chosen = rule.fault
            return chosen

    def _event(self, fault: str, method: str, path: str, what: str) -> None:
        with self._lock:
            self.events.append((fault, method, path, what))

    # -- life cycle ---------------------------------------------------------------------------------

    def _track(self, connection: socket.socket, alive: bool) -> None:
        with self._lock:
            (self._connections.add if alive else self._connections.discard)(connection)

    def stop(self) -> None:
        """Stop serving, release hanging requests and close every client connection."""
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        with self._lock:
            connections = list(self._connections)
        for connection in connections:
            try:
                connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self._thread.join(5)

    def __enter__(self) -> "FaultProxy":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


class _ProxyServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False   # stop() must not wait for a client's idle kept-alive connection
    request_queue_size = 64

    def __init__(self, proxy: FaultProxy):
        self.proxy = proxy
        super().__init__(("127.0.0.1", 0), _ProxyHandler)

    def server_bind(self) -> None:
        """Bind without HTTPServer's reverse DNS look-up of the address."""
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = self.server_address[:2]

    def handle_error(self, request, client_address) -> None:
        """Peers that hang up are part of the game; anything else is kept for the test to see, not printed."""
        error = sys.exc_info()[1]
        if not isinstance(error, (ConnectionError, TimeoutError)):
            with self.proxy._lock:
                self.proxy.errors.append(traceback.format_exc())


class _ClientGone(Exception):
    """The client hung up while sending its request."""


class _UpstreamFailed(Exception):
    """The upstream server could not be reached or broke off: the client gets a 502."""


class _ProxyHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body leave in separate writes: without TCP_NODELAY, Nagle's algorithm and the client's delayed
    # ACK hold every answer ~40 ms, which made a proxied sync 3 times slower than a direct one.
    disable_nagle_algorithm = True
    timeout = 120.0          # an idle kept-alive client connection is dropped after this
    server: _ProxyServer

    def setup(self) -> None:
        super().setup()
        self.proxy = self.server.proxy
        self.upstream: http.client.HTTPConnection | None = None
        self.proxy._track(self.connection, True)

    def finish(self) -> None:
        self._close_upstream()
        self.proxy._track(self.connection, False)
        try:
            super().finish()
        except OSError:
            pass

    def log_message(self, format: str, *args) -> None:
        """Silent: test output stays readable."""

    def __getattr__(self, name: str):
        """Every method (PROPFIND, MKCOL, ...) goes through the same proxy logic."""
        if name.startswith("do_"):
            return self._proxy_request
        raise AttributeError(name)

    # -- the request --------------------------------------------------------------------------------

    def _proxy_request(self) -> None:
        try:
            body = self._read_body()
        except _ClientGone:
            self.close_connection = True
            return
        except ValueError as error:
            self.send_error(400, f"bad request body: {error}")
            return
        fault = self.proxy._admit(self.command, self.path)
        try:
            getattr(self, f"_fault_{fault}" if fault else "_pass")(body)
        except _UpstreamFailed as failure:
            if fault:
                self.proxy._event(fault, self.command, self.path, f"upstream failed: {failure}")
            self._answer(502, f"FaultProxy: upstream failed: {failure}\n".encode())

    def _read_body(self) -> bytes | None:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return self._read_chunked()
        length = self.headers.get("Content-Length")
        if length is None:
            return None
        data = self.rfile.read(int(length))
        if len(data) < int(length):
            raise _ClientGone()
        return data

    def _read_chunked(self) -> bytes:
        chunks = []
        while True:
            line = self.rfile.readline(65537)
            if not line:
                raise _ClientGone()
            size = int(line.split(b";", 1)[0].strip(), 16)
            if size == 0:
                break
            chunk = self.rfile.read(size + 2)
            if len(chunk) < size + 2:
                raise _ClientGone()
            chunks.append(chunk[:size])
        while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
            pass   # trailers: dropped
        return b"".join(chunks)

    # -- faults -------------------------------------------------------------------------------------

    def _pass(self, body: bytes | None) -> None:
        self._relay(self._exchange(body))

    def _fault_cut_before(self, body: bytes | None) -> None:
        self._hang_up("cut_before", "closed before forwarding")

    def _fault_cut_after(self, body: bytes | None) -> None:
        reply = self._exchange(body)
        self._hang_up("cut_after", f"upstream answered {reply.status}, client got nothing")

    def _fault_http500(self, body: bytes | None) -> None:
        self.proxy._event("http500", self.command, self.path, "500 without forwarding")
        self._answer(500, b"fault injected by FaultProxy: not forwarded\n")

    def _fault_http500_after(self, body: bytes | None) -> None:
        reply = self._exchange(body)
        self.proxy._event("http500_after", self.command, self.path, f"upstream answered {reply.status}, client got 500")
        self._answer(500, b"fault injected by FaultProxy: forwarded, answer replaced\n")

    def _fault_timeout(self, body: bytes | None) -> None:
        self._hang("timeout", "held without forwarding")

    def _fault_timeout_after(self, body: bytes | None) -> None:
        reply = self._exchange(body)
        self._hang("timeout_after", f"upstream answered {reply.status}, client held")

    def _fault_truncate_response(self, body: bytes | None) -> None:
        reply = self._exchange(body)
        self._relay(reply, truncate=True)
        self._hang_up("truncate_response", f"sent {len(reply.body) // 2} of {len(reply.body)} body bytes")

    def _fault_truncate_request(self, body: bytes | None) -> None:
        what = self._send_half(body or b"")
        self._hang_up("truncate_request", what)

    def _hang_up(self, fault: str, what: str) -> None:
        self.proxy._event(fault, self.command, self.path, what)
        self.close_connection = True

    def _hang(self, fault: str, what: str) -> None:
        self.proxy._event(fault, self.command, self.path, what)
        self.proxy._stopping.wait(self.proxy.hang_seconds)
        self.close_connection = True

    # -- upstream -----------------------------------------------------------------------------------

    def _upstream_headers(self, body: bytes | None) -> list[tuple[str, str]]:
        """The client's headers minus hop-by-hop ones, with Host and Destination pointing at the upstream."""
        listed = {token.strip().lower() for token in self.headers.get("Connection", "").split(",")}
        headers = [("Host", self.proxy.upstream_netloc)]
        for name, value in self.headers.items():
            lower = name.lower()
            if lower in HOP_BY_HOP or lower in listed:
                continue
            headers.append((name, self.proxy._to_upstream(value) if lower == "destination" else value))
        if body is not None:
            headers.append(("Content-Length", str(len(body))))
        return headers

    def _connect(self) -> http.client.HTTPConnection:
        host, port = self.proxy.upstream_address
        return http.client.HTTPConnection(host, port, timeout=self.proxy.upstream_timeout)

    def _close_upstream(self) -> None:
        if self.upstream is not None:
            self.upstream.close()
            self.upstream = None

    def _exchange(self, body: bytes | None) -> _Upstream:
        """Forward the request on this client's kept-alive upstream connection; once more on a fresh one if the
        server had closed the idle connection (the usual keep-alive race; nothing was received)."""
        reused = self.upstream is not None
        try:
            try:
                return self._exchange_once(body)
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                self._close_upstream()
                if not reused:
                    raise
                return self._exchange_once(body)
        except (OSError, http.client.HTTPException) as error:
            self._close_upstream()
            raise _UpstreamFailed(repr(error)) from error

    def _exchange_once(self, body: bytes | None) -> _Upstream:
        if self.upstream is None:
            self.upstream = self._connect()
        self._send_head(self.upstream, body)
        if body:
            self.upstream.send(body)
        response = self.upstream.getresponse()
        data = response.read()
        reply = _Upstream(response.status, response.reason, response.getheaders(), data, response.will_close)
        if response.will_close:
            self._close_upstream()
        return reply

    def _send_head(self, connection: http.client.HTTPConnection, body: bytes | None) -> None:
        connection.putrequest(self.command, self.path, skip_host=True, skip_accept_encoding=True)
        for name, value in self._upstream_headers(body):
            connection.putheader(name, value)
        connection.endheaders()

    def _send_half(self, body: bytes) -> str:
        """Half the body under the full Content-Length on a fresh connection, then end our side and wait for the
        server's reaction, so that it has dealt with the broken upload before the client hears anything."""
        connection = self._connect()
        try:
            try:
                self._send_head(connection, body)
                connection.send(body[: len(body) // 2])
            except OSError as error:
                raise _UpstreamFailed(repr(error)) from error
            connection.sock.shutdown(socket.SHUT_WR)
            connection.sock.settimeout(min(5.0, self.proxy.upstream_timeout))
            try:
                response = connection.getresponse()
                response.read()
                reaction = f"upstream answered {response.status}"
            except (OSError, http.client.HTTPException) as error:
                reaction = f"upstream gave no answer ({type(error).__name__})"
            return f"sent {len(body) // 2} of {len(body)} body bytes; {reaction}"
        finally:
            connection.close()

    # -- answers ------------------------------------------------------------------------------------

    def _relay(self, reply: _Upstream, truncate: bool = False) -> None:
        """The upstream's status and headers as they were; the body re-framed with its Content-Length."""
        bodiless = self.command == "HEAD" or reply.status in NO_BODY_STATUSES or reply.status < 200
        self.send_response_only(reply.status, reply.reason)
        for name, value in reply.headers:
            lower = name.lower()
            if lower == "content-length" and bodiless:
                self.send_header(name, value)
            elif lower not in HOP_BY_HOP:
                self.send_header(name, self.proxy._to_client(value) if lower == "location" else value)
        if not bodiless:
            self.send_header("Content-Length", str(len(reply.body)))
        if reply.will_close:
            self.send_header("Connection", "close")
        self.end_headers()
        if not bodiless:
            self.wfile.write(reply.body[: len(reply.body) // 2] if truncate else reply.body)

    def _answer(self, status: int, text: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(text)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(text)

"""WebDAV servers for the sync tests, each in a folder of its own (the kinds, Apache and nginx, are in
`dav_kinds`).

Sync has to work against real servers, not against a mock that agrees with our own reading of RFC 4918.
Each server runs as a child process group on a free port of 127.0.0.1, with its configuration, pid file,
logs, lock database and data all in one temporary folder, so no system service is ever started and
`stop()` can kill master and workers together.

The binaries come from Debian (see `DEBIAN_PACKAGES`); `scripts/test` installs them.  A missing binary is
an error, never a skip, so that CI cannot go green without having run the sync tests.
"""

from __future__ import annotations

import grp
import itertools
import os
import pwd
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.parse
from pathlib import Path

from .dav_http import Reply, http_request

DEBIAN_PACKAGES = ("apache2", "apache2-utils", "nginx", "libnginx-mod-http-dav-ext")
APACHE_BINARY = Path("/usr/sbin/apache2")
APACHE_MODULES = Path("/usr/lib/apache2/modules")
NGINX_BINARY = Path("/usr/sbin/nginx")
NGINX_DAV_EXT = Path("/usr/lib/nginx/modules/ngx_http_dav_ext_module.so")
WORKER_USER = "www-data"     # httpd refuses to serve as root; nginx is given the same user for symmetry
DAV_PREFIX = "/dav/"          # every server serves its `root` folder under this path
START_TIMEOUT = 15.0
STOP_TIMEOUT = 5.0


class DavUnavailable(RuntimeError):
    """A server binary or module is missing: the test command must install `DEBIAN_PACKAGES`."""


class DavStartError(RuntimeError):
    """A server did not come up; the message carries its error log."""



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

    def give_tree(self, root: Path) -> None:
        """Hands a folder restored behind the server's back, and all it holds, to the workers."""
        for folder, _, files in os.walk(root):
            _give(Path(folder), self.account)
            for name in files:
                _give(Path(folder) / name, self.account)

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

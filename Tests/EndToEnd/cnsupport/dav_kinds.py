"""The two kinds of WebDAV server the sync tests run: Apache's mod_dav (strong: ETags, If-Match) and nginx
with dav_ext (weak: no If-Match on PUT, no ETag in PROPFIND), each a `DavServer` configured its own way;
and a pytest fixture for a server of either kind."""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path

import pytest

from .dav_servers import APACHE_BINARY, APACHE_MODULES, DAV_PREFIX, NGINX_BINARY, NGINX_DAV_EXT, DavServer


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
        return f"""# Written by Tests/EndToEnd/cnsupport/dav_servers.py: a private Apache serving {self.root}
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
        return f"""# Written by Tests/EndToEnd/cnsupport/dav_servers.py: a private nginx serving {self.root}
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


def dav_server_fixture(name: str, kind: type[DavServer], scope: str = "session", **options):
    """A pytest fixture `name`: a server of `kind` (made with `options`) running for `scope`."""
    @pytest.fixture(scope=scope, name=name)
    def running(tmp_path_factory):
        with kind(tmp_path_factory.mktemp(name), **options) as server:
            yield server
    running.__doc__ = f"A {kind.kind} WebDAV server for the {scope}, in a folder of its own."
    return running


_SERVER_CLASSES: dict[str, type[DavServer]] = {"apache": ApacheDav, "nginx": NginxDav}


def dav_available(kind: str) -> bool:
    """Whether the binaries and modules for `kind` ("apache" or "nginx") are installed."""
    return not _SERVER_CLASSES[kind].missing_files()

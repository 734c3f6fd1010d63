"""A small HTTP client, so that the tests and the fixtures speak to the WebDAV servers the same way:
one request on a fresh connection (`http_request`), and the members of a collection (`propfind`),
whatever the server's XML style."""

from __future__ import annotations

import base64
import http.client
import urllib.parse
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler

DAV_NS = "DAV:"


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


class AnyMethodHandler(BaseHTTPRequestHandler):
    """A silent HTTP request handler that answers every method (GET, PUT, PROPFIND, MKCOL, ...) with
    `handle_any`."""

    def handle_any(self) -> None:
        raise NotImplementedError

    def log_message(self, format: str, *args) -> None:
        """Silent: test output stays readable."""

    def __getattr__(self, name: str):
        if name.startswith("do_"):
            return self.handle_any
        raise AttributeError(name)

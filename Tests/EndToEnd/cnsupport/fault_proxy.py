"""`FaultProxy`: a reverse proxy in front of a WebDAV server that breaks chosen requests the ways a
network does: a connection cut before or after the server acted, a 500, a hang, a response or an upload
cut in half."""

from __future__ import annotations

import http.client
import socket
import socketserver
import sys
import threading
import time
import traceback
import urllib.parse
from dataclasses import dataclass
from http.server import ThreadingHTTPServer

from .dav_http import AnyMethodHandler

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


def hang_up(connections) -> None:
    """Ends both directions of every connection, whatever state each is in (a client waiting for an answer
    then sees the connection close)."""
    for connection in connections:
        try:
            connection.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


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

    def __init__(self, upstream: str, *, hang_seconds: float = 30.0, upstream_timeout: float = 60.0,
                 keep_host: bool = False):
        """`keep_host`: pass the client's Host header on as it is, so that a request signed for the proxy's
        address (S3's SigV4 signs Host) still checks upstream."""
        parts = urllib.parse.urlsplit(upstream)
        if parts.scheme != "http" or not parts.port:
            raise ValueError(f"upstream must be an http:// URL with a port: {upstream}")
        self.upstream_netloc = parts.netloc
        self.upstream_address = (parts.hostname, parts.port)
        self.keep_host = keep_host
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
        hang_up(connections)
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


class _ProxyHandler(AnyMethodHandler):
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

    # -- the request: every method (PROPFIND, MKCOL, ...) goes through the same proxy logic ------------

    def handle_any(self) -> None:
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
        self._hang_up("cut_after", f"{self._forward(body)}, client got nothing")

    def _fault_http500(self, body: bytes | None) -> None:
        self._answer_500("http500", "500 without forwarding", b"not forwarded")

    def _fault_http500_after(self, body: bytes | None) -> None:
        self._answer_500("http500_after", f"{self._forward(body)}, client got 500", b"forwarded, answer replaced")

    def _fault_timeout(self, body: bytes | None) -> None:
        self._hang_up("timeout", "held without forwarding", hold=True)

    def _fault_timeout_after(self, body: bytes | None) -> None:
        self._hang_up("timeout_after", f"{self._forward(body)}, client held", hold=True)

    def _fault_truncate_response(self, body: bytes | None) -> None:
        reply = self._exchange(body)
        self._relay(reply, truncate=True)
        self._hang_up("truncate_response", f"sent {len(reply.body) // 2} of {len(reply.body)} body bytes")

    def _fault_truncate_request(self, body: bytes | None) -> None:
        what = self._send_half(body or b"")
        self._hang_up("truncate_request", what)

    def _forward(self, body: bytes | None) -> str:
        """Forwards the request (the server acts on it) for an answer the client will not get; says what it was."""
        return f"upstream answered {self._exchange(body).status}"

    def _answer_500(self, fault: str, what: str, why: bytes) -> None:
        self.proxy._event(fault, self.command, self.path, what)
        self._answer(500, b"fault injected by FaultProxy: " + why + b"\n")

    def _hang_up(self, fault: str, what: str, hold: bool = False) -> None:
        """Closes the client's connection without an answer: at once, or after holding it for hang_seconds (or
        until stop)."""
        self.proxy._event(fault, self.command, self.path, what)
        if hold:
            self.proxy._stopping.wait(self.proxy.hang_seconds)
        self.close_connection = True

    # -- upstream -----------------------------------------------------------------------------------

    def _upstream_headers(self, body: bytes | None) -> list[tuple[str, str]]:
        """The client's headers minus hop-by-hop ones, with Host and Destination pointing at the upstream."""
        listed = {token.strip().lower() for token in self.headers.get("Connection", "").split(",")}
        headers = [] if self.proxy.keep_host else [("Host", self.proxy.upstream_netloc)]
        for name, value in self.headers.items():
            lower = name.lower()
            if (lower in HOP_BY_HOP and not (lower == "host" and self.proxy.keep_host)) or lower in listed:
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


class TriggerProxy(FaultProxy):
    """A FaultProxy that holds every request `delay` seconds (a slow network, so that a kill at a random
    moment often lands between two requests), and calls `trigger()` when it receives request number
    `trigger_at`, before forwarding it."""

    def __init__(self, *args, delay: float = 0.0, **kwargs):
        super().__init__(*args, **kwargs)
        self.delay = delay
        self.trigger_at: int | None = None
        self.trigger = None

    def _admit(self, method: str, path: str) -> str | None:
        fault = super()._admit(method, path)
        with self._lock:
            due = self.trigger is not None and len(self._requests) == self.trigger_at
            trigger = self.trigger if due else None
        if trigger is not None:
            trigger()
        if self.delay:
            time.sleep(self.delay)
        return fault

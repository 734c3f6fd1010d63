"""JSON-RPC 2.0 over JSON lines: requests, responses, notifications, cancellation and progress.

One reader thread reads every line the server writes, in order. For a notification it runs the
listeners (the mirror), then any ``$/progress`` callback, then queues the notification; for a response
it runs the response hooks and only then completes the waiting request. So by the time a caller sees a
response, everything the server said before it has been applied.

Every public method is thread-safe. Callbacks and hooks run on the reader thread: they must not wait for
a response (that would wait for the thread that is running them), which :meth:`PendingRequest.result`
refuses with a ClientError.
"""

from __future__ import annotations

import collections
import itertools
import json
import threading
import time
from typing import Any, Callable, Deque, Dict, List, Optional

from .errors import ClientError, CloudNotesError, ProtocolError, RequestTimeoutError, ServerDiedError
from .models import Notification, Progress, Token
from .transport import ServerProcess

NotificationListener = Callable[[Notification], None]
#: ``hook(request, response)``: ``response`` is the whole JSON-RPC response object.
ResponseHook = Callable[["PendingRequest", Dict[str, Any]], None]
ProgressCallback = Callable[[Progress], None]
#: ``trace(direction, message)`` with direction ``"send"`` or ``"recv"``.
Tracer = Callable[[str, Dict[str, Any]], None]

#: How many notifications are kept for callers that never drain the queue (the oldest are dropped).
DEFAULT_QUEUE_SIZE = 10_000


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def encode_message(message: Dict[str, Any]) -> bytes:
    """One compact JSON line (without the newline) for ``message``."""
    try:
        text = json.dumps(message, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        return text.encode("utf-8")
    except UnicodeEncodeError:
        # A lone surrogate cannot be UTF-8; as an escape the server can still see and refuse it (-32602).
        return json.dumps(message, ensure_ascii=True, separators=(",", ":"), allow_nan=False).encode("ascii")


class PendingRequest:
    """A request that was sent: wait for its result, or cancel it."""

    def __init__(self, connection: Connection, request_id: int, method: str, params: Optional[Dict[str, Any]],
                 on_response: Optional[ResponseHook] = None):
        self.id = request_id
        self.method = method
        self.params = params
        self._connection = connection
        self._on_response = on_response
        self._done = threading.Event()
        self._response: Optional[Dict[str, Any]] = None
        self._failure: Optional[BaseException] = None

    def done(self) -> bool:
        """True once the response (or the server's death) has arrived."""
        return self._done.is_set()

    def cancel(self) -> None:
        """Asks the server to cancel this request (``$/cancelRequest``); it still answers, with -32800."""
        if not self._done.is_set():
            self._connection.cancel(self.id)

    def response(self, timeout: Optional[float] = None, cancel_on_timeout: bool = True) -> Dict[str, Any]:
        """Waits for the whole JSON-RPC response object.

        Raises RequestTimeoutError after ``timeout`` seconds (None waits for ever), first sending a
        ``$/cancelRequest`` unless ``cancel_on_timeout`` is false, and ServerDiedError if the server ends.
        """
        if threading.current_thread() is self._connection.reader_thread:
            raise ClientError(f"cannot wait for {self.method} on the reader thread (from a callback): "
                              "it is the thread that reads the response")
        if not self._done.wait(timeout):
            if cancel_on_timeout:
                try:
                    self._connection.cancel(self.id)
                except ServerDiedError:
                    pass
            raise RequestTimeoutError(self.method, self.id, timeout if timeout is not None else 0.0)
        if self._failure is not None:
            raise self._failure
        assert self._response is not None
        return self._response

    def result(self, timeout: Optional[float] = None, cancel_on_timeout: bool = True) -> Any:
        """Waits for the result; raises CloudNotesError for an error response (see :meth:`response`)."""
        response = self.response(timeout, cancel_on_timeout)
        if "error" in response:
            raise CloudNotesError.from_response(response["error"], self.method)
        return response.get("result")

    def _complete(self, response: Optional[Dict[str, Any]], failure: Optional[BaseException] = None) -> None:
        self._response = response
        self._failure = failure
        self._done.set()


class Connection:
    """A JSON-RPC session with one server process."""

    def __init__(self, transport: ServerProcess, *, queue_size: int = DEFAULT_QUEUE_SIZE):
        self.transport = transport
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._pending: Dict[int, PendingRequest] = {}
        self._progress: Dict[Token, ProgressCallback] = {}
        self._listeners: List[NotificationListener] = []
        self._hooks: List[ResponseHook] = []
        self._queue: Deque[Notification] = collections.deque(maxlen=queue_size)
        self._queue_changed = threading.Condition(self._lock)
        self._closed = False
        self._death: Optional[ServerDiedError] = None
        self.trace: Optional[Tracer] = None
        #: Problems with what the server wrote (lines that are not messages, unmatched responses, failing
        #: callbacks). They never stop the reader; tests and careful callers look here.
        self.problems: List[str] = []
        self.reader_thread = threading.Thread(target=self._read_loop, name="cloudnotes-reader", daemon=True)

    # -- setup -------------------------------------------------------------------------------------------

    def add_listener(self, listener: NotificationListener) -> None:
        """Runs ``listener(notification)`` on the reader thread for every notification, in arrival order."""
        self._listeners.append(listener)

    def add_response_hook(self, hook: ResponseHook) -> None:
        """Runs ``hook(request, response)`` on the reader thread before each request completes."""
        self._hooks.append(hook)

    def start(self) -> None:
        """Starts the reader thread."""
        self.reader_thread.start()

    @property
    def closed(self) -> bool:
        """True once the server's output has ended."""
        return self._closed

    # -- sending -----------------------------------------------------------------------------------------

    def _send(self, message: Dict[str, Any]) -> None:
        if self._death is not None:
            raise ServerDiedError("the server has ended", self._death.returncode, self._death.stderr)
        if self.trace is not None:
            self.trace("send", message)
        self.transport.write_line(encode_message(message))

    def request(self, method: str, params: Optional[Dict[str, Any]] = None, *,
                progress: Optional[ProgressCallback] = None, on_response: Optional[ResponseHook] = None,
                ) -> PendingRequest:
        """Sends a request without waiting and returns its :class:`PendingRequest`.

        With ``progress``, a fresh ``workDoneToken`` is added to ``params`` and each ``$/progress`` under it
        is passed to ``progress`` (on the reader thread). ``on_response`` runs on the reader thread before
        the request completes, after the notifications that precede the response.
        """
        with self._lock:
            request_id = next(self._ids)
            if progress is not None:
                params = dict(params or {})
                token = f"cloudnotes-python-{request_id}"
                params["workDoneToken"] = token
                self._progress[token] = progress
            pending = PendingRequest(self, request_id, method, params, on_response)
            # Registered before it is written: the response can come back before write() returns.
            self._pending[request_id] = pending
        message: Dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
        if params is not None:
            message["params"] = params
        try:
            self._send(message)
        except BaseException:
            with self._lock:
                self._pending.pop(request_id, None)
                if params is not None:
                    self._progress.pop(params.get("workDoneToken"), None)
            raise
        return pending

    def call(self, method: str, params: Optional[Dict[str, Any]] = None, *, timeout: Optional[float] = None) -> Any:
        """Sends a request and waits for its result (see :meth:`PendingRequest.result`)."""
        return self.request(method, params).result(timeout)

    def notify(self, method: str, params: Optional[Dict[str, Any]] = None) -> None:
        """Sends a notification."""
        message: Dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self._send(message)

    def cancel(self, request_id: Token) -> None:
        """Sends ``$/cancelRequest`` for ``request_id``; harmless when that request was already answered."""
        self.notify("$/cancelRequest", {"id": request_id})

    # -- the notification queue --------------------------------------------------------------------------

    def next_notification(self, timeout: Optional[float] = None) -> Notification:
        """Removes and returns the oldest queued notification, waiting up to ``timeout`` seconds."""
        return self.wait_for_notification(None, timeout=timeout)

    def wait_for_notification(self, method: Optional[str] = None,
                              predicate: Optional[Callable[[Notification], bool]] = None,
                              timeout: Optional[float] = None) -> Notification:
        """Removes and returns the first queued notification that matches, waiting up to ``timeout`` seconds.

        A notification matches when its method is ``method`` (any when None) and ``predicate`` (if given)
        holds for it; the others stay queued. Raises RequestTimeoutError when none arrives in time, and
        ServerDiedError when the server has ended with none queued.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._queue_changed:
            while True:
                for index, note in enumerate(self._queue):
                    if (method is None or note.method == method) and (predicate is None or predicate(note)):
                        del self._queue[index]
                        return note
                if self._closed:
                    death = self._death
                    raise ServerDiedError("the server has ended and no such notification is queued",
                                          death.returncode if death else None, death.stderr if death else "")
                remaining = None if deadline is None else deadline - time.monotonic()
                if remaining is not None and remaining <= 0:
                    what = f"no {method} notification" if method else "no notification"
                    raise RequestTimeoutError(method or "", None, timeout or 0.0, f"{what} within {timeout:g} s")
                self._queue_changed.wait(remaining)

    def drain_notifications(self) -> List[Notification]:
        """Removes and returns every queued notification, oldest first."""
        with self._lock:
            notes = list(self._queue)
            self._queue.clear()
            return notes

    # -- reading -----------------------------------------------------------------------------------------

    def _problem(self, text: str) -> None:
        with self._lock:
            self.problems.append(text)

    def _read_loop(self) -> None:
        while True:
            line = self.transport.read_line()
            if not line:
                break
            if not line.strip():
                continue
            try:
                message = json.loads(line.decode("utf-8"), parse_constant=_reject_constant)
            except (UnicodeDecodeError, ValueError) as error:
                self._problem(f"stdout line is not a JSON message ({error}): {line[:200]!r}")
                continue
            if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
                self._problem(f"stdout line is not a JSON-RPC 2.0 object: {line[:200]!r}")
                continue
            if self.trace is not None:
                self._guarded("trace", self.trace, "recv", message)
            if "method" in message:
                self._on_notification(message)
            else:
                self._on_response(message)
        self._on_end()

    def _guarded(self, what: str, function: Callable[..., Any], *args: Any) -> None:
        # A failing callback must not stop the reader, or every later request would hang.
        try:
            function(*args)
        except Exception as error:  # noqa: BLE001 - reported, never swallowed silently
            self._problem(f"{what} raised {error.__class__.__name__}: {error}")

    def _on_notification(self, message: Dict[str, Any]) -> None:
        method = message.get("method")
        params = message.get("params")
        if not isinstance(method, str) or "id" in message:
            self._problem(f"the server sent a request or a malformed notification: {str(message)[:200]}")
            return
        if params is None:
            params = {}
        note = Notification(method, params)
        for listener in self._listeners:
            self._guarded(f"listener for {method}", listener, note)
        if method == "$/progress" and isinstance(params, dict):
            callback = self._progress.get(params.get("token"))
            if callback is not None:
                self._guarded("progress callback", lambda: callback(Progress.from_json(params)))
        with self._queue_changed:
            self._queue.append(note)
            self._queue_changed.notify_all()

    def _on_response(self, message: Dict[str, Any]) -> None:
        request_id = message.get("id")
        with self._lock:
            pending = None
            if isinstance(request_id, int) and not isinstance(request_id, bool):
                pending = self._pending.pop(request_id, None)
            if pending is not None and pending.params is not None:
                token = pending.params.get("workDoneToken")
                if isinstance(token, (int, str)):
                    self._progress.pop(token, None)
        if pending is None:
            self._problem(f"a response that matches no request in flight: {str(message)[:300]}")
            return
        if ("result" in message) == ("error" in message):
            pending._complete(None, ProtocolError(f"{pending.method}: a response needs exactly one of "
                                                  f"result and error: {str(message)[:300]}"))
            return
        for hook in self._hooks:
            self._guarded(f"response hook for {pending.method}", hook, pending, message)
        if pending._on_response is not None:
            self._guarded(f"on_response for {pending.method}", pending._on_response, pending, message)
        pending._complete(message)

    def _on_end(self) -> None:
        returncode = self.transport.wait_briefly()
        death = ServerDiedError("the server closed its output", returncode, self.transport.stderr_tail)
        with self._queue_changed:
            self._closed = True
            self._death = death
            stranded = list(self._pending.values())
            self._pending.clear()
            self._queue_changed.notify_all()
        for pending in stranded:
            pending._complete(None, ServerDiedError(f"the server ended before answering {pending.method}",
                                                    returncode, self.transport.stderr_tail))

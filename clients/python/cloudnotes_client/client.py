"""The CloudNotes client: spawns ``cloudnotes serve`` and offers one typed method per request.

Typical use::

    with CloudNotesClient("notes.sqlite") as client:
        memo = client.create("Shopping\\nmilk")
        client.update(memo.id, "Shopping\\nmilk\\neggs", base_version=memo.version)
        print(client.mirror.rows)

Every method blocks until the server answers. When it returns, :attr:`CloudNotesClient.mirror` already
holds the split view as the server left it after that request.
"""

from __future__ import annotations

import os
import threading
from typing import Any, Callable, Dict, List, Mapping, Optional, Sequence, Union

from . import __version__
from .connection import Connection, PendingRequest, ProgressCallback, Tracer
from .errors import ClientError, CloudNotesError
from .memo_requests import DEFAULT_PAGE_LIMIT, SYNC_ATTEMPTS, USE_DEFAULT, Call, MemoRequests
from .mirror import Mirror
from .models import InitializeResult, ListPage, Notification, Token
from .transport import PathLike, ServerProcess, find_binary, serve_command
from .window import WindowMirror

#: Seconds to wait for an interactive request (they take milliseconds on a healthy server).
DEFAULT_TIMEOUT = 30.0


class CloudNotesClient(MemoRequests):
    """A session with one ``cloudnotes serve`` process, with a mirror of its split view.

    ``store`` is the SQLite file (the server's own default when None). ``binary`` is the server
    executable (default: ``$CLOUDNOTES_BIN``, else ``cloudnotes`` on PATH). Unless ``initialize`` is
    false, the constructor also runs the lifecycle's first steps (``initialize`` with ``locale`` and
    ``time_zone``, then ``initialized``), so the client is ready to use.

    With ``window``, the mirror holds that many rows of the list (a :class:`WindowMirror`, as a front end
    showing one screen would) instead of every row; :meth:`scroll` moves it.

    ``timeout`` bounds each interactive request and ``long_timeout`` each import, export and shutdown
    (None waits for ever); both can be overridden per call. ``trace(direction, message)``, if given, sees
    every message sent and received (on the reader thread for received ones).
    """

    def __init__(self, store: Optional[PathLike] = None, *, binary: Optional[PathLike] = None,
                 locale: Optional[str] = "en-US", time_zone: Optional[str] = "UTC",
                 client_name: str = "cloudnotes-python", client_version: str = __version__,
                 initialize: bool = True, timeout: Optional[float] = DEFAULT_TIMEOUT,
                 long_timeout: Optional[float] = None, server_args: Sequence[str] = (),
                 env: Optional[Mapping[str, str]] = None, cwd: Optional[PathLike] = None,
                 trace: Optional[Tracer] = None, queue_size: int = 10_000, window: Optional[int] = None):
        self.store = os.fspath(store) if store is not None else None
        self.timeout = timeout
        self.long_timeout = long_timeout
        self.client_name = client_name
        self.client_version = client_version
        self.command = serve_command(find_binary(binary), store, server_args)
        self.transport = ServerProcess(self.command, env=env, cwd=cwd)
        self.connection = Connection(self.transport, queue_size=queue_size)
        self.connection.trace = trace
        self.mirror: Union[Mirror, WindowMirror] = WindowMirror(window) if window else Mirror()
        self.connection.add_listener(self.mirror.apply)
        self.connection.add_response_hook(
            lambda request, response: self.mirror.observe_response(request.method, request.params, response))
        self.connection.start()
        #: The ``initialize`` result, once initialized.
        self.server_info: Optional[InitializeResult] = None
        self._initialized = False     # initialize succeeded
        self._shut_down = False       # shutdown was sent
        self._closed = False
        self._sync_lock = threading.Lock()
        if initialize:
            try:
                self.initialize(locale, time_zone)
            except BaseException:
                self.kill()
                raise

    # -- lifecycle --------------------------------------------------------------------------------------

    def initialize(self, locale: Optional[str] = "en-US", time_zone: Optional[str] = "UTC", *,
                   send_initialized: bool = True, timeout: Any = USE_DEFAULT,
                   extra: Optional[Mapping[str, Any]] = None) -> InitializeResult:
        """Sends ``initialize`` (and then ``initialized`` unless ``send_initialized`` is false).

        ``locale`` (BCP 47) and ``time_zone`` (IANA) decide every ``displayDate`` and the placeholder title;
        None leaves the server's default. A refused ``initialize`` (an unknown time zone) raises
        InvalidParams and leaves the server uninitialized, so it may be called again.
        """
        params: Dict[str, Any] = {"clientInfo": {"name": self.client_name, "version": self.client_version},
                                  "capabilities": {}}
        if locale is not None:
            params["locale"] = locale
        if time_zone is not None:
            params["timeZone"] = time_zone
        params.update(extra or {})
        result = InitializeResult.from_json(self.request("initialize", params, timeout=timeout))
        self.server_info = result
        self._initialized = True
        if send_initialized:
            self.send_initialized()
        else:
            self.sync()
        return result

    def send_initialized(self) -> None:
        """Sends the ``initialized`` notification (rule S1: the newest memo is selected), then syncs the mirror."""
        self.notify("initialized")
        # The notifications of `initialized` reach the mirror before the answer to the next request, so a
        # re-fetch is what makes the mirror current.
        self.sync(force=True)

    def shutdown(self, timeout: Any = USE_DEFAULT) -> None:
        """Sends ``shutdown``: the server finishes background imports and exports and then only accepts ``exit``."""
        self._shut_down = True
        self.request("shutdown", timeout=self.long_timeout if timeout is USE_DEFAULT else timeout)

    def exit(self) -> None:
        """Sends the ``exit`` notification: the process ends (code 0 after ``shutdown``, else 1)."""
        self.notify("exit")

    def close(self, timeout: float = 30.0) -> Optional[int]:
        """Ends the session politely (``shutdown``, ``exit``) and waits for the process; returns its exit code.

        A server that does not end within ``timeout`` seconds is killed. Calling close again does nothing.
        """
        if self._closed:
            return self.transport.returncode
        self._closed = True
        try:
            if not self.connection.closed and self._initialized:
                if not self._shut_down:
                    self.shutdown(timeout=timeout)
                self.exit()
        except ClientError:
            pass  # the server is dying or hung: it is ended below either way
        # Without `initialize`, the end of input is the clean way out (exit code 0).
        self.transport.close_stdin()
        code = self.transport.wait(timeout)
        if code is None:
            self.transport.kill()
            code = self.transport.wait(10)
        self.connection.reader_thread.join(timeout=10)
        self.transport.release()
        return code

    def kill(self) -> Optional[int]:
        """Kills the server process at once (no shutdown) and returns its exit code."""
        self._closed = True
        self.transport.kill()
        code = self.transport.wait(10)
        self.connection.reader_thread.join(timeout=10)
        self.transport.release()
        return code

    def __enter__(self) -> CloudNotesClient:
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closed else ("running" if self.returncode is None else f"exited {self.returncode}")
        return f"<CloudNotesClient pid={self.pid} store={self.store!r} {state}>"

    @property
    def pid(self) -> int:
        """The server's process id."""
        return self.transport.pid

    @property
    def returncode(self) -> Optional[int]:
        """The server's exit code, or None while it runs."""
        return self.transport.returncode

    @property
    def server_log(self) -> str:
        """The last part of the server's stderr (its log)."""
        return self.transport.stderr_tail

    @property
    def problems(self) -> List[str]:
        """Everything that did not fit the protocol: bad lines from the server, and mirror inconsistencies."""
        return list(self.connection.problems) + list(self.mirror.problems)

    # -- raw requests -----------------------------------------------------------------------------------

    def request(self, method: str, params: Optional[Dict[str, Any]] = None, *, timeout: Any = USE_DEFAULT) -> Any:
        """Sends any request and returns its raw JSON result.

        Raises CloudNotesError (a subclass per code) for an error response, RequestTimeoutError after
        ``timeout`` seconds (the request is then cancelled), and ServerDiedError if the server ends.
        """
        return self._finish(self.connection.request(method, params), timeout, None)

    def request_async(self, method: str, params: Optional[Dict[str, Any]] = None, *,
                      progress: Optional[ProgressCallback] = None) -> PendingRequest:
        """Sends a request without waiting. The mirror is not synced for it: call :meth:`sync` after."""
        return self.connection.request(method, params, progress=progress)

    def notify(self, method: str, params: Optional[Dict[str, Any]] = None) -> None:
        """Sends a notification."""
        self.connection.notify(method, params)

    def cancel(self, request: Union[Call, PendingRequest, Token]) -> None:
        """Sends ``$/cancelRequest`` for a call, a pending request or a request id."""
        self.connection.cancel(request.id if isinstance(request, (Call, PendingRequest)) else request)

    def _finish(self, pending: PendingRequest, timeout: Any, convert: Optional[Callable[[Any], Any]]) -> Any:
        if timeout is USE_DEFAULT:
            background = pending.method in ("memo/import", "memo/export", "shutdown")
            timeout = self.long_timeout if background else self.timeout
        try:
            result = pending.result(timeout)
        except CloudNotesError:
            self._after_request()
            raise
        self._after_request()
        return convert(result) if convert is not None else result

    def _after_request(self) -> None:
        # A list/didReset leaves the rows unknown; the caller must not see the mirror like that.
        if self._initialized and not self._shut_down and not self.connection.closed and self.mirror.stale:
            self.sync()

    def sync(self, timeout: Any = USE_DEFAULT, *, force: bool = False) -> None:
        """Re-fetches the list with ``memo/list`` if the mirror is stale (or ``force``); returns when it is current.

        Needed only after changes the caller did not ask for (a background import finishing while no
        request ran); every request method already syncs before it returns. With ``force``, it also acts
        as a barrier: every notification the server sent before the re-fetch has been applied.
        """
        if timeout is USE_DEFAULT:
            timeout = self.timeout
        if force:
            self.mirror.invalidate()
        if isinstance(self.mirror, WindowMirror):
            return self._fill_window(self.mirror, timeout)
        limit = self.server_info.limits.max_list_limit if self.server_info else DEFAULT_PAGE_LIMIT
        with self._sync_lock:
            for _ in range(SYNC_ATTEMPTS):
                if not self.mirror.stale:
                    return
                generation = self.mirror.generation
                offset = 0
                while self.mirror.stale and self.mirror.generation == generation:
                    def offer(request: PendingRequest, response: Dict[str, Any], at: int = offset,
                              started: int = generation) -> None:
                        if isinstance(response.get("result"), dict):
                            self.mirror.offer_page(started, at, ListPage.from_json(response["result"]))
                    pending = self.connection.request("memo/list", {"offset": offset, "limit": limit},
                                                      on_response=offer)
                    page = ListPage.from_json(pending.result(timeout))
                    offset += len(page.rows)
                    if not page.rows or offset >= page.total:
                        break
            if self.mirror.stale:
                raise ClientError("could not bring the mirror up to date: the list kept changing")

    def _fill_window(self, mirror: WindowMirror, timeout: Any) -> None:
        """Fetches the window's rows with one ``memo/list``, again while notifications move the window."""
        with self._sync_lock:
            for _ in range(SYNC_ATTEMPTS):
                if not mirror.stale:
                    return
                offset = mirror.offset
                def offer(request: PendingRequest, response: Dict[str, Any], at: int = offset) -> None:
                    if isinstance(response.get("result"), dict):
                        mirror.offer_window(at, ListPage.from_json(response["result"]))
                self.connection.request("memo/list", {"offset": offset, "limit": mirror.count},
                                        on_response=offer).result(timeout)
            if mirror.stale:
                raise ClientError("could not fill the window: the list kept changing")

    def scroll(self, offset: int, *, timeout: Any = USE_DEFAULT) -> None:
        """Moves a window mirror to start at ``offset`` and fetches its rows (a client made with ``window``)."""
        if not isinstance(self.mirror, WindowMirror):
            raise ClientError("scroll needs a window mirror: make the client with window=N")
        self.mirror.scroll(offset)
        self.sync(timeout)

    # -- notifications ----------------------------------------------------------------------------------

    def next_notification(self, timeout: Optional[float] = None) -> Notification:
        """Removes and returns the oldest queued server notification, waiting up to ``timeout`` seconds."""
        return self.connection.next_notification(timeout)

    def wait_for_notification(self, method: Optional[str] = None,
                              predicate: Optional[Callable[[Notification], bool]] = None,
                              timeout: Optional[float] = None) -> Notification:
        """Removes and returns the first queued notification that matches, waiting up to ``timeout`` seconds.

        A notification matches when its method is ``method`` (any when None) and ``predicate`` (if given)
        holds for it; the others stay queued. RequestTimeoutError is raised when none comes in time.
        """
        return self.connection.wait_for_notification(method, predicate, timeout)

    def drain_notifications(self) -> List[Notification]:
        """Removes and returns every queued notification, oldest first."""
        return self.connection.drain_notifications()


#: A shorter name.
Client = CloudNotesClient

__all__ = ["CloudNotesClient", "Client", "Call", "DEFAULT_TIMEOUT", "USE_DEFAULT"]

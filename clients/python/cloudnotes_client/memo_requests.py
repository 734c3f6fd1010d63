"""The typed requests of :class:`~cloudnotes_client.client.CloudNotesClient`, one method per request.

Each takes and returns the models of :mod:`cloudnotes_client.models`; :class:`Call` is an import or export
running in the background.

The client itself (the process, the connection, the lifecycle and the mirror's re-fetch) is in
:mod:`cloudnotes_client.client`; :class:`MemoRequests` is what it offers on top of its raw ``request``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Dict, Iterable, List, Mapping, Optional, Sequence, Union

from .connection import PendingRequest, ProgressCallback
from .errors import ClientError
from .models import (EditResult, ExportResult, ImportEntry, ImportResult, ListPage, Memo, SearchResult, ShareResult,
                     TextEdit)
from .transport import PathLike
from .window import WindowMirror

if TYPE_CHECKING:  # the client imports this module
    from .client import CloudNotesClient

#: The page size for whole-list reads, until ``initialize`` reports the server's own limit.
DEFAULT_PAGE_LIMIT = 1000
#: How often a whole-list read starts again when the list changes under it.
SYNC_ATTEMPTS = 20


class _UseDefault:
    def __repr__(self) -> str:
        return "<default timeout>"


#: Passed as a timeout, means "the client's default for this kind of request".
USE_DEFAULT: Any = _UseDefault()


class Call:
    """An import or export the server runs in the background: wait for its result, or cancel it."""

    def __init__(self, client: CloudNotesClient, pending: PendingRequest, convert: Callable[[Any], Any],
                 default_timeout: Optional[float]):
        self._client = client
        self._pending = pending
        self._convert = convert
        self._default_timeout = default_timeout

    @property
    def id(self) -> int:
        """The JSON-RPC id of the request."""
        return self._pending.id

    @property
    def method(self) -> str:
        """The request's method."""
        return self._pending.method

    def done(self) -> bool:
        """True once the server has answered (or died)."""
        return self._pending.done()

    def cancel(self) -> None:
        """Asks the server to stop the work; :meth:`result` then raises RequestCancelled (-32800).

        An import is all or nothing, so a cancelled import stores nothing. When the work had already
        finished, the cancellation is ignored and :meth:`result` returns normally.
        """
        self._pending.cancel()

    def result(self, timeout: Any = USE_DEFAULT) -> Any:
        """Waits for the result (an ImportResult or ExportResult); see :meth:`CloudNotesClient.request`."""
        if timeout is USE_DEFAULT:
            timeout = self._default_timeout
        return self._client._finish(self._pending, timeout, self._convert)


class MemoRequests:
    """The typed requests, one method per protocol request.

    For a client that provides ``request``, ``connection``, ``mirror``, ``server_info`` and
    ``long_timeout``: :class:`~cloudnotes_client.client.CloudNotesClient`.
    """

    def create(self, text: str = "", *, timeout: Any = USE_DEFAULT) -> Memo:
        """Creates a memo (rule S2: at index 0, selected and shown; an active search is cleared)."""
        return Memo.from_json(self.request("memo/create", {"text": text}, timeout=timeout)["memo"])

    def update(self, memo_id: str, text: str, base_version: Optional[int] = None, *,
               timeout: Any = USE_DEFAULT) -> Memo:
        """Replaces a memo's text (rule S3: its row moves to the top); returns the memo as committed.

        With ``base_version``, the update only applies if the memo is still at that version; otherwise
        VersionConflict is raised and its ``current_memo`` is the memo now, to merge and retry.
        """
        params: Dict[str, Any] = {"id": memo_id, "text": text}
        if base_version is not None:
            params["baseVersion"] = base_version
        return Memo.from_json(self.request("memo/update", params, timeout=timeout)["memo"])

    def edit(self, memo_id: str, edits: Sequence[TextEdit], base_version: int, *,
             timeout: Any = USE_DEFAULT) -> EditResult:
        """Applies ``edits`` (UTF-8 byte ranges, in order) to the text of a memo at ``base_version``.

        What an editor sends per keystroke instead of the whole text: the reply carries the new version
        and title, not the text. ``TextEdit.between(old, new)`` makes the edit for a changed string.
        Raises VersionConflict when the memo has moved on, InvalidParams (nothing applied) for an edit
        out of place.
        """
        params = {"id": memo_id, "baseVersion": base_version, "edits": [edit.to_json() for edit in edits]}
        return EditResult.from_json(self.request("memo/edit", params, timeout=timeout))

    def select(self, memo_id: str, *, timeout: Any = USE_DEFAULT) -> Memo:
        """Selects a memo and shows it; a blank memo that loses the selection is discarded (rule S5)."""
        return Memo.from_json(self.request("memo/select", {"id": memo_id}, timeout=timeout)["memo"])

    def delete(self, memo_id: str, *, timeout: Any = USE_DEFAULT) -> Optional[Memo]:
        """Deletes a memo; returns the memo selected afterwards (rule S4), or None when nothing is."""
        selected = self.request("memo/delete", {"id": memo_id}, timeout=timeout)["selected"]
        return None if selected is None else Memo.from_json(selected, "memo/delete.selected")

    def list(self, offset: int = 0, limit: int = 100, *, timeout: Any = USE_DEFAULT) -> ListPage:
        """One page of the (filtered) list, newest first."""
        return ListPage.from_json(self.request("memo/list", {"offset": offset, "limit": limit}, timeout=timeout))

    def list_all(self, *, timeout: Any = USE_DEFAULT) -> ListPage:
        """The whole (filtered) list, read page by page (again from the start if it changed meanwhile)."""
        limit = self.server_info.limits.max_list_limit if self.server_info else DEFAULT_PAGE_LIMIT
        for _ in range(SYNC_ATTEMPTS):
            rows: List[Any] = []
            first = self.list(0, limit, timeout=timeout)
            rows += first.rows
            consistent = True
            while len(rows) < first.total:
                page = self.list(len(rows), limit, timeout=timeout)
                if page.total != first.total or not page.rows:
                    consistent = False
                    break
                rows += page.rows
            if consistent:
                return ListPage(total=first.total, rows=tuple(rows))
        raise ClientError("could not read the whole list: it kept changing")

    def search(self, query: str, *, timeout: Any = USE_DEFAULT) -> SearchResult:
        """Sets the search filter (case-insensitive substring; "" clears it) and returns its first page."""
        params: Dict[str, Any] = {"query": query}
        if isinstance(self.mirror, WindowMirror):
            params["limit"] = self.mirror.count  # the first page is the window
        return SearchResult.from_json(self.request("memo/search", params, timeout=timeout))

    def clear_search(self, *, timeout: Any = USE_DEFAULT) -> SearchResult:
        """Clears the search filter (``memo/search`` with an empty query)."""
        return self.search("", timeout=timeout)

    def share(self, memo_id: str, format: str = "text", *, timeout: Any = USE_DEFAULT) -> ShareResult:
        """Renders a memo for sharing as ``"text"``, ``"markdown"`` or ``"json"``; changes nothing."""
        return ShareResult.from_json(self.request("memo/share", {"id": memo_id, "format": format}, timeout=timeout))

    def begin_import_file(self, path: PathLike, *, progress: Optional[ProgressCallback] = None) -> Call:
        """Starts importing a JSON file in the original app's format; returns a :class:`Call` to wait on or cancel.

        A relative ``path`` is made absolute here, against this process's working directory.
        ``progress(Progress)`` runs on the reader thread for each ``$/progress``; it may call
        ``Call.cancel()`` but must not wait for a request.
        """
        params = {"path": os.path.abspath(os.fspath(path))}
        return self._begin("memo/import", params, progress, ImportResult.from_json)

    def import_file(self, path: PathLike, *, progress: Optional[ProgressCallback] = None,
                    timeout: Any = USE_DEFAULT) -> ImportResult:
        """Imports a JSON file of ImportEntries (all or nothing); see :meth:`begin_import_file`."""
        return self.begin_import_file(path, progress=progress).result(timeout)

    def begin_import_memos(self, entries: Iterable[Union[ImportEntry, Mapping[str, Any]]], *,
                           progress: Optional[ProgressCallback] = None) -> Call:
        """Starts importing entries given inline (ImportEntry objects or dicts); returns a :class:`Call`."""
        memos = [entry.to_json() if isinstance(entry, ImportEntry) else dict(entry) for entry in entries]
        return self._begin("memo/import", {"memos": memos}, progress, ImportResult.from_json)

    def import_memos(self, entries: Iterable[Union[ImportEntry, Mapping[str, Any]]], *,
                     progress: Optional[ProgressCallback] = None, timeout: Any = USE_DEFAULT) -> ImportResult:
        """Imports entries given inline (all or nothing); see :meth:`begin_import_memos`."""
        return self.begin_import_memos(entries, progress=progress).result(timeout)

    def begin_export(self, path: PathLike, format: str = "json", *, overwrite: bool = False,
                     progress: Optional[ProgressCallback] = None) -> Call:
        """Starts exporting every memo to a JSON file or a folder of Markdown files; returns a :class:`Call`."""
        params: Dict[str, Any] = {"path": os.path.abspath(os.fspath(path)), "format": format}
        if overwrite:
            params["overwrite"] = True
        return self._begin("memo/export", params, progress, ExportResult.from_json)

    def export(self, path: PathLike, format: str = "json", *, overwrite: bool = False,
               progress: Optional[ProgressCallback] = None, timeout: Any = USE_DEFAULT) -> ExportResult:
        """Exports every memo, newest first (``format`` ``"json"`` or ``"markdown"``); see :meth:`begin_export`."""
        return self.begin_export(path, format, overwrite=overwrite, progress=progress).result(timeout)

    def _begin(self, method: str, params: Dict[str, Any], progress: Optional[ProgressCallback],
               convert: Callable[[Any], Any]) -> Call:
        pending = self.connection.request(method, params, progress=progress)
        return Call(self, pending, convert, self.long_timeout)

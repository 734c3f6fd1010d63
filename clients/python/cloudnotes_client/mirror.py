"""A local copy of the server's split view, kept current by its notifications.

The mirror holds what a front end would show: the list rows by index (and their total), the selection
(memo id and index) and the detail pane (a memo, or None when cleared). The connection's reader thread
applies each notification the moment it arrives, before the response that follows it, so whenever a
request returns the mirror describes the state after that request (split-view rule 7).

``list/didReset`` says "the whole list changed; re-fetch it". Until the client re-fetches, the mirror is
*stale* (``rows`` is None). :class:`~cloudnotes_client.client.CloudNotesClient` re-fetches before a
request returns, so callers of the client only see a stale mirror after changes they did not ask for
(a background import finishing while no request runs); ``client.sync()`` brings it up to date.

The mirror never "fixes" what the server says. A notification that does not fit the rows it holds (an
index out of range, a row id that differs) is recorded in :attr:`Mirror.problems` and makes the mirror
stale, so that the next re-fetch repairs it; a conformance test asserts that ``problems`` stays empty.
"""

from __future__ import annotations

import collections
import threading
from dataclasses import dataclass
from typing import Any, Deque, Dict, List, Optional, Tuple

from .errors import ProtocolError
from .models import EditResult, ListPage, Memo, MemoRow, Notification, SearchResult, Selection, apply_edits, split_title

#: Notifications that change the list (each one bumps the mirror's list generation).
LIST_NOTIFICATIONS = ("list/didInsert", "list/didUpdate", "list/didRemove", "list/didReset")


@dataclass(frozen=True)
class MirrorState:
    """An atomic snapshot of the mirror."""

    rows: Optional[Tuple[MemoRow, ...]]
    total: int
    selection: Selection
    detail: Optional[Memo]
    query: Optional[str]


class Mirror:
    """The list, selection and detail pane as the server's notifications describe them."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._rows: Optional[List[MemoRow]] = None      # None: stale, re-fetch with memo/list
        self._reset_total: Optional[int] = None
        self._reset_generation = -1
        # Bumped by every list notification, so a re-fetch can tell that the list moved under it.
        self._generation = 0
        self._fetch_generation: Optional[int] = None
        self._fetch_rows: List[MemoRow] = []
        self._selection = Selection()
        self._detail: Optional[Memo] = None
        self._editable = False
        self._query: Optional[str] = None
        self.problems: List[str] = []
        #: The last notifications applied, for error messages.
        self.recent: Deque[str] = collections.deque(maxlen=40)

    # -- reading the mirror (any thread) ----------------------------------------------------------------

    @property
    def rows(self) -> Optional[Tuple[MemoRow, ...]]:
        """Every row of the (filtered) list in order, or None while the mirror is stale."""
        with self._lock:
            return None if self._rows is None else tuple(self._rows)

    @property
    def ids(self) -> Optional[Tuple[str, ...]]:
        """The memo ids of :attr:`rows`, or None while stale."""
        rows = self.rows
        return None if rows is None else tuple(row.id for row in rows)

    @property
    def total(self) -> int:
        """The number of rows in the (filtered) list (from ``list/didReset`` while stale)."""
        with self._lock:
            if self._rows is not None:
                return len(self._rows)
            return self._reset_total or 0

    @property
    def selection(self) -> Selection:
        """The selected memo's id and index (index None when it is outside the filtered list)."""
        with self._lock:
            return self._selection

    @property
    def detail(self) -> Optional[Memo]:
        """The memo the detail pane shows, or None when it is cleared."""
        with self._lock:
            return self._detail

    @property
    def editable(self) -> bool:
        """Whether the detail pane is editable (it is whenever it shows a memo)."""
        with self._lock:
            return self._editable

    @property
    def query(self) -> Optional[str]:
        """The active search filter, or None (from ``memo/search`` and ``memo/create`` responses)."""
        with self._lock:
            return self._query

    @property
    def stale(self) -> bool:
        """True when the rows must be re-fetched (after ``list/didReset``, or before the first fetch)."""
        with self._lock:
            return self._rows is None

    def snapshot(self) -> MirrorState:
        """Everything at once, consistent with itself."""
        with self._lock:
            return MirrorState(rows=self.rows, total=self.total, selection=self._selection, detail=self._detail,
                               query=self._query)

    # -- applying notifications (reader thread) ---------------------------------------------------------

    def _problem(self, text: str) -> None:
        self.problems.append(f"{text}; recent notifications: {list(self.recent)[-8:]}")
        # What the mirror holds is wrong now; a re-fetch replaces it.
        self._rows = None
        self._reset_total = None

    def _note(self, text: str) -> None:
        # The rows may still be right; only the claim is recorded.
        self.problems.append(f"{text}; recent notifications: {list(self.recent)[-8:]}")

    def apply(self, note: Notification) -> None:
        """Applies one server notification."""
        with self._lock:
            self.recent.append(f"{note.method} {note.params}"[:240])
            try:
                self._apply(note.method, note.params)
            except (ProtocolError, KeyError, TypeError) as error:
                self._problem(f"malformed {note.method}: {error}")

    def _apply(self, method: str, params: Any) -> None:
        if method in LIST_NOTIFICATIONS:
            self._generation += 1
        if method == "list/didInsert":
            index, row = params["index"], MemoRow.from_json(params["row"], "list/didInsert.row")
            if self._rows is not None:
                if not 0 <= index <= len(self._rows):
                    return self._problem(f"list/didInsert at {index} in a list of {len(self._rows)}")
                if any(r.id == row.id for r in self._rows):
                    return self._problem(f"list/didInsert of {row.id}, which is listed already")
                self._rows.insert(index, row)
        elif method == "list/didUpdate":
            source, target = params["fromIndex"], params["toIndex"]
            row = MemoRow.from_json(params["row"], "list/didUpdate.row")
            if self._rows is not None:
                if not 0 <= source < len(self._rows) or self._rows[source].id != row.id:
                    return self._problem(f"list/didUpdate from {source}: that row is not {row.id}")
                self._rows.pop(source)
                if not 0 <= target <= len(self._rows):
                    return self._problem(f"list/didUpdate to {target} in a list of {len(self._rows) + 1}")
                self._rows.insert(target, row)
        elif method == "list/didRemove":
            index, memo_id = params["index"], params["id"]
            if self._rows is not None:
                if not 0 <= index < len(self._rows) or self._rows[index].id != memo_id:
                    return self._problem(f"list/didRemove at {index}: that row is not {memo_id}")
                self._rows.pop(index)
        elif method == "list/didReset":
            self._rows = None
            self._reset_total = params["total"]
            self._reset_generation = self._generation
        elif method == "selection/didChange":
            memo_id, index = params["id"], params["index"]
            self._selection = Selection(memo_id, index)
            if memo_id is None and index is not None:
                self._note(f"selection/didChange with no id but index {index}")
            elif self._rows is not None and index is not None and (
                    not 0 <= index < len(self._rows) or self._rows[index].id != memo_id):
                self._note(f"selection/didChange to {memo_id} at {index}, but that row is not it")
            elif self._rows is not None and index is None and any(r.id == memo_id for r in self._rows):
                self._note(f"selection/didChange says {memo_id} is outside the list, but it is listed")
        elif method == "detail/didShow":
            memo = Memo.from_json(params["memo"], "detail/didShow.memo")
            self._detail = memo
            self._editable = params.get("editable") is True
            if not self._editable:
                self._note("detail/didShow without editable: true")
            if memo.id != self._selection.id:
                self._note(f"detail/didShow of {memo.id}, but {self._selection.id} is selected")
        elif method == "detail/didClear":
            self._detail = None
            self._editable = False
            if params.get("editable") is not False:
                self._note("detail/didClear without editable: false")
        elif method == "$/progress":
            pass
        else:
            self._note(f"unknown server notification {method!r}")

    # -- responses and re-fetching (reader thread) ------------------------------------------------------

    def observe_response(self, method: str, params: Optional[Dict[str, Any]], response: Dict[str, Any]) -> None:
        """Takes what a response says about the split view, before the caller sees it."""
        result = response.get("result")
        if not isinstance(result, dict):
            return
        with self._lock:
            if method == "memo/update":
                # The client's own update is answered, not echoed with detail/didShow.
                memo = Memo.from_json(result.get("memo"), "memo/update.memo")
                if self._detail is not None and self._detail.id == memo.id:
                    self._detail = memo
            elif method == "memo/edit":
                # An edit's reply carries no text: the detail applies the edits it sent.
                edited = EditResult.from_json(result)
                detail = self._detail
                based_on = (params or {}).get("baseVersion")
                if detail is not None and detail.id == edited.id and detail.version == based_on != edited.version:
                    text = apply_edits(detail.text, (params or {}).get("edits", []))
                    if len(text.encode()) != edited.length:
                        # Not the server's text: keep the detail as it was, and say so.
                        self._note(f"memo/edit: the edited text is {len(text.encode())} bytes, the server's {edited.length}")
                        return
                    _, body = split_title(text)
                    self._detail = Memo(id=detail.id, text=text, title=edited.title, body=body,
                                        created_at=detail.created_at, modified_at=edited.modified_at,
                                        version=edited.version, display_date=edited.display_date)
            elif method == "memo/create":
                self._query = None
            elif method == "memo/search":
                page = SearchResult.from_json(result)
                self._query = page.query or None
                self._install_whole(page, 0)
            elif method == "memo/list" and self._rows is None and (params or {}).get("offset", 0) == 0:
                self._install_whole(ListPage.from_json(result), 0)

    def _install_whole(self, page: ListPage, offset: Any) -> None:
        # A response describes the state at its place in the stream, so a page that holds every row can
        # stand in for a re-fetch.
        if self._rows is None and offset == 0 and len(page.rows) >= page.total:
            self._install(list(page.rows), page.total)

    def _install(self, rows: List[MemoRow], total: int) -> None:
        if len(rows) != total:
            self._note(f"memo/list said total {total} but gave {len(rows)} rows")
        if self._reset_total is not None and self._reset_generation == self._generation and total != self._reset_total:
            self._note(f"list/didReset said {self._reset_total} rows, but memo/list has {total}")
        self._rows = rows
        self._reset_total = None
        self._fetch_generation = None
        self._fetch_rows = []

    def invalidate(self) -> None:
        """Forgets the rows, so that the next sync re-fetches them."""
        with self._lock:
            self._generation += 1
            self._rows = None
            self._reset_total = None

    @property
    def generation(self) -> int:
        """A counter of list notifications, to start a re-fetch with (see :meth:`offer_page`)."""
        with self._lock:
            return self._generation

    def offer_page(self, generation: int, offset: int, page: ListPage) -> None:
        """Takes one page of a re-fetch started at ``generation``; installs the rows after the last page.

        A page is dropped when a list notification arrived since the re-fetch started (the pages would
        not fit together) or when the mirror is no longer stale; the caller then sees that and retries.
        """
        with self._lock:
            if self._rows is not None or generation != self._generation:
                return
            if offset == 0:
                self._fetch_generation = generation
                self._fetch_rows = []
            if self._fetch_generation != generation or offset != len(self._fetch_rows):
                return
            self._fetch_rows.extend(page.rows)
            if not page.rows or len(self._fetch_rows) >= page.total:
                self._install(self._fetch_rows, page.total)

"""A local copy of the server's split view, kept current by its notifications.

The mirror holds what a front end would show: the list rows by index (and their total), the selection
(memo id and index) and the detail pane (a memo, or None when cleared). The connection's reader thread
applies each notification the moment it arrives, before the response that follows it, so whenever a
request returns the mirror describes the state after that request (split-view rule S7).

``list/didReset`` says "the whole list changed; re-fetch it". Until the client re-fetches, the mirror is
*stale* (``rows`` is None). :class:`~cloudnotes_client.client.CloudNotesClient` re-fetches before a
request returns, so callers of the client only see a stale mirror after changes they did not ask for
(a background import finishing while no request runs); ``client.sync()`` brings it up to date.

:class:`~cloudnotes_client.window.WindowMirror` holds one window of the list instead (the rows a front
end shows on one screen, ``offset`` to ``offset + count``) and the list's total, as protocol/README.md §7
describes: a front end with 100,000 memos never fetches them all.

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


def _locked(attribute: str, summary: str) -> property:
    """A read-only property that reads ``attribute`` under the mirror's lock (the reader thread writes it)."""
    def read(self: Any) -> Any:
        with self._lock:
            return getattr(self, attribute)
    read.__doc__ = summary
    return property(read)


class _Panes:
    """What every mirror shares: the selection, the detail pane and the search filter, and the list's
    notifications handed to the list's own rules (:meth:`_apply_list`)."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        # Bumped by every list notification, so a re-fetch can tell that the list moved under it.
        self._generation = 0
        self._selection = Selection()
        self._detail: Optional[Memo] = None
        self._editable = False
        self._query: Optional[str] = None
        self.problems: List[str] = []
        #: The last notifications applied, for error messages.
        self.recent: Deque[str] = collections.deque(maxlen=40)

    # -- reading the mirror (any thread) ----------------------------------------------------------------

    @property
    def ids(self) -> Optional[Tuple[str, ...]]:
        """The memo ids of :attr:`rows`, or None while stale."""
        rows = self.rows
        return None if rows is None else tuple(row.id for row in rows)

    @property
    def rows(self) -> Optional[Tuple[MemoRow, ...]]:
        raise NotImplementedError

    selection = _locked("_selection",
                        "The selected memo's id and index (index None when it is outside the filtered list).")
    detail = _locked("_detail", "The memo the detail pane shows, or None when it is cleared.")
    editable = _locked("_editable", "Whether the detail pane is editable (it is whenever it shows a memo).")
    query = _locked("_query", "The active search filter, or None (from ``memo/search`` and ``memo/create`` responses).")
    generation = _locked("_generation", "A counter of list notifications, to start a re-fetch with.")

    def snapshot(self) -> MirrorState:
        """Everything at once, consistent with itself."""
        with self._lock:
            return MirrorState(rows=self.rows, total=self.total, selection=self._selection, detail=self._detail,
                               query=self._query)

    # -- applying notifications (reader thread) ---------------------------------------------------------

    def _problem(self, text: str) -> None:
        self.problems.append(f"{text}; recent notifications: {list(self.recent)[-8:]}")
        # What the mirror holds is wrong now; a re-fetch replaces it.
        self._forget_rows()

    def _forget_rows(self) -> None:
        raise NotImplementedError

    def invalidate(self) -> None:
        """Forgets the rows, so that the next sync re-fetches them."""
        with self._lock:
            self._generation += 1
            self._forget_rows()

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
            self._apply_list(method, params)
        elif method == "selection/didChange":
            memo_id, index = params["id"], params["index"]
            self._selection = Selection(memo_id, index)
            if memo_id is None and index is not None:
                self._note(f"selection/didChange with no id but index {index}")
            else:
                self._check_selection(memo_id, index)
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

    def _apply_list(self, method: str, params: Any) -> None:
        raise NotImplementedError

    def _check_selection(self, memo_id: str, index: Optional[int]) -> None:
        """Notes a selection whose index does not fit the rows held."""
        raise NotImplementedError

    # -- responses (reader thread) ----------------------------------------------------------------------

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
                self._observe_edit(params or {}, EditResult.from_json(result))
            elif method in ("memo/create", "memo/undelete"):
                self._query = None  # both clear an active search filter (rule S2)
            elif method == "memo/search":
                page = SearchResult.from_json(result)
                self._query = page.query or None
                self._observe_first_page(page)
            elif method == "memo/list":
                self._observe_page((params or {}).get("offset", 0), ListPage.from_json(result))

    def _observe_edit(self, params: Dict[str, Any], edited: EditResult) -> None:
        # An edit's reply carries no text: the detail applies the edits it sent.
        detail = self._detail
        based_on = params.get("baseVersion")
        if detail is not None and detail.id == edited.id and detail.version == based_on != edited.version:
            text = apply_edits(detail.text, params.get("edits", []))
            if len(text.encode()) != edited.length:
                # Not the server's text: keep the detail as it was, and say so.
                self._note(f"memo/edit: the edited text is {len(text.encode())} bytes, the server's {edited.length}")
                return
            _, body = split_title(text)
            self._detail = Memo(id=detail.id, text=text, title=edited.title, body=body,
                                created_at=detail.created_at, modified_at=edited.modified_at,
                                version=edited.version, display_date=edited.display_date)

    def _observe_first_page(self, page: ListPage) -> None:
        raise NotImplementedError

    def _observe_page(self, offset: Any, page: ListPage) -> None:
        raise NotImplementedError


class Mirror(_Panes):
    """The whole list, the selection and the detail pane as the server's notifications describe them."""

    def __init__(self) -> None:
        super().__init__()
        self._rows: Optional[List[MemoRow]] = None      # None: stale, re-fetch with memo/list
        self._reset_total: Optional[int] = None
        self._reset_generation = -1
        self._fetch_generation: Optional[int] = None
        self._fetch_rows: List[MemoRow] = []

    @property
    def rows(self) -> Optional[Tuple[MemoRow, ...]]:
        """Every row of the (filtered) list in order, or None while the mirror is stale."""
        with self._lock:
            return None if self._rows is None else tuple(self._rows)

    @property
    def total(self) -> int:
        """The number of rows in the (filtered) list (from ``list/didReset`` while stale)."""
        with self._lock:
            if self._rows is not None:
                return len(self._rows)
            return self._reset_total or 0

    @property
    def stale(self) -> bool:
        """True when the rows must be re-fetched (after ``list/didReset``, or before the first fetch)."""
        with self._lock:
            return self._rows is None

    def _forget_rows(self) -> None:
        self._rows = None
        self._reset_total = None

    def _check_selection(self, memo_id: str, index: Optional[int]) -> None:
        if self._rows is not None and index is not None and (
                not 0 <= index < len(self._rows) or self._rows[index].id != memo_id):
            self._note(f"selection/didChange to {memo_id} at {index}, but that row is not it")
        elif self._rows is not None and index is None and any(r.id == memo_id for r in self._rows):
            self._note(f"selection/didChange says {memo_id} is outside the list, but it is listed")

    def _apply_list(self, method: str, params: Any) -> None:
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

    def _observe_first_page(self, page: ListPage) -> None:
        self._install_whole(page, 0)

    def _observe_page(self, offset: Any, page: ListPage) -> None:
        if self._rows is None and offset == 0:
            self._install_whole(page, 0)

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

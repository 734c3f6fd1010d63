"""A local copy of one window of the split view's list, kept current by the server's notifications.

:class:`WindowMirror` holds the rows a front end shows on one screen (``offset`` to ``offset + count``),
the list's total, the selection and the detail pane, as protocol/README.md §7 ("A window of the list")
describes: a front end with 100,000 memos never fetches them all. What it shares with the whole-list
:class:`~cloudnotes_client.mirror.Mirror` (the selection, the detail pane, the search filter, the
problems it notes) is in :mod:`cloudnotes_client.mirror`.
"""

from __future__ import annotations

from typing import Any, List, Optional, Tuple

from .mirror import _Panes, _locked
from .models import ListPage, MemoRow


class WindowMirror(_Panes):
    """One window of the list (``count`` rows from ``offset``), its total, the selection and the detail.

    What a front end that shows one screen holds (protocol/README.md §7, "A window of the list"): each
    list notification moves the window's rows or its offset, a reset empties it, and the client fills
    it with ``memo/list {offset, limit: count}`` (:meth:`CloudNotesClient.sync`). Rows that a
    notification brings in past the window's end are dropped; a removal inside it leaves it short until
    the next fill.
    """

    def __init__(self, count: int) -> None:
        super().__init__()
        if count < 1:
            raise ValueError("a window holds at least one row")
        self.count = count
        self._offset = 0
        self._total = 0
        self._rows: List[MemoRow] = []
        self._stale = True      # the rows must be fetched: at start, after a reset or a problem

    @property
    def rows(self) -> Optional[Tuple[MemoRow, ...]]:
        """The window's rows, from :attr:`offset` on, or None while stale."""
        with self._lock:
            return None if self._stale else tuple(self._rows)

    offset = _locked("_offset", "The list index of the window's first row.")
    total = _locked("_total", "The number of rows in the whole (filtered) list.")

    @property
    def stale(self) -> bool:
        """True when the window must be (re)filled: after a reset, or when rows below it moved up into it."""
        with self._lock:
            return self._stale or len(self._rows) < min(self.count, max(0, self._total - self._offset))

    def _forget_rows(self) -> None:
        self._rows = []
        self._stale = True

    def _check_selection(self, memo_id: str, index: Optional[int]) -> None:
        if self._stale or index is None or not self._offset <= index < self._offset + len(self._rows):
            return
        if self._rows[index - self._offset].id != memo_id:
            self._note(f"selection/didChange to {memo_id} at {index}, but that row is not it")

    def _apply_list(self, method: str, params: Any) -> None:
        if method == "list/didInsert":
            self._insert(params["index"], MemoRow.from_json(params["row"], "list/didInsert.row"))
        elif method == "list/didUpdate":
            row = MemoRow.from_json(params["row"], "list/didUpdate.row")
            if self._remove(params["fromIndex"], row.id):
                self._insert(params["toIndex"], row)
        elif method == "list/didRemove":
            self._remove(params["index"], params["id"])
        elif method == "list/didReset":
            self._total = params["total"]
            self._forget_rows()

    def _insert(self, index: int, row: MemoRow) -> None:
        if not 0 <= index <= self._total:
            return self._problem(f"list/didInsert at {index} in a list of {self._total}")
        self._total += 1
        if index < self._offset:
            self._offset += 1
        elif index <= self._offset + len(self._rows) and not self._stale:
            self._rows.insert(index - self._offset, row)
            del self._rows[self.count:]

    def _remove(self, index: int, memo_id: str) -> bool:
        if not 0 <= index < self._total:
            self._problem(f"list/didRemove at {index} in a list of {self._total}")
            return False
        self._total -= 1
        if index < self._offset:
            self._offset -= 1
        elif index < self._offset + len(self._rows) and not self._stale:
            if self._rows[index - self._offset].id != memo_id:
                self._problem(f"list/didRemove at {index}: that row is not {memo_id}")
                return False
            self._rows.pop(index - self._offset)
        return True

    # -- filling the window -----------------------------------------------------------------------------

    def scroll(self, offset: int) -> None:
        """Moves the window to start at ``offset`` (kept within the list); its rows are then fetched."""
        with self._lock:
            offset = max(0, min(offset, self._total - 1))
            if offset != self._offset:
                self._offset = offset
                self._forget_rows()

    def offer_window(self, offset: int, page: ListPage) -> None:
        """Takes a ``memo/list`` page asked for at ``offset``, as its response is read.

        A response describes the list after every notification before it, so its rows stand at
        ``offset`` in the list as the mirror now holds it, however the list moved while the request was
        on its way. It fills the window when the window still starts there; otherwise the caller asks
        again.
        """
        with self._lock:
            self._total = page.total
            if offset == self._offset:
                self._rows = list(page.rows[:self.count])
                self._stale = False

    def _observe_first_page(self, page: ListPage) -> None:
        # A search answers with its first page: the window moves to the top of the new list.
        self._offset = 0
        self._total = page.total
        self._rows = list(page.rows[:self.count])
        self._stale = False

    def _observe_page(self, offset: Any, page: ListPage) -> None:
        self._total = page.total

"""A front end on a `Server`: the Python client's `Mirror`, fed the messages the strict checker reads.

What a front end holds (the list rows, the selection and the detail pane) is the client library's
`cloudnotes_client.Mirror`, applied here to each notification a request brings, then to its response,
as the client library's own connection would; after a `list/didReset` the whole list is read again
(rule S7). The mirror never fixes what the server says: what does not fit is one of its `problems`, and
here every problem fails the test at once. `check_mirror()` is rule S7: the mirror equals `memo/list`,
the selection index is the selected memo's place in it, the detail pane shows it as the store holds it.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

from cloudnotes_client import ListPage, Mirror, Notification

REFETCH_ATTEMPTS = 20


class FrontEnd:
    """The mirror side of `Server` (which provides `request`, `list_all` and `shared`)."""

    def __init__(self) -> None:
        self.mirror: Mirror | None = None
        # Every sync/didChange status, in order, once a test asks for them (else one is a mirror problem).
        self.sync_statuses: list[dict] | None = None
        self._mirror_paused = False   # while the mirror itself talks to the server

    def attach_mirror(self, notes: list[dict] = ()) -> Mirror:
        """A fresh mirror, fed `notes` (the notifications of `initialized`) and then the whole list."""
        self.mirror = Mirror()
        self.feed(notes)
        return self.mirror

    def take_response(self, notes: list[dict], method: str, params: dict | None, response: dict) -> None:
        """What one request brought: its notifications, then its response."""
        if self.mirror is not None and not self._mirror_paused:
            self.feed(notes, (method, params, response))

    def feed(self, notes: list[dict], answered: tuple | None = None, *, refetch: bool = True) -> None:
        """Applies notifications (then `answered`, a request's (method, params, response)) to the mirror;
        reads the list again when it is stale (`refetch`); fails on any problem the mirror found."""
        for note in notes:
            self._apply(note)
        if answered is not None:
            self.mirror.observe_response(*answered)
        if refetch and self.mirror.stale:
            self.refetch()
        self.assert_mirror_sound()

    def _apply(self, note: dict) -> None:
        if note["method"] == "sync/didChange" and self.sync_statuses is not None:
            self.sync_statuses.append(note["params"]["status"])
        else:
            self.mirror.apply(Notification(note["method"], note.get("params", {})))

    def assert_mirror_sound(self) -> None:
        assert not self.mirror.problems, "the notifications do not fit what the front end holds:\n" + "\n".join(
            self.mirror.problems)

    @contextmanager
    def _paused(self) -> Iterator[None]:
        self._mirror_paused = True
        try:
            yield
        finally:
            self._mirror_paused = False

    def refetch(self) -> None:
        """Reads the whole list after a `list/didReset`, as the client library's `sync` does.

        Another process may change the store meanwhile: the server then catches up first, and the
        `memo/list` reply comes after its notifications, which are applied before the pages are offered
        (a page read across a change of the list is dropped, and the list read again)."""
        mirror = self.mirror
        with self._paused():
            for _ in range(REFETCH_ATTEMPTS):
                if not mirror.stale:
                    return
                generation, offset = mirror.generation, 0
                while mirror.stale and mirror.generation == generation:
                    params = {"offset": offset, "limit": 1000}
                    notes, response = self.request("memo/list", params)
                    for note in notes:
                        self._apply(note)
                    mirror.observe_response("memo/list", params, response)
                    assert "result" in response, f"memo/list failed: {response}"
                    page = ListPage.from_json(response["result"])
                    mirror.offer_page(generation, offset, page)
                    offset += len(page.rows)
                    if not page.rows or offset >= page.total:
                        break
        assert not mirror.stale, f"the list kept changing while the mirror read it: {list(mirror.recent)[-12:]}"

    def check_mirror(self) -> dict:
        """Rule S7: the mirror equals memo/list; the selection index is the selected memo's place in it;
        the detail pane shows the selected memo as the store holds it. Returns the list."""
        mirror = self.mirror
        with self._paused():
            listing = self.list_all()
            assert mirror.rows is not None, "the mirror is stale"
            recent = list(mirror.recent)[-12:]
            assert list(mirror.ids) == [r["id"] for r in listing["rows"]], (
                "mirror order differs from memo/list:\n mirror: %s\n list:   %s\n notifications: %s" % (
                    [r.title for r in mirror.rows], [r["title"] for r in listing["rows"]], recent))
            assert [row.to_json() for row in mirror.rows] == listing["rows"], "mirror rows differ from memo/list rows"
            selection, detail = mirror.selection, mirror.detail
            if selection.id is None:
                assert selection.index is None, "nothing selected but an index"
                assert detail is None, "nothing selected but the detail shows a memo"
            else:
                ids = [r["id"] for r in listing["rows"]]
                expected_index = ids.index(selection.id) if selection.id in ids else None
                assert selection.index == expected_index, (
                    f"selection index {selection.index} but the selected memo is at {expected_index}; "
                    f"notifications: {recent}")
                assert detail is not None and detail.id == selection.id, (
                    f"the detail shows {detail and detail.id} but {selection.id} is selected")
                shared = self.shared(selection.id)
                assert detail.text == shared["text"], "the detail pane's text is stale"
                assert detail.modified_at == shared["modifiedAt"], "the detail pane's memo is stale"
        self.assert_mirror_sound()
        return listing

"""Small immutable dataclasses for the values the CloudNotes protocol carries.

Each type has a ``from_json`` that checks the members it needs, so that a malformed message from the
server surfaces as a :class:`ProtocolError` at the place it arrives instead of a ``KeyError`` later.
Timestamps stay the strings the server sent (exact milliseconds, UTC); ``parse_timestamp`` turns one
into a ``datetime`` when a caller wants arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any, ClassVar, Dict, Mapping, Optional, Tuple, Type, TypeVar, Union

from .errors import ProtocolError

JsonObject = Dict[str, Any]
#: A work-done token or a request id: the protocol allows an integer or a string.
Token = Union[int, str]


def parse_timestamp(value: str) -> datetime:
    """Parses a protocol timestamp (``2020-12-22T15:35:33.000Z``) into an aware UTC ``datetime``."""
    return datetime.strptime(value, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=timezone.utc)


def _member(obj: Any, name: str, kind: Any, where: str, optional: bool = False) -> Any:
    """Returns ``obj[name]`` after checking its JSON type; raises ProtocolError otherwise."""
    if not isinstance(obj, dict):
        raise ProtocolError(f"{where}: expected an object, got {type(obj).__name__}")
    if name not in obj:
        if optional:
            return None
        raise ProtocolError(f"{where}: missing member {name!r}")
    value = obj[name]
    if optional and value is None:
        return None
    # bool is an int to Python but never a JSON integer.
    if isinstance(value, bool) and kind is not bool:
        raise ProtocolError(f"{where}.{name}: expected {kind}, got a boolean")
    if not isinstance(value, kind):
        raise ProtocolError(f"{where}.{name}: expected {kind}, got {type(value).__name__}")
    return value


_M = TypeVar("_M", bound="_Members")


class _Members:
    """A model read from and written as a JSON object, member by member: ``_MEMBERS`` lists each one's
    attribute, JSON name and type, in the order they are checked, and ``_WHERE`` names the object in the
    error a malformed one raises, unless the caller names it."""

    _MEMBERS: ClassVar[Tuple[Tuple[str, str, Any], ...]] = ()
    _WHERE: ClassVar[str] = ""

    @classmethod
    def from_json(cls: Type[_M], obj: Any, where: Optional[str] = None) -> _M:
        """Builds the model from its JSON object; a member missing or of the wrong type raises ProtocolError."""
        where = cls._WHERE if where is None else where
        return cls(**{attribute: _member(obj, name, kind, where) for attribute, name, kind in cls._MEMBERS})

    def _to_members(self) -> JsonObject:
        return {name: getattr(self, attribute) for attribute, name, _ in self._MEMBERS}


class _Modified:
    """A model dated by its ``modified_at``."""

    @property
    def modified(self) -> datetime:
        """``modified_at`` as an aware UTC datetime."""
        return parse_timestamp(getattr(self, "modified_at"))


@dataclass(frozen=True)
class Memo(_Members, _Modified):
    """A whole memo, as the detail pane shows it (``detail/didShow`` and most request results)."""

    id: str
    text: str
    title: str
    body: str
    created_at: str
    modified_at: str
    version: int
    display_date: str

    _MEMBERS = (("id", "id", str), ("text", "text", str), ("title", "title", str), ("body", "body", str),
                ("created_at", "createdAt", str), ("modified_at", "modifiedAt", str), ("version", "version", int),
                ("display_date", "displayDate", str))
    _WHERE = "memo"

    def to_json(self) -> JsonObject:
        """The memo as the protocol spells it."""
        return self._to_members()

    @property
    def created(self) -> datetime:
        """``created_at`` as an aware UTC datetime."""
        return parse_timestamp(self.created_at)


@dataclass(frozen=True)
class MemoRow(_Members, _Modified):
    """One row of the memo list: title, one-line preview and date."""

    id: str
    title: str
    preview: str
    modified_at: str
    display_date: str

    _MEMBERS = (("id", "id", str), ("title", "title", str), ("preview", "preview", str),
                ("modified_at", "modifiedAt", str), ("display_date", "displayDate", str))
    _WHERE = "row"

    def to_json(self) -> JsonObject:
        """The row as the protocol spells it."""
        return self._to_members()


def _rows(obj: Any, where: str) -> Tuple[MemoRow, ...]:
    rows = _member(obj, "rows", list, where)
    return tuple(MemoRow.from_json(row, f"{where}.rows[{i}]") for i, row in enumerate(rows))


@dataclass(frozen=True)
class ListPage:
    """A page of the (filtered) list: ``total`` rows in all, ``rows`` from the requested offset."""

    total: int
    rows: Tuple[MemoRow, ...]

    @classmethod
    def from_json(cls, obj: Any, where: str = "memo/list") -> ListPage:
        """Builds a ListPage from a ``memo/list`` result."""
        return cls(total=_member(obj, "total", int, where), rows=_rows(obj, where))

    @property
    def ids(self) -> Tuple[str, ...]:
        """The memo ids of the rows, in order."""
        return tuple(row.id for row in self.rows)


@dataclass(frozen=True)
class SearchResult(ListPage):
    """The first page of the list after ``memo/search`` set the filter to ``query``."""

    query: str = ""

    @classmethod
    def from_json(cls, obj: Any, where: str = "memo/search") -> SearchResult:
        """Builds a SearchResult from a ``memo/search`` result."""
        return cls(total=_member(obj, "total", int, where), rows=_rows(obj, where),
                   query=_member(obj, "query", str, where))


@dataclass(frozen=True)
class TextEdit:
    """One change for ``memo/edit``: the UTF-8 bytes ``start:end`` of the text become ``text``."""

    start: int
    end: int
    text: str

    @classmethod
    def between(cls, old: str, new: str) -> TextEdit:
        """The one edit that turns ``old`` into ``new``: what lies between their common prefix and suffix."""
        before, after = old.encode(), new.encode()
        prefix = 0
        limit = min(len(before), len(after))
        while prefix < limit and before[prefix] == after[prefix]:
            prefix += 1
        suffix = 0
        while suffix < limit - prefix and before[-1 - suffix] == after[-1 - suffix]:
            suffix += 1
        # Offsets must fall between code points: step back out of a multi-byte sequence.
        while prefix > 0 and (before[prefix] if prefix < len(before) else 0) & 0xC0 == 0x80:
            prefix -= 1
        while suffix > 0 and before[len(before) - suffix] & 0xC0 == 0x80:
            suffix -= 1
        return cls(prefix, len(before) - suffix, after[prefix:len(after) - suffix].decode())

    def to_json(self) -> JsonObject:
        """The edit as the protocol spells it."""
        return {"start": self.start, "end": self.end, "text": self.text}


def apply_edits(text: str, edits: Any) -> str:
    """``text`` with ``memo/edit`` edits (TextEdit or their JSON objects) applied in order, as the server does."""
    data = text.encode()
    for change in edits:
        change = change if isinstance(change, TextEdit) else TextEdit(change["start"], change["end"], change["text"])
        if not 0 <= change.start <= change.end <= len(data):
            raise ValueError(f"edit {change} is not in the {len(data)}-byte text")
        data = data[:change.start] + change.text.encode() + data[change.end:]
    return data.decode()


# Unicode's White_Space characters: the server trims exactly these from a memo's title line.
_WHITE_SPACE = frozenset("\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
                         "\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


def split_title(text: str) -> Tuple[str, str]:
    """A memo text's (title, body), derived as the server derives them.

    The title is the first line with non-blank characters, trimmed; the body is everything after that
    line. Both are empty when there is no such line.
    """
    lines = text.split("\n")
    for index, line in enumerate(lines):
        title = line.strip("".join(_WHITE_SPACE))
        if title:
            return title, "\n".join(lines[index + 1:])
    return "", ""


@dataclass(frozen=True)
class EditResult(_Members):
    """A memo after ``memo/edit``: its new version and what is derived from the text, not the text."""

    id: str
    version: int
    title: str
    modified_at: str
    display_date: str
    #: The new text's length in UTF-8 bytes.
    length: int

    _MEMBERS = (("id", "id", str), ("version", "version", int), ("title", "title", str),
                ("modified_at", "modifiedAt", str), ("display_date", "displayDate", str), ("length", "length", int))
    _WHERE = "memo/edit"


@dataclass(frozen=True)
class ShareResult(_Members):
    """A memo rendered for a share sheet: the text to hand over and a safe file name."""

    title: str
    text: str
    mime_type: str
    filename: str

    _MEMBERS = (("title", "title", str), ("text", "text", str), ("mime_type", "mimeType", str),
                ("filename", "filename", str))
    _WHERE = "memo/share"


@dataclass(frozen=True)
class ImportResult:
    """How many memos an import created."""

    imported: int

    @classmethod
    def from_json(cls, obj: Any, where: str = "memo/import") -> ImportResult:
        """Builds an ImportResult from a ``memo/import`` result."""
        return cls(imported=_member(obj, "imported", int, where))


@dataclass(frozen=True)
class ExportResult(_Members):
    """How many memos an export wrote, and the absolute path it wrote them to."""

    exported: int
    path: str

    _MEMBERS = (("exported", "exported", int), ("path", "path", str))
    _WHERE = "memo/export"


@dataclass(frozen=True)
class ImportEntry:
    """One memo in the original app's import format (what ``memo/import`` reads and JSON export writes)."""

    title: str
    body: str
    last_modified: int
    text: Optional[str] = None
    id: Optional[str] = None

    def to_json(self) -> JsonObject:
        """The entry as the import format spells it; optional members only when set."""
        entry: JsonObject = {"title": self.title, "body": self.body, "last_modified": self.last_modified}
        if self.text is not None:
            entry["text"] = self.text
        if self.id is not None:
            entry["id"] = self.id
        return entry

    @classmethod
    def from_json(cls, obj: Any, where: str = "entry") -> ImportEntry:
        """Builds an ImportEntry from one element of an import file or an export."""
        return cls(title=_member(obj, "title", str, where), body=_member(obj, "body", str, where),
                   last_modified=_member(obj, "last_modified", int, where),
                   text=_member(obj, "text", str, where, optional=True),
                   id=_member(obj, "id", str, where, optional=True))


@dataclass(frozen=True)
class Selection:
    """The selected memo, and its index in the filtered list (None when it is outside the filter)."""

    id: Optional[str] = None
    index: Optional[int] = None


@dataclass(frozen=True)
class Progress:
    """One ``$/progress`` report for an import or export that carried a work-done token."""

    token: Token
    kind: str                       # "begin", "report" or "end"
    percentage: Optional[int] = None
    message: Optional[str] = None
    title: Optional[str] = None
    cancellable: Optional[bool] = None

    @classmethod
    def from_json(cls, params: Any) -> Progress:
        """Builds a Progress from the params of a ``$/progress`` notification."""
        token = _member(params, "token", (int, str), "$/progress")
        value = _member(params, "value", dict, "$/progress")
        where = "$/progress.value"
        return cls(token=token, kind=_member(value, "kind", str, where),
                   percentage=_member(value, "percentage", int, where, optional=True),
                   message=_member(value, "message", str, where, optional=True),
                   title=_member(value, "title", str, where, optional=True),
                   cancellable=_member(value, "cancellable", bool, where, optional=True))


@dataclass(frozen=True)
class Limits:
    """The server's limits from ``initialize`` (bytes per message and per memo, nesting, page size)."""

    max_message_bytes: int
    max_memo_bytes: int
    max_nesting_depth: int
    max_list_limit: int


@dataclass(frozen=True)
class InitializeResult:
    """What ``initialize`` answered: protocol version, server name and version, capabilities."""

    protocol_version: str
    server_name: str
    server_version: str
    requests: Tuple[str, ...]
    notifications: Tuple[str, ...]
    server_notifications: Tuple[str, ...]
    share_formats: Tuple[str, ...]
    export_formats: Tuple[str, ...]
    limits: Limits
    raw: JsonObject = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def from_json(cls, obj: Any) -> InitializeResult:
        """Builds an InitializeResult from the ``initialize`` result."""
        where = "initialize"
        info = _member(obj, "serverInfo", dict, where)
        caps = _member(obj, "capabilities", dict, where)
        limits = _member(caps, "limits", dict, "capabilities")
        return cls(
            protocol_version=_member(obj, "protocolVersion", str, where),
            server_name=_member(info, "name", str, "serverInfo"),
            server_version=_member(info, "version", str, "serverInfo"),
            requests=tuple(_member(caps, "requests", list, "capabilities")),
            notifications=tuple(_member(caps, "notifications", list, "capabilities")),
            server_notifications=tuple(_member(caps, "serverNotifications", list, "capabilities")),
            share_formats=tuple(_member(caps, "shareFormats", list, "capabilities")),
            export_formats=tuple(_member(caps, "exportFormats", list, "capabilities")),
            limits=Limits(
                max_message_bytes=_member(limits, "maxMessageBytes", int, "limits"),
                max_memo_bytes=_member(limits, "maxMemoBytes", int, "limits"),
                max_nesting_depth=_member(limits, "maxNestingDepth", int, "limits"),
                max_list_limit=_member(limits, "maxListLimit", int, "limits"),
            ),
            raw=dict(obj),
        )


@dataclass(frozen=True)
class Notification:
    """A notification the server sent: its method and params, as JSON."""

    method: str
    params: Mapping[str, Any] = field(default_factory=dict)

"""Exceptions the client raises, and the protocol's error codes.

Three kinds of failure are kept apart because a caller handles them differently:

- :class:`CloudNotesError`: the server answered the request with an error response. The session is
  fine; the request was refused (a subclass per code, e.g. :class:`VersionConflict`).
- :class:`ServerDiedError`: the server process is gone (crashed, killed, exited, or its pipes closed).
  Every request in flight and every later one raises it.
- :class:`RequestTimeoutError`: no response came within the timeout. The server may still answer later;
  the client asks it to cancel the request.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Dict, Mapping, Optional, Type

if TYPE_CHECKING:  # models imports this module, so the import is deferred to the property that needs it
    from .models import Memo

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
SERVER_NOT_INITIALIZED = -32002
REQUEST_CANCELLED = -32800
MEMO_NOT_FOUND = -33001
VERSION_CONFLICT = -33002
IMPORT_INVALID = -33003
EXPORT_FAILED = -33004
STORE_UNAVAILABLE = -33005
VERSION_NOT_FOUND = -33007

#: The name of every error code in section 9 of the protocol specification.
ERROR_NAMES: Dict[int, str] = {
    PARSE_ERROR: "ParseError",
    INVALID_REQUEST: "InvalidRequest",
    METHOD_NOT_FOUND: "MethodNotFound",
    INVALID_PARAMS: "InvalidParams",
    INTERNAL_ERROR: "InternalError",
    SERVER_NOT_INITIALIZED: "ServerNotInitialized",
    REQUEST_CANCELLED: "RequestCancelled",
    MEMO_NOT_FOUND: "MemoNotFound",
    VERSION_CONFLICT: "VersionConflict",
    IMPORT_INVALID: "ImportInvalid",
    EXPORT_FAILED: "ExportFailed",
    STORE_UNAVAILABLE: "StoreUnavailable",
    VERSION_NOT_FOUND: "VersionNotFound",
}


def _datum(key: str, summary: str) -> property:
    """A read-only property: the error's ``data[key]``, or None when the server sent none."""
    def read(self: Any) -> Any:
        return self._data(key)
    read.__doc__ = summary
    return property(read)


class ClientError(Exception):
    """Base class of every exception this package raises."""


class ProtocolError(ClientError):
    """The server sent something that is not a valid protocol message."""


class BinaryNotFoundError(ClientError, FileNotFoundError):
    """The ``cloudnotes`` executable could not be found."""


class ServerDiedError(ClientError):
    """The server process ended, or its pipes closed, so the request cannot be answered."""

    def __init__(self, message: str, returncode: Optional[int] = None, stderr: str = ""):
        detail = message if returncode is None else f"{message} (exit code {returncode})"
        if stderr.strip():
            detail += "; the server's last log lines:\n" + "\n".join(stderr.strip().splitlines()[-15:])
        super().__init__(detail)
        self.returncode = returncode
        self.stderr = stderr


class RequestTimeoutError(ClientError, TimeoutError):
    """No response arrived within the timeout (the request may still be running on the server)."""

    def __init__(self, method: str, request_id: Any, timeout: float, message: Optional[str] = None):
        super().__init__(message or f"no response to {method} (id {request_id!r}) within {timeout:g} s")
        self.method = method
        self.request_id = request_id
        self.timeout = timeout


class CloudNotesError(ClientError):
    """The server answered a request with a JSON-RPC error.

    ``code`` and ``message`` are the error's; ``data`` is its optional object for programs (None when the
    server sent none). ``method`` names the request that failed.
    """

    def __init__(self, code: int, message: str, data: Optional[Mapping[str, Any]] = None,
                 method: Optional[str] = None):
        where = f"{method}: " if method else ""
        super().__init__(f"{where}{message} ({code} {ERROR_NAMES.get(code, 'unknown error')})")
        self.code = code
        self.message = message
        self.data = data
        self.method = method

    @property
    def name(self) -> str:
        """The error code's name from the specification, such as ``"MemoNotFound"``."""
        return ERROR_NAMES.get(self.code, "UnknownError")

    def _data(self, key: str) -> Any:
        return self.data.get(key) if isinstance(self.data, Mapping) else None

    param = _datum("param", "For -32602, the path of the param at fault (``data.param``), such as ``\"text\"``.")
    reason = _datum("reason", "For import, export and store errors, ``data.reason``.")

    @property
    def current_memo(self) -> Optional[Memo]:
        """For a version conflict (-33002), the memo as the server holds it now, to merge and retry."""
        memo = self._data("memo")
        if not isinstance(memo, dict):
            return None
        from .models import Memo
        return Memo.from_json(memo, "error.data.memo")

    @classmethod
    def from_response(cls, error: Any, method: Optional[str] = None) -> CloudNotesError:
        """Builds the exception (the subclass for its code) from a response's ``error`` member."""
        if not isinstance(error, dict) or not isinstance(error.get("code"), int) or isinstance(error.get("code"), bool):
            raise ProtocolError(f"{method or 'response'}: malformed error member {error!r}")
        code = error["code"]
        message = error.get("message")
        data = error.get("data")
        subclass = _SUBCLASSES.get(code, cls)
        return subclass(code, message if isinstance(message, str) else "", data if isinstance(data, dict) else None,
                        method)


class InvalidRequest(CloudNotesError):
    """-32600: not a valid request here (a second ``initialize``, any request after ``shutdown``, ...)."""


class MethodNotFound(CloudNotesError):
    """-32601: the server has no such method (``data.method``)."""


class InvalidParams(CloudNotesError):
    """-32602: a param is missing, of the wrong type or out of range (``data.param``)."""


class InternalError(CloudNotesError):
    """-32603: a bug in the server."""


class ServerNotInitialized(CloudNotesError):
    """-32002: a request before ``initialize``."""


class RequestCancelled(CloudNotesError):
    """-32800: the request was cancelled with ``$/cancelRequest``."""


class MemoNotFound(CloudNotesError):
    """-33001: no live memo has that id (``data.id``)."""

    memo_id = _datum("id", "The id asked for.")


class VersionConflict(CloudNotesError):
    """-33002: ``memo/update`` was based on an old version; ``current_memo`` is the memo now."""

    base_version = _datum("baseVersion", "The ``baseVersion`` the refused update carried.")


class VersionNotFound(CloudNotesError):
    """-33007: the memo keeps no such version (never kept, or pruned); ``memo/history`` lists the kept ones."""

    version = _datum("version", "The version number asked for.")


class ImportInvalid(CloudNotesError):
    """-33003: the import source is not in the expected format; nothing was imported."""

    index = _datum("index", "The 0-based entry at fault, when one entry was.")

    path = _datum("path", "The file, for a file that cannot be read or is not a JSON array.")


class ExportFailed(CloudNotesError):
    """-33004: the export target exists (without ``overwrite``) or cannot be written."""

    path = _datum("path", "The absolute target path.")


class StoreUnavailable(CloudNotesError):
    """-33005: the store refused the change (disk full, read-only, I/O error); nothing changed."""


_SUBCLASSES: Dict[int, Type[CloudNotesError]] = {
    INVALID_REQUEST: InvalidRequest,
    METHOD_NOT_FOUND: MethodNotFound,
    INVALID_PARAMS: InvalidParams,
    INTERNAL_ERROR: InternalError,
    SERVER_NOT_INITIALIZED: ServerNotInitialized,
    REQUEST_CANCELLED: RequestCancelled,
    MEMO_NOT_FOUND: MemoNotFound,
    VERSION_CONFLICT: VersionConflict,
    IMPORT_INVALID: ImportInvalid,
    EXPORT_FAILED: ExportFailed,
    STORE_UNAVAILABLE: StoreUnavailable,
    VERSION_NOT_FOUND: VersionNotFound,
}

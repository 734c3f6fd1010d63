"""A Python client for the CloudNotes memo server (``cloudnotes serve``, JSON-RPC 2.0 over JSON lines).

Start with :class:`CloudNotesClient`; the protocol itself is specified in ``protocol/README.md`` of the
CloudNotes repository.
"""

from __future__ import annotations

# Defined before the imports below: client.py reads it while this package is still being imported.
__version__ = "0.1.0"

from .client import USE_DEFAULT, Call, Client, CloudNotesClient
from .connection import Connection, PendingRequest
from .errors import (ERROR_NAMES, BinaryNotFoundError, ClientError, CloudNotesError, ExportFailed, ImportInvalid,
                     InternalError, InvalidParams, InvalidRequest, MemoNotFound, MethodNotFound, ProtocolError,
                     RequestCancelled, RequestTimeoutError, ServerDiedError, ServerNotInitialized,
                     StoreUnavailable, VersionConflict, VersionNotFound)
from .mirror import Mirror, MirrorState
from .models import (EditResult, ExportResult, ImportEntry, ImportResult, InitializeResult, Limits, ListPage, Memo,
                     MemoRow, Notification, Progress, SearchResult, Selection, ShareResult, TextEdit, apply_edits,
                     parse_timestamp, split_title)
from .transport import ServerProcess, find_binary
from .window import WindowMirror

__all__ = [
    "__version__",
    "CloudNotesClient", "Client", "Call", "USE_DEFAULT", "Connection", "PendingRequest", "Mirror", "MirrorState", "WindowMirror",
    "ServerProcess", "find_binary",
    "Memo", "MemoRow", "ListPage", "SearchResult", "ShareResult", "ImportEntry", "ImportResult", "ExportResult",
    "InitializeResult", "Limits", "Notification", "Progress", "Selection", "parse_timestamp",
    "TextEdit", "EditResult", "apply_edits", "split_title",
    "ERROR_NAMES", "ClientError", "CloudNotesError", "ProtocolError", "BinaryNotFoundError", "ServerDiedError",
    "RequestTimeoutError", "InvalidRequest", "MethodNotFound", "InvalidParams", "InternalError",
    "ServerNotInitialized", "RequestCancelled", "MemoNotFound", "VersionConflict", "ImportInvalid", "ExportFailed",
    "StoreUnavailable", "VersionNotFound",
]

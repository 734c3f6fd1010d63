"""What the end-to-end tests share: one package for driving `cloudnotes`, in every way they drive it.

- `paths`: the repository, the binary under test (`CLOUDNOTES_BIN`), the sample import file.
- `schema`: `protocol/protocol.schema.json`, its error codes and methods, and the checks of every message
  the server writes (framing aside): JSON-RPC shape, ids, schema, timestamps.
- `framing`: the two framings of the protocol, as bytes on the wire.
- `server`: `Server`, the strict raw-bytes protocol checker that spawns `cloudnotes serve`;
  `front_end`: the front end it may keep, the Python client's `Mirror`, fed the messages it reads.
- `session`: small helpers over a `Server` (notifications by method, progress, generated memos).
- `cli`: `Cli`, the one driver of the shell subcommands (`cloudnotes new|edit|list|sync|...`).
- `remote`: the one reader of a sync remote's layout (protocol/sync.md), on a folder or over WebDAV.
- `syncing`: stores that sync with each other (made side by side, settled, compared).
- `dav_http`, `dav_servers`, `dav_kinds`, `fault_proxy`: WebDAV for the sync tests (a client, servers
  run by the tests, Apache's and nginx's own settings, and a proxy that breaks requests).
- `store_file`: a store's file read directly (memos, the search index's progress, soundness).

The Python client library (clients/python) is importable once this package is: the tests use its
`Mirror` (and so its `apply_edits`) instead of keeping copies of their own, and the client's own test
suite uses this package's `schema.MessageChecker`.
"""

from __future__ import annotations

import sys
from pathlib import Path

_CLIENT_LIBRARY = Path(__file__).resolve().parents[3] / "clients" / "python"
if str(_CLIENT_LIBRARY) not in sys.path:
    sys.path.insert(0, str(_CLIENT_LIBRARY))

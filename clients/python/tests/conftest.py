"""Shared fixtures for the client's tests, which double as a conformance suite for the protocol.

Every test talks to the real server binary ($CLOUDNOTES_BIN, else ``cloudnotes`` on PATH) through
pipes, on a fresh temporary store. Every message the server writes is validated against
``protocol/protocol.schema.json`` by a trace hook, and at the end of each test the client must have seen
no protocol problem and its mirror no inconsistency.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import threading
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

import pytest

TESTS = Path(__file__).resolve().parent
CLIENT_ROOT = TESTS.parent
REPO = CLIENT_ROOT.parents[1]
# The package is used from the source tree, so the suite runs without installing anything.
sys.path.insert(0, str(CLIENT_ROOT))

try:  # Hypothesis' example database, kept between runs, under the git-ignored .build/: not in $TMPDIR,
    # which the tests must leave as they found it (scripts/test checks)
    from hypothesis.configuration import set_hypothesis_home_dir
    set_hypothesis_home_dir(os.path.join(REPO, ".build", "hypothesis", "python-client"))
except ImportError:  # pragma: no cover - hypothesis is required by the property test, which then fails
    pass

from cloudnotes_client import CloudNotesClient  # noqa: E402

SCHEMA_PATH = REPO / "protocol" / "protocol.schema.json"


def find_server_binary() -> Optional[str]:
    """The binary the suite runs: $CLOUDNOTES_BIN, else ``cloudnotes`` on PATH."""
    return os.environ.get("CLOUDNOTES_BIN") or shutil.which("cloudnotes")


def pytest_report_header(config: Any) -> str:
    return f"cloudnotes server: {find_server_binary() or 'NOT FOUND (set CLOUDNOTES_BIN)'}"


@pytest.fixture(scope="session")
def binary() -> str:
    """The server executable; a missing one fails every test that needs it, with the reason."""
    found = find_server_binary()
    if not found:
        pytest.fail("no cloudnotes server to test: set CLOUDNOTES_BIN to the built binary "
                    "(e.g. CLOUDNOTES_BIN=.build/release/cloudnotes) or put `cloudnotes` on PATH", pytrace=False)
    if not (os.path.isfile(found) and os.access(found, os.X_OK)):
        pytest.fail(f"CLOUDNOTES_BIN={found!r} is not an executable file", pytrace=False)
    return os.path.abspath(found)


# ---------------------------------------------------------------------------------------------------
# Schema validation of everything the server writes
# ---------------------------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def schema() -> Dict[str, Any]:
    if not SCHEMA_PATH.is_file():
        pytest.fail(f"the protocol schema is missing: {SCHEMA_PATH}", pytrace=False)
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


class SchemaChecker:
    """A trace hook that validates every received message against the protocol schema."""

    def __init__(self, schema: Dict[str, Any]):
        import jsonschema
        self._jsonschema = jsonschema
        self.schema = schema
        self.codes = {entry["code"] for entry in schema["errors"]}
        self.server_notifications = {m for m, d in schema["methods"].items()
                                     if d["kind"] == "notification" and d["direction"].startswith("server")}
        self.sent: Dict[Any, str] = {}
        self.violations: List[str] = []
        self.received: List[Dict[str, Any]] = []
        self._validators: Dict[str, Any] = {}
        self._lock = threading.Lock()

    def _validator(self, method: str, part: str) -> Any:
        key = f"{method}#{part}"
        if key not in self._validators:
            root = dict(self.schema)
            root["$ref"] = "#/methods/" + method.replace("~", "~0").replace("/", "~1") + "/" + part
            self._validators[key] = self._jsonschema.Draft202012Validator(
                root, format_checker=self._jsonschema.FormatChecker())
        return self._validators[key]

    def _check(self, method: str, part: str, value: Any, shown: str) -> None:
        for error in self._validator(method, part).iter_errors(value):
            path = "/".join(map(str, error.absolute_path)) or "$"
            self.violations.append(f"{method} {part} {path}: {error.message} in {shown}")

    def __call__(self, direction: str, message: Dict[str, Any]) -> None:
        with self._lock:
            if direction == "send":
                if "id" in message and "method" in message:
                    self.sent[message["id"]] = message["method"]
                return
            self.received.append(message)
            shown = json.dumps(message, ensure_ascii=False)[:300]
            if "method" in message:
                method = message["method"]
                if method not in self.server_notifications:
                    self.violations.append(f"unknown server notification {method!r}: {shown}")
                else:
                    self._check(method, "params", message.get("params", {}), shown)
                return
            extra = set(message) - {"jsonrpc", "id", "result", "error"}
            if extra:
                self.violations.append(f"response with unexpected members {sorted(extra)}: {shown}")
            method = self.sent.get(message.get("id"))
            if "result" in message and method is not None:
                result = message["result"]
                if isinstance(result, dict) and isinstance(result.get("rows"), list) and len(result["rows"]) > 50:
                    # Validating tens of thousands of rows would dominate the suite's time; the first
                    # rows of a page are as good a sample as any.
                    result = dict(result, rows=result["rows"][:50])
                self._check(method, "result", result, shown)
            if "error" in message:
                error = message["error"]
                if not isinstance(error, dict) or error.get("code") not in self.codes:
                    self.violations.append(f"undocumented error {error!r}")
                elif set(error) - {"code", "message", "data"} or not isinstance(error.get("message"), str) or (
                        "data" in error and not isinstance(error["data"], dict)):
                    self.violations.append(f"malformed error object: {shown}")


# ---------------------------------------------------------------------------------------------------
# Clients on temporary stores
# ---------------------------------------------------------------------------------------------------

class ClientFactory:
    """Starts clients for one test, and at the end closes them and collects every problem seen."""

    def __init__(self, binary: str, schema: Dict[str, Any], root: Path):
        self.binary = binary
        self.schema = schema
        self.root = root
        self.store = root / "store" / "notes.sqlite"
        self.clients: List[CloudNotesClient] = []
        self.checkers: List[SchemaChecker] = []

    def __call__(self, store: Optional[Path] = None, **kwargs: Any) -> CloudNotesClient:
        checker = SchemaChecker(self.schema)
        kwargs.setdefault("binary", self.binary)
        kwargs.setdefault("timeout", 15.0)
        kwargs.setdefault("long_timeout", 60.0)
        self.checkers.append(checker)
        client = CloudNotesClient(store if store is not None else self.store, trace=checker, **kwargs)
        self.clients.append(client)
        return client

    def finish(self) -> List[str]:
        problems: List[str] = []
        for client in self.clients:
            try:
                client.close(timeout=15)
            except Exception as error:  # a test may have left it in any state
                problems.append(f"close() raised {error!r}")
            problems += client.problems
        for checker in self.checkers:
            problems += checker.violations
        return problems


@pytest.fixture
def make_client(binary: str, schema: Dict[str, Any], tmp_path: Path) -> Callable[..., CloudNotesClient]:
    """A factory of clients (each spawning a server) on this test's temporary store."""
    factory = ClientFactory(binary, schema, tmp_path)
    yield factory
    problems = factory.finish()
    assert not problems, "protocol problems seen during the test:\n" + "\n".join(problems[:20])


@pytest.fixture
def client(make_client: Callable[..., CloudNotesClient]) -> CloudNotesClient:
    """An initialized client (en-US, UTC) on a fresh, empty store."""
    return make_client()


@pytest.fixture
def store_path(tmp_path: Path) -> Path:
    """The store path that ``make_client()`` uses by default."""
    return tmp_path / "store" / "notes.sqlite"


def mirror_matches_list(client: CloudNotesClient) -> None:
    """Asserts rule 7: the mirror holds exactly what ``memo/list`` returns, and a current selection and detail."""
    state = client.mirror.snapshot()
    assert state.rows is not None, "the mirror is stale after a request returned"
    listing = client.list_all()
    assert [r.id for r in state.rows] == [r.id for r in listing.rows], (
        f"mirror order {[r.title for r in state.rows]} differs from memo/list {[r.title for r in listing.rows]}")
    assert state.rows == listing.rows, "mirror rows differ from memo/list"
    assert state.total == listing.total
    selected = state.selection.id
    if selected is None:
        assert state.selection.index is None
        assert state.detail is None, "nothing is selected but the detail pane shows a memo"
    else:
        ids = [r.id for r in listing.rows]
        assert state.selection.index == (ids.index(selected) if selected in ids else None)
        assert state.detail is not None and state.detail.id == selected, "the detail pane does not show the selection"
        stored = json.loads(client.share(selected, "json").text)
        assert (state.detail.text, state.detail.modified_at) == (stored["text"], stored["modifiedAt"]), (
            "the detail pane shows a stale memo")


def collect(client: CloudNotesClient, action: Callable[..., Any], *args: Any, **kwargs: Any):
    """Runs ``action(*args, **kwargs)`` and returns (its result, the notifications it caused, in order)."""
    client.drain_notifications()
    result = action(*args, **kwargs)
    return result, client.drain_notifications()


def methods(notes: List[Any], progress: bool = False) -> List[str]:
    """The methods of ``notes`` (without ``$/progress`` unless asked for)."""
    return [n.method for n in notes if progress or n.method != "$/progress"]


BIG_IMPORT_SIZE = 20_000


def make_entries(count: int, prefix: str = "generated", last_modified: int = 1_500_000_000) -> List[Dict[str, Any]]:
    """``count`` memos in the original app's import format, all with one timestamp."""
    return [{"title": f"{prefix} {i}", "body": f"body of {prefix} {i}\nsecond line", "last_modified": last_modified}
            for i in range(count)]


@pytest.fixture(scope="session")
def big_import_file(tmp_path_factory: Any) -> Path:
    """A file of 20,000 memos: an import that runs long enough (about a second) to be cancelled."""
    path = tmp_path_factory.mktemp("big") / "memos-20k.json"
    path.write_text(json.dumps(make_entries(BIG_IMPORT_SIZE, "bulk")), encoding="utf-8")
    return path

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

# The end-to-end tests' support package, for the one checker of every message the server writes.
sys.path.append(str(REPO / "Tests" / "EndToEnd"))

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
    """A trace hook that checks every received message as the end-to-end harness does (the one checker
    of the repository, `cnsupport.schema.MessageChecker` in Tests/EndToEnd): valid against the protocol
    schema, one response per request sent, timestamps with milliseconds."""

    def __init__(self, schema: Dict[str, Any]):
        from cnsupport.schema import MessageChecker
        self.schema = schema
        self.checker = MessageChecker()
        self.violations: List[str] = []
        self.received: List[Dict[str, Any]] = []
        self._lock = threading.Lock()

    def __call__(self, direction: str, message: Dict[str, Any]) -> None:
        with self._lock:
            if direction == "send":
                if "id" in message and "method" in message:
                    self.checker.register(message["id"], message["method"])
                return
            self.received.append(message)
            result = message.get("result")
            if isinstance(result, dict) and isinstance(result.get("rows"), list) and len(result["rows"]) > 50:
                # Validating tens of thousands of rows would dominate the suite's time; the first
                # rows of a page are as good a sample as any.
                message = dict(message, result=dict(result, rows=result["rows"][:50]))
            shown = json.dumps(message, ensure_ascii=False)[:300]
            self.violations += [f"{problem} in {shown}" for problem in self.checker.problems(message)]


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
    """Asserts rule S7: the mirror holds exactly what ``memo/list`` returns, and a current selection and detail."""
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

"""The conversation transcripts in protocol/examples/ replayed against the built server, and the
specification checked against the machine-readable description.

- every transcript passes `protocol/tools/replay.py` (a fresh server on a fresh store each), in both
  framings: as JSON lines, and with each client line sent as a Content-Length body;
- every message the server wrote during a transcript passes the checks the harness makes of every message
  (`cnsupport.schema.MessageChecker`): valid against `protocol/protocol.schema.json` (notification
  params against `methods[m].params`, results against `methods[m].result` of the request with that id,
  error codes among `errors`), one response per request, timestamps with milliseconds;
- `protocol/README.md` has a "### `method`" heading for every method of the description and lists every
  error code in its error table.

It imports replay.py by path. The binary is $CLOUDNOTES_BIN, else .build/debug/cloudnotes.
"""

from __future__ import annotations

import functools
import importlib.util
import re
import sys
from pathlib import Path
from typing import Any, Dict

import pytest

from cnsupport.paths import REPO
from cnsupport.schema import CODE, METHODS, exchange_problems

PROTOCOL = REPO / "protocol"
README = PROTOCOL / "README.md"
EXAMPLES = sorted((PROTOCOL / "examples").glob("*.jsonl"))
ERROR_NAMES = {code: name for name, code in CODE.items()}


def _load_replay():
    path = PROTOCOL / "tools" / "replay.py"
    spec = importlib.util.spec_from_file_location("cloudnotes_replay", path)
    assert spec is not None and spec.loader is not None, f"cannot load {path}"
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is created
    spec.loader.exec_module(module)
    return module


replay = _load_replay()


@functools.lru_cache(maxsize=None)
def _replayed(path: Path, framing: str):
    """Each transcript runs once per framing; both tests below look at the same run."""
    return replay.replay(path, framing=framing)


@pytest.fixture(params=[(path, framing) for path in EXAMPLES for framing in replay.FRAMINGS],
                ids=lambda case: f"{case[0].name}-{case[1]}")
def replayed(request):
    """A transcript of protocol/examples/ replayed in one framing."""
    return _replayed(*request.param)


# --------------------------------------------------------------------------------------------------
# The transcripts


def test_there_are_transcripts():
    assert 6 <= len(EXAMPLES) <= 10, f"protocol/examples/ should hold 6-10 transcripts, found {len(EXAMPLES)}"


def test_transcript_replays(replayed):
    if not replayed.ok:
        pytest.fail(replayed.report, pytrace=False)


def test_transcript_messages_match_schema(replayed):
    result = replayed
    if not any(side == "server" for side, _ in result.exchanged):
        pytest.fail(f"the server wrote nothing to check: {result.report}", pytrace=False)
    problems = exchange_problems(result.exchanged)
    assert not problems, "\n".join(problems[:20])


# --------------------------------------------------------------------------------------------------
# The specification


def _readme() -> str:
    return README.read_text(encoding="utf-8")


def test_readme_has_a_heading_for_every_method():
    headings = set(re.findall(r"^### `([^`]+)`\s*$", _readme(), flags=re.MULTILINE))
    missing = sorted(set(METHODS) - headings)
    assert not missing, "protocol/README.md has no '### `method`' heading for: " + ", ".join(missing)
    unknown = sorted(headings - set(METHODS))
    assert not unknown, "protocol/README.md documents methods the description does not have: " + ", ".join(unknown)


def _error_table_rows() -> Dict[int, str]:
    """The rows of README.md's error table (the table whose header starts with "Code"), by code."""
    rows: Dict[int, str] = {}
    in_table = False
    for line in _readme().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")] if line.lstrip().startswith("|") else None
        if cells is None:
            in_table = False
            continue
        if cells and cells[0].lower() == "code":
            in_table = True
            continue
        if in_table:
            match = re.fullmatch(r"`?(-?\d+)`?", cells[0])
            if match:
                rows[int(match.group(1))] = line
    return rows


def test_readme_error_table_lists_every_error_code():
    rows = _error_table_rows()
    assert rows, "protocol/README.md has no error table (a Markdown table whose first header cell is 'Code')"
    missing = sorted(code for code in ERROR_NAMES if code not in rows)
    assert not missing, f"the error table of protocol/README.md lacks codes {missing}"
    misnamed = sorted(code for code, name in ERROR_NAMES.items() if name not in rows[code])
    assert not misnamed, f"the error table names these codes differently from the description: {misnamed}"
    unknown = sorted(code for code in rows if code not in ERROR_NAMES)
    assert not unknown, f"the error table lists codes the description does not have: {unknown}"


def test_readme_points_to_the_description_and_the_examples():
    text = _readme()
    assert "protocol.schema.json" in text and "examples/" in text


# --------------------------------------------------------------------------------------------------
# The replay tool's own rules (so that a passing transcript means what the README says it means)


@pytest.mark.parametrize(
    "expected, actual, ok",
    [
        ({"a": 1}, {"a": 1}, True),
        ({"a": 1}, {"a": 1, "b": 2}, False),  # no extra keys
        ({"a": 1, "b": 2}, {"a": 1}, False),
        ({"a": "<any>"}, {"a": {"deep": [1]}}, True),
        ({"a": "<any>"}, {}, False),  # <any> matches a value, not a missing key
        ([1, 2], [1, 2, 3], False),
        ({"a": 1}, {"a": True}, False),  # JSON types are compared, not Python truthiness
        ({"a": 0}, {"a": False}, False),
        ({"a": None}, {"a": None}, True),
        ({"a": 1}, {"a": 1.0}, True),
    ],
)
def test_matcher(expected: Any, actual: Any, ok: bool):
    assert (replay.match(expected, actual, {}) is None) == ok


def test_matcher_variables():
    variables: Dict[str, Any] = {}
    assert replay.match({"id": "<$x>"}, {"id": "abc"}, variables) is None
    assert variables == {"x": "abc"}
    assert replay.match({"id": "<$x>"}, {"id": "abc"}, variables) is None
    assert replay.match({"id": "<$x>"}, {"id": "abd"}, variables) is not None
    assert replay.match({"m": "No memo with id <$x>"}, {"m": "No memo with id abc"}, variables) is None
    assert replay.match({"m": "No memo with id <$x>"}, {"m": "No memo with id abd"}, variables) is not None
    assert replay.match({"m": "id <$unbound>"}, {"m": "id abc"}, variables) is not None
    assert replay.substitute('{"id":"<$x>"}', variables, 1) == '{"id":"abc"}'


def test_transcript_parser(tmp_path: Path):
    path = tmp_path / "t.jsonl"
    path.write_text(
        '# a comment\n\n> {"jsonrpc":"2.0","id":1,"method":"memo/list"}\n>raw not json\n'
        '>bytes a\\xffb\\0\\r\n< {"jsonrpc":"2.0","id":1,"result":"<any>"}\n# exit: 1\n',
        encoding="utf-8",
    )
    transcript = replay.parse_transcript(path)
    assert [step.kind for step in transcript.steps] == ["send", "raw", "raw", "expect"]
    assert transcript.steps[1].payload == b"not json\n"
    assert transcript.steps[2].payload == b"a\xffb\x00\r\n"
    assert transcript.exit_code == 1


def test_content_length_framing_of_client_lines():
    # Each line a step sends becomes one body, as the JSON-lines server would read that line (without
    # its \n or \r\n); a blank line, which JSON lines ignore, is not sent.
    assert replay.framed(b'{"a":1}\r\n', "content-length") == b'Content-Length: 7\r\n\r\n{"a":1}'
    assert replay.framed(b'a\xffb\x00\nc\n', "content-length") == b"Content-Length: 4\r\n\r\na\xffb\x00Content-Length: 1\r\n\r\nc"
    assert replay.framed(b" \t\r\n", "content-length") == b""
    assert replay.framed(b'{"a":1}\r\n', "lines") == b'{"a":1}\r\n'

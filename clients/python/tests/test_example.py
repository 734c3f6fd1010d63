"""The example script, run as a user would: import a sample file and print the aligned list."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from cloudnotes_client import CloudNotesClient
from conftest import CLIENT_ROOT

SCRIPT = CLIENT_ROOT / "examples" / "import_samples.py"
SAMPLE = [
    {"title": "장보기 목록", "body": "우유 2통\n계란 한 판", "last_modified": 1608651333},
    {"title": "Reading list", "body": "- The Art of Unix Programming\n- A Philosophy of Software Design",
     "last_modified": 1608651333},
    {"title": "Trip to Busan ✈️", "body": "KTX 07:30", "last_modified": 1767225600},
    {"title": "", "body": "A memo without a title line of its own", "last_modified": 1500000000},
    {"title": "A title far too long to fit in the title column of the table", "body": "x" * 200,
     "last_modified": 1400000000},
]


def run_script(binary, *args):
    # Run from elsewhere, without PYTHONPATH: the script must find the package by itself.
    env = dict(os.environ, CLOUDNOTES_BIN=binary)
    env.pop("PYTHONPATH", None)
    return subprocess.run([sys.executable, str(SCRIPT), *args], capture_output=True, text=True, env=env,
                          cwd="/", timeout=60)


def test_the_example_imports_a_sample_and_prints_aligned_columns(binary, tmp_path):
    sample = tmp_path / "sample.json"
    sample.write_text(json.dumps(SAMPLE, ensure_ascii=False), encoding="utf-8")
    store = tmp_path / "notes.sqlite"
    done = run_script(binary, str(sample), "--store", str(store))
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].split() == ["TITLE", "DATE", "PREVIEW"]
    rows = lines[2:2 + len(SAMPLE)]
    assert lines[2 + len(SAMPLE)] == "" and f"Imported {len(SAMPLE)} memos" in lines[-1]

    with CloudNotesClient(store, binary=binary) as client:
        listing = client.list_all()
    assert listing.total == len(SAMPLE), "the memos are in the store given"
    assert [r.title for r in listing.rows] == ["Trip to Busan ✈️", "장보기 목록", "Reading list",
                                               "A memo without a title line of its own",
                                               "A title far too long to fit in the title column of the table"]

    sys.path.insert(0, str(SCRIPT.parent))
    try:
        from import_samples import display_width
    finally:
        sys.path.remove(str(SCRIPT.parent))
    date_columns = set()
    for line, row in zip(rows, listing.rows):
        assert line.startswith(row.title[:20]), f"{line!r} does not start with the title {row.title!r}"
        at = line.index(row.display_date)
        date_columns.add(display_width(line[:at]))
        preview = line[at + len(row.display_date):].strip()
        assert row.preview.startswith(preview.rstrip("…")), f"{preview!r} is not the start of {row.preview!r}"
    assert len(date_columns) == 1, f"the dates do not line up: {done.stdout}"
    assert "…" in rows[-1], "a long title or preview is cut"


def test_the_example_reports_a_bad_sample_file(binary, tmp_path):
    sample = tmp_path / "broken.json"
    sample.write_text('[{"title": "no body"}]', encoding="utf-8")
    done = run_script(binary, str(sample))
    assert done.returncode == 1
    assert "import failed" in done.stderr and "ImportInvalid" in done.stderr

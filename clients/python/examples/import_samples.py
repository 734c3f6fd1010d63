#!/usr/bin/env python3
"""Imports memos in the original app's sample format into a store and prints the list.

Usage::

    python3 clients/python/examples/import_samples.py SAMPLE.json [--store notes.sqlite]
        [--binary path/to/cloudnotes] [--locale ko-KR] [--time-zone Asia/Seoul] [--progress]

SAMPLE.json is a JSON array of ``{"title", "body", "last_modified"}`` entries (what the original app
shipped, and what ``memo/export`` writes). Without ``--store`` the memos go into a temporary store that
is deleted afterwards. Each run adds new memos: an import never merges with what the store holds.
The list is printed as aligned columns: title, date, preview.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import unicodedata
from typing import List, Optional, Sequence

try:
    import cloudnotes_client
except ImportError:  # run from a checkout without installing: the package sits next to this folder
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import cloudnotes_client

from cloudnotes_client import CloudNotesClient, MemoRow, Progress

TITLE_WIDTH = 32
PREVIEW_WIDTH = 48
GAP = "  "


def char_width(text: str, index: int) -> int:
    """How many terminal columns the character at ``index`` takes (0, 1 or 2)."""
    char = text[index]
    if unicodedata.category(char) in ("Mn", "Me", "Cf") or "\ufe00" <= char <= "\ufe0f":
        return 0
    if unicodedata.east_asian_width(char) in ("W", "F"):
        return 2
    # A symbol followed by VARIATION SELECTOR-16 is drawn as a wide emoji.
    if index + 1 < len(text) and text[index + 1] == "\ufe0f":
        return 2
    return 1


def display_width(text: str) -> int:
    """How many terminal columns ``text`` takes; Korean and other wide characters count two."""
    return sum(char_width(text, i) for i in range(len(text)))


def fit(text: str, width: int) -> str:
    """``text`` cut to ``width`` columns (with ``…`` when cut) and padded with spaces to exactly ``width``."""
    if display_width(text) > width:
        kept, used = [], 0
        for i in range(len(text)):
            step = char_width(text, i)
            if used + step > width - 1:
                break
            kept.append(text[i])
            used += step
        text = "".join(kept) + "…"
    return text + " " * (width - display_width(text))


def format_table(rows: Sequence[MemoRow]) -> List[str]:
    """The rows as aligned lines: a header, a rule, then title, date and preview per memo."""
    title_width = min(TITLE_WIDTH, max([display_width("TITLE")] + [display_width(r.title) for r in rows]))
    date_width = max([display_width("DATE")] + [display_width(r.display_date) for r in rows])
    lines = [fit("TITLE", title_width) + GAP + fit("DATE", date_width) + GAP + "PREVIEW",
             "-" * title_width + GAP + "-" * date_width + GAP + "-" * min(PREVIEW_WIDTH, 7)]
    for row in rows:
        preview = fit(row.preview, PREVIEW_WIDTH).rstrip() if row.preview else ""
        lines.append((fit(row.title, title_width) + GAP + fit(row.display_date, date_width) + GAP + preview).rstrip())
    return lines


def show_progress(progress: Progress) -> None:
    """Prints import progress to stderr (it runs on the client's reader thread)."""
    detail = progress.message or progress.title or ""
    percent = f"{progress.percentage:3d}%" if progress.percentage is not None else "    "
    print(f"[{percent}] {progress.kind}: {detail}", file=sys.stderr)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """Runs the example; returns the process exit code."""
    parser = argparse.ArgumentParser(description="Import sample memos into a CloudNotes store and list them.")
    parser.add_argument("sample", help="a JSON file in the original app's import format")
    parser.add_argument("--store", help="the store to import into (default: a temporary store)")
    parser.add_argument("--binary", help="the cloudnotes server (default: $CLOUDNOTES_BIN, else cloudnotes on PATH)")
    parser.add_argument("--locale", default="en-US", help="locale for dates and placeholder titles (en-US)")
    parser.add_argument("--time-zone", default="UTC", help="IANA time zone for dates (UTC)")
    parser.add_argument("--progress", action="store_true", help="print import progress to stderr")
    args = parser.parse_args(argv)

    temporary = None if args.store else tempfile.mkdtemp(prefix="cloudnotes-example-")
    store = args.store or os.path.join(temporary, "notes.sqlite")
    try:
        with CloudNotesClient(store, binary=args.binary, locale=args.locale, time_zone=args.time_zone) as client:
            imported = client.import_file(args.sample, progress=show_progress if args.progress else None)
            listing = client.list_all()
    except cloudnotes_client.CloudNotesError as error:
        print(f"import failed: {error}", file=sys.stderr)
        return 1
    except cloudnotes_client.ClientError as error:
        print(f"cannot run the server: {error}", file=sys.stderr)
        return 2
    finally:
        if temporary:
            shutil.rmtree(temporary, ignore_errors=True)

    where = args.store if args.store else "a temporary store"
    try:
        for line in format_table(listing.rows):
            print(line)
        print(f"\nImported {imported.imported} memos into {where}; the list now has {listing.total}.")
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader (`| head`) has gone; Python would otherwise complain again when it flushes at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


if __name__ == "__main__":
    sys.exit(main())

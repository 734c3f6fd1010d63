"""Helpers for the sync tests: stores driven through the shell (`cloudnotes new|edit|rm|list|show|sync`),
folder remotes, and a reader of the remote layout of protocol/sync.md."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

from conftest import BINARY, UUID_LOWER

HEX32 = re.compile(r"^[0-9a-f]{32}$")
CONFLICT_PREFIX = "Conflict copy: "

EDITOR_SCRIPT = """#!/bin/sh
# Writes the text the test prepared into the file cloudnotes edit opened.
cat "$CLOUDNOTES_TEST_NEXT_TEXT" > "$1"
"""


@dataclass
class Run:
    code: int
    out: str
    err: str


class Store:
    """One store, driven through the shell as a script would: a clean environment, the real binary."""

    def __init__(self, root: Path, name: str):
        self.name = name
        self.root = root / name
        self.root.mkdir(parents=True, exist_ok=True)
        self.path = self.root / "notes.sqlite"
        self.editor = self.root / "editor.sh"
        self.editor.write_text(EDITOR_SCRIPT)
        self.editor.chmod(0o700)
        self.next_text = self.root / "next-text"
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.root), "LANG": "C.UTF-8",
                    "TZ": "UTC", "EDITOR": str(self.editor), "CLOUDNOTES_TEST_NEXT_TEXT": str(self.next_text)}

    def __repr__(self) -> str:
        return f"Store({self.name})"

    def command(self, *args: str) -> list[str]:
        return [BINARY, *args, "--store", str(self.path)]

    def run(self, *args: str, input: str | None = None, timeout: float = 120) -> Run:
        proc = subprocess.run(self.command(*args), input=(input or "").encode(), capture_output=True,
                              env=self.env, cwd=self.root, timeout=timeout)
        return Run(proc.returncode, proc.stdout.decode(), proc.stderr.decode())

    def ok(self, *args: str, **kwargs) -> Run:
        result = self.run(*args, **kwargs)
        assert result.code == 0, f"{self.name}: cloudnotes {' '.join(args)} failed ({result.code}): {result.err}"
        return result

    def fails(self, *args: str, **kwargs) -> Run:
        """A command that must fail: status 1, nothing on stdout, one `cloudnotes: error:` line on stderr."""
        result = self.run(*args, **kwargs)
        assert result.code == 1, f"{self.name}: expected failure, got {result.code}: {result.out!r} {result.err!r}"
        assert result.out == "", result.out
        errors = [line for line in result.err.splitlines() if line.startswith("cloudnotes: error: ")]
        assert len(errors) == 1, f"expected one error line: {result.err!r}"
        return result

    # -- memos ----------------------------------------------------------------------------------------

    def new(self, text: str) -> str:
        memo_id = self.ok("new", text).out.strip()
        assert UUID_LOWER.match(memo_id), memo_id
        return memo_id

    def edit(self, memo_id: str, text: str) -> None:
        self.next_text.write_text(text, encoding="utf-8")
        self.ok("edit", memo_id)
        assert self.text(memo_id) == text, f"{self.name}: the edit of {memo_id} did not save the text"

    def rm(self, memo_id: str) -> None:
        self.ok("rm", memo_id)

    def rows(self) -> list[dict]:
        return json.loads(self.ok("list", "--json").out)

    def ids(self) -> list[str]:
        return [row["id"] for row in self.rows()]

    def memo(self, memo_id: str) -> dict:
        return json.loads(self.ok("show", memo_id, "--json").out)

    def text(self, memo_id: str) -> str:
        return self.memo(memo_id)["text"]

    def texts(self) -> dict[str, str]:
        return {memo_id: self.text(memo_id) for memo_id in self.ids()}

    def snapshot(self) -> tuple[list[dict], dict[str, tuple]]:
        """The list as `list --json` prints it, and every memo's text and dates as `show --json` prints them."""
        rows = self.rows()
        memos = {}
        for row in rows:
            memo = self.memo(row["id"])
            memos[row["id"]] = (memo["text"], memo["createdAt"], memo["modifiedAt"])
        return rows, memos

    # -- sync -----------------------------------------------------------------------------------------

    def sync(self, *args: str) -> dict:
        """`cloudnotes sync --json`: the SyncResult."""
        return json.loads(self.ok("sync", "--json", *args).out)

    def status(self) -> dict:
        return json.loads(self.ok("sync", "--status", "--json").out)


def folder_url(path: Path) -> str:
    return "file://" + str(path)


def settle(stores: list[Store], rounds: int = 8) -> int:
    """Syncs every store in turn until a whole round changes and publishes nothing; returns the rounds."""
    for round_number in range(1, rounds + 1):
        results = [store.sync() for store in stores]
        if all(r["changedMemos"] == 0 and r["published"] == 0 and r["conflicts"] == 0 for r in results):
            return round_number
    raise AssertionError(f"the stores did not settle within {rounds} rounds of syncs: {results}")


def canonical(rows: list[dict]) -> list[dict]:
    """The list with memos that share a modifiedAt in id order: the protocol orders those by each
    store's own latest change, which differs from store to store."""
    dates = [row["modifiedAt"] for row in rows]
    assert dates == sorted(dates, reverse=True), "the list is not newest first"
    return sorted(rows, key=lambda row: (row["modifiedAt"], row["id"]), reverse=True)


def assert_identical(stores: list[Store]) -> tuple[list[dict], dict[str, tuple]]:
    """Every store holds the same memos (text and dates) and lists them alike."""
    first = stores[0].snapshot()
    for store in stores[1:]:
        other = store.snapshot()
        assert other[1] == first[1], f"{store.name} holds other memos than {stores[0].name}:\n" + _diff(first[1], other[1])
        assert canonical(other[0]) == canonical(first[0]), f"{store.name}'s list differs from {stores[0].name}'s"
    return first


def _diff(a: dict, b: dict) -> str:
    lines = []
    for key in sorted(set(a) | set(b)):
        if a.get(key) != b.get(key):
            lines.append(f"  {key}: {a.get(key)!r}\n    vs {b.get(key)!r}")
    return "\n".join(lines[:10])


# ---------------------------------------------------------------------------------------------------
# The remote layout (protocol/sync.md)
# ---------------------------------------------------------------------------------------------------

def sha256(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def revision_id(line: dict) -> str:
    """The content address of a revision, as protocol/sync.md defines it."""
    fields = "cloudnotes-revision-1\n" + line["memo"] + "\n" + ",".join(sorted(line["parents"])) + "\n"
    fields += ("d" if line["deleted"] else "l") + "\n" + str(line["createdAt"]) + "\n" + str(line["modifiedAt"]) + "\n"
    fields += line.get("text") or ""
    return sha256(fields)[:32]


def conflict_copy_id(memo: str, losing_text: str) -> str:
    digest = sha256(f"cloudnotes-conflict-1\n{memo}\n{losing_text}")[:32]
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def remote_files(remote: Path) -> list[str]:
    """Every file under the remote, as a path relative to it."""
    return sorted(str(path.relative_to(remote)) for path in remote.rglob("*") if path.is_file())


@dataclass
class DeviceHistory:
    device: str
    head: dict
    segments: list[tuple[dict, list[dict], bytes]]   # (header, revision lines, bytes), from segment 1

    @property
    def revisions(self) -> list[dict]:
        return [line for _, lines, _ in self.segments for line in lines]


def read_remote(remote: Path, *, interrupted: bool = False) -> dict[str, DeviceHistory]:
    """Reads a folder remote and checks it against protocol/sync.md; returns each device's history.

    `interrupted`: a sync was killed, so a device may have written the segment after the one its head
    names (protocol/sync.md, "Writing": readers never look for it)."""
    marker = json.loads((remote / "cloudnotes-sync.json").read_text(encoding="utf-8"))
    assert marker == {"format": "cloudnotes-sync", "version": 1}, marker
    devices: dict[str, DeviceHistory] = {}
    folders = sorted((remote / "devices").iterdir()) if (remote / "devices").exists() else []
    for folder in folders:
        device = folder.name
        assert HEX32.match(device), f"devices/{device} is not a device id"
        if interrupted and not (folder / "head.json").exists():
            # Killed while publishing its first segment: readers skip a device without a head.
            segments = folder / "segments"
            names = sorted(p.name for p in segments.iterdir() if not p.name.startswith(".")) if segments.exists() else []
            assert names in ([], ["000000000001.jsonl"]), f"device {device} has no head but segments {names}"
            continue
        head = json.loads((folder / "head.json").read_text(encoding="utf-8"))
        assert set(head) == {"format", "device", "segments", "last"}, head
        assert head["format"] == 1 and head["device"] == device, head
        names = sorted(path.name for path in (folder / "segments").iterdir()
                       if not path.name.startswith(".")) if (folder / "segments").exists() else []
        expected = [f"{number:012d}.jsonl" for number in range(1, head["segments"] + 1)]
        if interrupted and names == expected + [f"{head['segments'] + 1:012d}.jsonl"]:
            names = expected
        assert names == expected, (
            f"device {device}: head names {head['segments']} segments, the folder holds {names}")
        segments = []
        previous = ""
        for number in range(1, head["segments"] + 1):
            data = (folder / "segments" / f"{number:012d}.jsonl").read_bytes()
            assert data.endswith(b"\n"), f"segment {number} of {device} does not end with a newline"
            lines = data[:-1].split(b"\n")
            header = json.loads(lines[0])
            assert set(header) == {"format", "device", "number", "previous", "revisions"}, header
            assert header["format"] == 1 and header["device"] == device and header["number"] == number, header
            assert header["previous"] == previous, f"segment {number} of {device}: previous does not chain"
            assert header["revisions"] == len(lines) - 1, f"segment {number} of {device}: revision count"
            revisions = [json.loads(line) for line in lines[1:]]
            segments.append((header, revisions, data))
            previous = sha256(data)
        assert head["last"] == previous, f"device {device}: the head's last is not the hash of its last segment"
        devices[device] = DeviceHistory(device, head, segments)
    return devices


def check_revision(line: dict) -> None:
    """One revision line as protocol/sync.md describes it."""
    expected = {"id", "memo", "parents", "deleted", "createdAt", "modifiedAt"} | ({"text"} if not line["deleted"] else set())
    assert set(line) == expected, f"revision fields {sorted(line)}"
    assert UUID_LOWER.match(line["memo"]), line["memo"]
    assert isinstance(line["parents"], list) and len(line["parents"]) <= 2 and line["parents"] == sorted(line["parents"])
    assert all(HEX32.match(parent) for parent in line["parents"])
    assert isinstance(line["createdAt"], int) and isinstance(line["modifiedAt"], int)
    assert line["id"] == revision_id(line), f"revision {line['id']} does not match its content"

"""Helpers for the sync end-to-end tests against WebDAV servers (test_sync_webdav.py, test_sync_faults.py,
test_sync_cost.py).

- `Cli`: runs `cloudnotes` subcommands on one store, with a clean environment (its own HOME, so that no
  ~/.netrc of the machine is read, and no CLOUDNOTES_REMOTE_* unless a test sets them).
- `memos_of`: the live memos of a store, id -> text, read straight from the store file (read-only), so that
  tests with thousands of memos can compare stores fast; `Cli.listed` gives the same through the shell.
- `check_remote`: reads a WebDAV remote as another implementation of protocol/sync.md would and checks every
  rule of the layout; returns what it read.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import sqlite3
import subprocess
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path

from conftest import BINARY, UUID_LOWER
from webdav import http_request, propfind

HEX32 = re.compile(r"^[0-9a-f]{32}$")
HEX64 = re.compile(r"^[0-9a-f]{64}$")
SEGMENT_NAME = re.compile(r"^\d{12}\.jsonl$")
SEGMENT_TEXT_BYTES = 1 << 20
SEGMENT_REVISIONS = 1000


@dataclass
class Run:
    code: int
    out: str
    err: str

    @property
    def both(self) -> str:
        return self.out + self.err


class Cli:
    """`cloudnotes SUBCOMMAND --store STORE ...` with a clean environment that each call may extend."""

    def __init__(self, store: Path, home: Path | None = None, env: dict[str, str] | None = None):
        self.store = Path(store)
        self.home = Path(home) if home is not None else self.store.parent
        for folder in (self.home, self.store.parent):
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.home), "LANG": "C.UTF-8",
                    "TZ": "UTC", **(env or {})}

    def command(self, subcommand: str, *args: str) -> list[str]:
        return [BINARY, subcommand, "--store", str(self.store), *args]

    def environment(self, env: dict[str, str] | None = None) -> dict[str, str]:
        merged = {**self.env, **(env or {})}
        return {k: v for k, v in merged.items() if v is not None}

    def run(self, subcommand: str, *args: str, input: str | bytes | None = None, env: dict | None = None,
            timeout: float = 300) -> Run:
        data = input.encode() if isinstance(input, str) else input
        proc = subprocess.run(self.command(subcommand, *args), input=data if data is not None else b"",
                              capture_output=True, env=self.environment(env), cwd=self.home, timeout=timeout)
        return Run(proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"))

    def popen(self, subcommand: str, *args: str, env: dict | None = None) -> subprocess.Popen:
        return subprocess.Popen(self.command(subcommand, *args), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=self.environment(env), cwd=self.home)

    def ok(self, subcommand: str, *args: str, **kwargs) -> Run:
        result = self.run(subcommand, *args, **kwargs)
        assert result.code == 0, f"cloudnotes {subcommand} {' '.join(args)} failed ({result.code}): {result.err}"
        return result

    def fails(self, subcommand: str, *args: str, **kwargs) -> Run:
        """A command that must fail: status 1, nothing on stdout, one `cloudnotes: error:` line on stderr."""
        result = self.run(subcommand, *args, **kwargs)
        assert result.code == 1, f"expected failure, got {result.code}: {result.out!r} {result.err!r}"
        assert result.out == "", result.out
        assert error_line(result.err), result.err
        return result

    # -- sync ---------------------------------------------------------------------------------------

    def sync(self, remote: str | None = None, *extra: str, env: dict | None = None, timeout: float = 300) -> dict:
        """A sync that must succeed; its `--json` report."""
        args = (["--remote", remote] if remote else []) + list(extra) + ["--json"]
        result = self.ok("sync", *args, env=env, timeout=timeout)
        report = json.loads(result.out)
        assert set(report) == {"changedMemos", "conflicts", "published", "requests", "status"}, report
        assert report["status"]["state"] == "idle", report
        return report

    def sync_run(self, remote: str | None = None, *extra: str, env: dict | None = None, timeout: float = 300) -> Run:
        args = (["--remote", remote] if remote else []) + list(extra) + ["--json"]
        return self.run("sync", *args, env=env, timeout=timeout)

    def status(self, env: dict | None = None) -> dict:
        return json.loads(self.ok("sync", "--status", "--json", env=env).out)

    # -- memos --------------------------------------------------------------------------------------

    def new(self, text: str) -> str:
        memo_id = self.ok("new", input=text).out.strip()
        assert UUID_LOWER.match(memo_id), memo_id
        return memo_id

    def edit(self, memo_id: str, text: str) -> None:
        """`cloudnotes edit` with an editor that writes `text` into the file."""
        source = self.home / f"edit-{memo_id}.txt"
        source.write_bytes(text.encode("utf-8"))
        self.ok("edit", memo_id, env={"VISUAL": f"cp {source}", "EDITOR": None})

    def rm(self, memo_id: str) -> None:
        self.ok("rm", memo_id)

    def import_file(self, path: Path, timeout: float = 600) -> Run:
        return self.ok("import", str(path), timeout=timeout)

    def listed(self) -> dict[str, str]:
        """id -> exact text of every memo, through `list --json` and `show --json` (slow: small stores only)."""
        rows = json.loads(self.ok("list", "--json").out)
        return {row["id"]: json.loads(self.ok("show", row["id"], "--json").out)["text"] for row in rows}

    def memos(self) -> dict[str, str]:
        return memos_of(self.store)


def error_line(stderr: str) -> str:
    """The one `cloudnotes: error:` line of a failure's stderr, which must be its last line ('' if not).

    Other lines before it (log lines) are checked by a test of their own
    (test_sync_webdav.py::test_a_failed_sync_prints_one_error_line_and_a_clean_one_no_log_lines)."""
    lines = stderr.splitlines()
    errors = [line for line in lines if line.startswith("cloudnotes: error: ")]
    if len(errors) != 1 or not lines or lines[-1] != errors[0] or not stderr.endswith("\n"):
        return ""
    return errors[0]


def memos_of(store: Path) -> dict[str, str]:
    """id -> text of every live memo of a store, read from the store file without changing it."""
    if not Path(store).exists():
        return {}
    connection = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=30)
    try:
        rows = connection.execute(
            "SELECT id, text FROM memo WHERE deleted = 0 AND importBatch IS NULL").fetchall()
    finally:
        connection.close()
    result = {}
    for memo_id, text in rows:
        result[memo_id] = text.decode("utf-8") if isinstance(text, bytes) else text
    return result


def copy_store(source: Path, target: Path) -> None:
    """Copies a closed store (its file and any -wal, -shm, -sync.lock beside it) to `target`."""
    target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    for old in target.parent.glob(target.name + "*"):
        old.unlink()
    for each in source.parent.glob(source.name + "*"):
        shutil.copy2(each, target.parent / (target.name + each.name[len(source.name):]))


# ---------------------------------------------------------------------------------------------------
# The rules of protocol/sync.md, as another implementation would read them
# ---------------------------------------------------------------------------------------------------

def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def revision_id(memo: str, parents: list[str], deleted: bool, created: int, modified: int, text: str | None) -> str:
    fields = (f"cloudnotes-revision-1\n{memo}\n{','.join(sorted(parents))}\n{'d' if deleted else 'l'}\n"
              f"{created}\n{modified}\n{text or ''}")
    return sha256_hex(fields.encode("utf-8"))[:32]


def conflict_copy_id(memo: str, losing_text: str) -> str:
    digest = sha256_hex(f"cloudnotes-conflict-1\n{memo}\n{losing_text}".encode("utf-8"))[:32]
    return "-".join([digest[0:8], digest[8:12], digest[12:16], digest[16:20], digest[20:32]])


@dataclass
class RemoteDevice:
    device: str
    head: dict
    segments: list[list[dict]] = field(default_factory=list)   # revisions of segments 1..n
    raw: list[bytes] = field(default_factory=list)


@dataclass
class RemoteView:
    names: list[str]
    devices: dict[str, RemoteDevice]

    @property
    def revisions(self) -> dict[str, dict]:
        return {r["id"]: r for d in self.devices.values() for s in d.segments for r in s}


def get(url: str, auth=None) -> bytes:
    reply = http_request("GET", url, auth=auth)
    assert reply.status == 200, f"GET {url}: {reply.status} {reply.reason}"
    return reply.body


def check_remote(url: str, auth=None, *, published_by: set[str] | None = None, exact_segments: bool = True) -> RemoteView:
    """Reads the WebDAV remote at `url` and checks it against protocol/sync.md:

    the marker; one folder per device (32 hex digits) with a head and numbered segments; each head names
    segments 1..n that all exist, whose headers are right and whose `previous` hashes chain, the last one's
    hash being the head's `last`; every revision's id recomputed from its content; parents sorted, at most two,
    known on the remote, and before their children; segments within their size limits.  With `exact_segments`,
    no segment file lies beyond the head (after a clean sync, none should).  `published_by`: the device ids
    that must have a head.
    """
    top = sorted(e.name for e in propfind(url, auth=auth))
    assert top == ["cloudnotes-sync.json", "devices"], f"the remote's top level: {top}"
    marker = json.loads(get(url + "cloudnotes-sync.json", auth))
    assert marker == {"format": "cloudnotes-sync", "version": 1}, marker
    entries = propfind(url + "devices/", auth=auth)
    devices: dict[str, RemoteDevice] = {}
    for entry in entries:
        assert entry.is_collection and HEX32.match(entry.name), f"devices/ holds {entry.name!r}"
        base = f"{url}devices/{entry.name}/"
        names = sorted(e.name for e in propfind(base, auth=auth))
        reply = http_request("GET", base + "head.json", auth=auth)
        if reply.status == 404:
            assert published_by is None or entry.name not in published_by, f"device {entry.name} has no head"
            continue
        assert reply.status == 200, f"GET {base}head.json: {reply.status}"
        assert set(names) <= {"head.json", "segments"}, f"devices/{entry.name}/ holds {names}"
        head = json.loads(reply.body)
        assert set(head) == {"format", "device", "segments", "last"}, head
        assert head["format"] == 1 and head["device"] == entry.name, head
        assert isinstance(head["segments"], int) and head["segments"] >= 0, head
        files = sorted(e.name for e in propfind(base + "segments/", auth=auth)) if "segments" in names else []
        assert all(SEGMENT_NAME.match(name) for name in files), files
        wanted = [f"{n:012d}.jsonl" for n in range(1, head["segments"] + 1)]
        missing = sorted(set(wanted) - set(files))
        assert not missing, f"device {entry.name}'s head names {head['segments']} segments; missing: {missing}"
        if exact_segments:
            assert files == wanted, f"device {entry.name}: segment files {files}, head names {head['segments']}"
        device = RemoteDevice(entry.name, head)
        previous = ""
        for number in range(1, head["segments"] + 1):
            data = get(f"{base}segments/{number:012d}.jsonl", auth)
            assert data.endswith(b"\n"), f"segment {number} of {entry.name} is cut short"
            lines = data[:-1].split(b"\n")
            header = json.loads(lines[0])
            assert header == {"format": 1, "device": entry.name, "number": number, "previous": previous,
                              "revisions": len(lines) - 1}, (number, header, previous)
            revisions = [json.loads(line) for line in lines[1:]]
            text_bytes = sum(len((r.get("text") or "").encode()) for r in revisions)
            assert len(revisions) >= 1
            assert len(revisions) <= SEGMENT_REVISIONS, f"segment {number}: {len(revisions)} revisions"
            assert len(revisions) == 1 or text_bytes <= SEGMENT_TEXT_BYTES, f"segment {number}: {text_bytes} bytes"
            device.segments.append(revisions)
            device.raw.append(data)
            previous = sha256_hex(data)
        assert head["last"] == previous, f"device {entry.name}: head's last {head['last']} != hash {previous}"
        devices[entry.name] = device
    if published_by is not None:
        assert published_by <= set(devices), f"devices with a head: {sorted(devices)}; expected {published_by}"
    view = RemoteView(top, devices)
    check_revisions(view)
    return view


def check_revisions(view: RemoteView) -> None:
    known = view.revisions
    for device in view.devices.values():
        position: dict[str, int] = {}
        for r in (r for s in device.segments for r in s):
            position.setdefault(r["id"], len(position))
        index = 0
        for number, segment in enumerate(device.segments, 1):
            for r in segment:
                where = f"device {device.device} segment {number} revision {r.get('id')}"
                deleted = r["deleted"]
                expected = {"id", "memo", "parents", "deleted", "createdAt", "modifiedAt"} | (set() if deleted else {"text"})
                assert set(r) == expected, f"{where}: fields {sorted(r)}"
                assert isinstance(deleted, bool), where
                assert UUID_LOWER.match(r["memo"]), where
                assert isinstance(r["createdAt"], int) and isinstance(r["modifiedAt"], int), where
                assert r["parents"] == sorted(r["parents"]) and len(r["parents"]) <= 2, where
                assert len(set(r["parents"])) == len(r["parents"]), where
                assert r["id"] == revision_id(r["memo"], r["parents"], deleted, r["createdAt"], r["modifiedAt"],
                                              r.get("text")), f"{where}: id does not match the content"
                for parent in r["parents"]:
                    assert parent in known, f"{where}: parent {parent} is on no segment of the remote"
                    assert known[parent]["memo"] == r["memo"], f"{where}: parent {parent} is of another memo"
                    # parents before children in the device's own stream
                    assert position.get(parent, -1) < position[r["id"]], f"{where}: parent {parent} comes after it"
                index += 1


def leaves(view: RemoteView) -> dict[str, set[str]]:
    """memo -> ids of its revisions on the remote that no other revision there names as a parent."""
    known = view.revisions
    parents = {p for r in known.values() for p in r["parents"]}
    result: dict[str, set[str]] = {}
    for r in known.values():
        if r["id"] not in parents:
            result.setdefault(r["memo"], set()).add(r["id"])
    return result


def remote_state(view: RemoteView) -> dict[str, str]:
    """memo -> text of every memo whose history on the remote has one live leaf (the converged state)."""
    known = view.revisions
    state = {}
    for memo, ids in leaves(view).items():
        if len(ids) == 1:
            r = known[next(iter(ids))]
            if not r["deleted"]:
                state[memo] = r["text"]
    return state


def collection_path_of(url: str) -> str:
    return urllib.parse.urlsplit(url).path

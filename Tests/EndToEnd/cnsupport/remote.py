"""The one reader of a sync remote's layout (protocol/sync.md), as another implementation would read it:
on a folder (`file://`) or over WebDAV, with the same checks.

`read_remote` checks every rule of the layout: the marker (format 2) and nothing else at the top; one
folder per device (32 hex digits) holding a head and numbered segments; each head names segments 1..n
that all exist, with the right headers, whose `previous` hashes chain, the last one's hash being the
head's `last`; in format 2 a head's `seen` (at most what each device published) and `forgotten`;
segments within their size limits; every revision's fields, its id recomputed from its content, its
generation (format 2) recomputed from its parents', its parents sorted, at most two, known on the
remote, of the same memo, and before it in their device's stream. Format 1 files (written before
format 2, and read as they are) pass the format 1 rules. It returns what it read.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from .dav_http import http_request, propfind
from .schema import UUID_LOWER

HEX32 = re.compile(r"^[0-9a-f]{32}$")
SEGMENT_NAME = re.compile(r"^\d{12}\.jsonl$")
SEGMENT_TEXT_BYTES = 1 << 20
SEGMENT_REVISIONS = 1000
MARKER = "cloudnotes-sync.json"
CONFLICT_PREFIX = "Conflict copy: "
REVISION_FIELDS = {"id", "memo", "parents", "deleted", "createdAt", "modifiedAt"}   # and a live one's text
FORMAT = 2          # the marker's version, and the format every head and segment is written in now


def sha256_hex(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode("utf-8")
    return hashlib.sha256(data).hexdigest()


def revision_id(line: dict) -> str:
    """The content address of a revision, as protocol/sync.md defines it."""
    fields = (f"cloudnotes-revision-1\n{line['memo']}\n{','.join(sorted(line['parents']))}\n"
              f"{'d' if line['deleted'] else 'l'}\n{line['createdAt']}\n{line['modifiedAt']}\n{line.get('text') or ''}")
    return sha256_hex(fields)[:32]


def conflict_copy_id(memo: str, losing_text: str) -> str:
    digest = sha256_hex(f"cloudnotes-conflict-1\n{memo}\n{losing_text}")[:32]
    return "-".join([digest[0:8], digest[8:12], digest[12:16], digest[16:20], digest[20:32]])


def folder_url(path: Path) -> str:
    return "file://" + str(path)


def remote_files(remote: Path) -> list[str]:
    """Every file under a folder remote, as a path relative to it."""
    return sorted(str(path.relative_to(remote)) for path in remote.rglob("*") if path.is_file())


# The files protocol/sync.md describes: a remote holds nothing else once a sync is done.
LAYOUT = [re.compile(p) for p in (r"^cloudnotes-sync\.json$", r"^devices/[0-9a-f]{32}/head\.json$",
                                   r"^devices/[0-9a-f]{32}/segments/\d{12}\.jsonl$",
                                   r"^devices/[0-9a-f]{32}/snapshots/\d{12}/\d{12}\.jsonl$")]


def undocumented_files(remote: Path) -> list[str]:
    """The files under a folder remote that the layout does not describe."""
    return [name for name in remote_files(remote) if not any(pattern.match(name) for pattern in LAYOUT)]


# ---------------------------------------------------------------------------------------------------
# Where a remote's files are read
# ---------------------------------------------------------------------------------------------------

class FolderSource:
    """A folder remote, read from the file system. A name that starts with "." is a file being written
    (protocol/sync.md, "Writing"), which readers never look at."""

    def __init__(self, path: Path):
        self.path = Path(path)

    def names(self, relative: str) -> list[tuple[str, bool]]:
        folder = self.path / relative
        return [(p.name, p.is_dir()) for p in folder.iterdir() if not p.name.startswith(".")] if folder.is_dir() else []

    def get(self, relative: str) -> bytes | None:
        path = self.path / relative
        return path.read_bytes() if path.is_file() else None


class DavSource:
    """A WebDAV remote, read over HTTP (PROPFIND and GET), with Basic credentials if any."""

    def __init__(self, url: str, auth=None):
        self.url = url
        self.auth = auth

    def names(self, relative: str) -> list[tuple[str, bool]]:
        return [(entry.name, entry.is_collection) for entry in propfind(self.url + relative, auth=self.auth)]

    def get(self, relative: str) -> bytes | None:
        reply = http_request("GET", self.url + relative, auth=self.auth)
        if reply.status == 404:
            return None
        assert reply.status == 200, f"GET {self.url}{relative}: {reply.status} {reply.reason}"
        return reply.body


# ---------------------------------------------------------------------------------------------------
# What a remote holds
# ---------------------------------------------------------------------------------------------------

@dataclass
class RemoteDevice:
    device: str
    head: dict
    segments: list[list[dict]] = field(default_factory=list)   # revisions of segments 1..n
    raw: list[bytes] = field(default_factory=list)             # the segments' bytes
    formats: list[int] = field(default_factory=list)           # the segments' formats
    first: int = 1                                             # the first segment on the remote
    snapshot: list[dict] = field(default_factory=list)         # the revisions of its snapshot, if any

    @property
    def revisions(self) -> list[dict]:
        """Every revision the device's files hold, its snapshot's first, in order."""
        return self.snapshot + [line for segment in self.segments for line in segment]


@dataclass
class RemoteView:
    names: list[str]
    devices: dict[str, RemoteDevice]

    @property
    def revisions(self) -> dict[str, dict]:
        """Every revision on the remote, by id."""
        return {r["id"]: r for d in self.devices.values() for r in d.revisions}


def read_remote(where, auth=None, *, published_by: set[str] | None = None,
                interrupted: bool = False) -> RemoteView:
    """Reads the remote at `where` (a folder, the URL of a WebDAV collection, or a source with `names` and
    `get`, such as an S3 bucket's) and checks it against protocol/sync.md (see the module's description).

    `published_by`: the device ids that must have a head. `interrupted`: a sync was cut short (killed, or
    its connection broken), so the devices' folder may be missing yet, and a device may have written the
    segment after the one its head names, or its first segment and no head yet (protocol/sync.md,
    "Writing": readers never look for those), or a snapshot its head does not name yet, or not removed yet
    what a snapshot its head names stands for ("Compaction")."""
    if isinstance(where, (str, Path)):
        source = DavSource(where, auth) if isinstance(where, str) else FolderSource(where)
    else:
        source = where
    top = sorted(name for name, _ in source.names(""))
    # A sync cut short right after it wrote the marker has not made the devices' folder yet.
    assert top == [MARKER, "devices"] or (interrupted and top == [MARKER]), f"the remote's top level: {top}"
    marker = json.loads(source.get(MARKER))
    assert marker == {"format": "cloudnotes-sync", "version": FORMAT}, marker
    devices: dict[str, RemoteDevice] = {}
    for name, is_folder in sorted(source.names("devices/") if "devices" in top else []):
        assert is_folder and HEX32.match(name), f"devices/ holds {name!r}"
        device = _read_device(source, name, published_by, interrupted)
        if device is not None:
            devices[name] = device
    if published_by is not None:
        assert published_by <= set(devices), f"devices with a head: {sorted(devices)}; expected {published_by}"
    for device in devices.values():
        for other, taken in (device.head.get("seen") or {}).items():
            published = devices[other].head["segments"] if other in devices else None
            assert published is None or taken <= published, f"{device.device} took in {taken} of {other}'s {published} segments"
    view = RemoteView(top, devices)
    check_revisions(view)
    return view


def _read_device(source, name: str, published_by: set[str] | None, interrupted: bool) -> RemoteDevice | None:
    base = f"devices/{name}/"
    names = sorted(entry for entry, _ in source.names(base))
    assert set(names) <= {"head.json", "segments", "snapshots"}, f"{base} holds {names}"
    files = sorted(entry for entry, _ in source.names(base + "segments/")) if "segments" in names else []
    assert all(SEGMENT_NAME.match(file) for file in files), files
    data = source.get(base + "head.json")
    if data is None:
        # Cut short while publishing its first segment: readers skip a device without a head.
        assert interrupted, f"device {name} has no head"
        assert published_by is None or name not in published_by, f"device {name} has no head"
        assert files in ([], ["000000000001.jsonl"]), f"device {name} has no head but segments {files}"
        return None
    head = json.loads(data)
    if head.get("format") == 1:
        assert set(head) == {"format", "device", "segments", "last"}, head
    else:
        assert set(head) - {"snapshot"} == {"format", "device", "segments", "last", "seen", "forgotten"}, head
        assert head["format"] == FORMAT, head
        assert all(HEX32.match(d) and d != name and isinstance(n, int) and n > 0 for d, n in head["seen"].items()), head
        forgotten = head["forgotten"]
        assert forgotten == sorted(set(forgotten)) and all(HEX32.match(d) and d != name for d in forgotten), head
    assert head["device"] == name, head
    assert isinstance(head["segments"], int) and head["segments"] >= 0, head
    snapshot = head.get("snapshot")
    first = snapshot["covers"] + 1 if snapshot else 1
    wanted = [f"{n:012d}.jsonl" for n in range(first, head["segments"] + 1)]
    beyond = [f"{head['segments'] + 1:012d}.jsonl"] if interrupted else []
    if interrupted:   # a compaction cut short after its head named the snapshot leaves segments it stands for
        files = [file for file in files if int(file[:12]) >= first]
    assert files in (wanted, wanted + beyond), (
        f"device {name}: head names segments {first}..{head['segments']}, the folder holds {files}")
    device = RemoteDevice(name, head, first=first)
    snapshots = sorted(entry for entry, _ in source.names(base + "snapshots/")) if "snapshots" in names else []
    previous = ""
    if snapshot:
        assert set(snapshot) == {"covers", "parts", "last", "segment"} and 1 <= snapshot["covers"] <= head["segments"], head
        assert snapshots == [f"{snapshot['covers']:012d}"] or interrupted, f"device {name} holds snapshots {snapshots}"
        folder = f"{base}snapshots/{snapshot['covers']:012d}/"
        parts = sorted(entry for entry, _ in source.names(folder))
        assert parts == [f"{n:012d}.jsonl" for n in range(1, snapshot["parts"] + 1)], (name, parts)
        for number in range(1, snapshot["parts"] + 1):
            data = source.get(f"{folder}{number:012d}.jsonl")
            lines = data[:-1].split(b"\n")
            header = json.loads(lines[0])
            assert header == {"format": FORMAT, "device": name, "number": number, "previous": previous,
                              "revisions": len(lines) - 1, "snapshot": snapshot["covers"]}, (number, header)
            device.snapshot += [json.loads(line) for line in lines[1:]]
            previous = sha256_hex(data)
        assert previous == snapshot["last"], f"device {name}: the snapshot's last part does not match the head"
        previous = snapshot["segment"]
    else:
        assert snapshots == [] or interrupted, f"device {name} holds snapshots {snapshots} its head does not name"
    for number in range(first, head["segments"] + 1):
        data = source.get(f"{base}segments/{number:012d}.jsonl")
        assert data is not None, f"segment {number} of {name} is missing"
        assert data.endswith(b"\n"), f"segment {number} of {name} is cut short"
        lines = data[:-1].split(b"\n")
        header = json.loads(lines[0])
        assert header.get("format") in (1, FORMAT) and header == {
            "format": header["format"], "device": name, "number": number, "previous": previous,
            "revisions": len(lines) - 1}, (number, header, previous)
        revisions = [json.loads(line) for line in lines[1:]]
        text_bytes = sum(len((r.get("text") or "").encode()) for r in revisions)
        assert len(revisions) >= 1
        assert len(revisions) <= SEGMENT_REVISIONS, f"segment {number}: {len(revisions)} revisions"
        assert len(revisions) == 1 or text_bytes <= SEGMENT_TEXT_BYTES, f"segment {number}: {text_bytes} bytes"
        device.formats.append(header["format"])
        device.segments.append(revisions)
        device.raw.append(data)
        previous = sha256_hex(data)
    assert head["last"] == previous or (snapshot and snapshot["covers"] == head["segments"]), (
        f"device {name}: head's last {head['last']} != hash {previous}")
    return device


def check_revisions(view: RemoteView) -> None:
    """Every revision line as protocol/sync.md describes it, and its parents where they must be."""
    known = view.revisions
    generations = revision_generations(known)
    compacted = any(d.snapshot for d in view.devices.values())
    for device in view.devices.values():
        position: dict[str, int] = {}
        for r in device.revisions:
            position.setdefault(r["id"], len(position))
        streams = [("snapshot", device.snapshot, FORMAT)] + list(zip(
            range(device.first, device.first + len(device.segments)), device.segments, device.formats))
        for number, segment, segment_format in streams:
            for r in segment:
                where = f"device {device.device} segment {number} revision {r.get('id')}"
                deleted = r["deleted"]
                expected = REVISION_FIELDS | (set() if deleted else {"text"})
                if segment_format == FORMAT:
                    expected |= {"generation"} | ({"cut"} if "cut" in r else set())
                    assert r.get("cut", True) is True, f"{where}: cut is {r['cut']}"
                    assert r["generation"] == generations.get(r["id"]), f"{where}: generation {r['generation']}"
                assert set(r) == expected, f"{where}: fields {sorted(r)}"
                assert isinstance(deleted, bool), where
                assert UUID_LOWER.match(r["memo"]), where
                assert isinstance(r["createdAt"], int) and isinstance(r["modifiedAt"], int), where
                parents = r["parents"]
                assert isinstance(parents, list) and parents == sorted(parents) and len(parents) <= 2, where
                assert len(set(parents)) == len(parents) and all(HEX32.match(p) for p in parents), where
                assert r["id"] == revision_id(r), f"{where}: id does not match the content"
                for parent in parents:
                    # A parent may be pruned once the history was compacted (protocol/sync.md, "Pruning").
                    if parent not in known:
                        assert r.get("cut") or compacted, f"{where}: parent {parent} is on no segment of the remote"
                        continue
                    assert known[parent]["memo"] == r["memo"], f"{where}: parent {parent} is of another memo"
                    # parents before children in the device's own stream, but for the revisions of a
                    # forgotten device that it published again, after children it had published
                    assert position.get(parent, -1) < position[r["id"]] or device.head.get("forgotten"), (
                        f"{where}: parent {parent} comes after it")


def revision_generations(known: dict[str, dict]) -> dict[str, int]:
    """The generation of every revision whose history is on the remote: a root's is 1, any other's one
    more than its parents' greatest (protocol/sync.md)."""
    generations: dict[str, int] = {}
    for start in known:
        stack = [start]
        while stack:
            top = stack[-1]
            if top in generations or top not in known:
                stack.pop()
                continue
            missing = [p for p in known[top]["parents"] if p in known and p not in generations]
            if missing:
                stack.extend(missing)
                continue
            if any(p not in known for p in known[top]["parents"]):
                generations[top] = known[top].get("generation")   # its history pruned: as its line says
            elif all(p in generations for p in known[top]["parents"]):
                generations[top] = 1 + max((generations[p] for p in known[top]["parents"]), default=0)
            stack.pop()
    return generations


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

"""The one reader of a sync remote's layout (protocol/sync.md), as another implementation would read it:
on a folder (`file://`) or over WebDAV, with the same checks.

`read_remote` checks every rule of the layout: the marker and nothing else at the top; one folder per
device (32 hex digits) holding a head and numbered segments; each head names segments 1..n that all
exist, with the right headers, whose `previous` hashes chain, the last one's hash being the head's
`last`; segments within their size limits; every revision's fields, its id recomputed from its content,
its parents sorted, at most two, known on the remote, of the same memo, and before it in their device's
stream. It returns what it read.
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
                                   r"^devices/[0-9a-f]{32}/segments/\d{12}\.jsonl$")]


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

    @property
    def revisions(self) -> list[dict]:
        """Every revision the device published, in order."""
        return [line for segment in self.segments for line in segment]


@dataclass
class RemoteView:
    names: list[str]
    devices: dict[str, RemoteDevice]

    @property
    def revisions(self) -> dict[str, dict]:
        """Every revision on the remote, by id."""
        return {r["id"]: r for d in self.devices.values() for r in d.revisions}


def read_remote(where: Path | str, auth=None, *, published_by: set[str] | None = None,
                interrupted: bool = False) -> RemoteView:
    """Reads the remote at `where` (a folder, or the URL of a WebDAV collection) and checks it against
    protocol/sync.md (see the module's description).

    `published_by`: the device ids that must have a head. `interrupted`: a sync was cut short (killed, or
    its connection broken), so the devices' folder may be missing yet, and a device may have written the
    segment after the one its head names, or its first segment and no head yet (protocol/sync.md,
    "Writing": readers never look for those)."""
    source = DavSource(where, auth) if isinstance(where, str) else FolderSource(where)
    top = sorted(name for name, _ in source.names(""))
    # A sync cut short right after it wrote the marker has not made the devices' folder yet.
    assert top == [MARKER, "devices"] or (interrupted and top == [MARKER]), f"the remote's top level: {top}"
    marker = json.loads(source.get(MARKER))
    assert marker == {"format": "cloudnotes-sync", "version": 1}, marker
    devices: dict[str, RemoteDevice] = {}
    for name, is_folder in sorted(source.names("devices/") if "devices" in top else []):
        assert is_folder and HEX32.match(name), f"devices/ holds {name!r}"
        device = _read_device(source, name, published_by, interrupted)
        if device is not None:
            devices[name] = device
    if published_by is not None:
        assert published_by <= set(devices), f"devices with a head: {sorted(devices)}; expected {published_by}"
    view = RemoteView(top, devices)
    check_revisions(view)
    return view


def _read_device(source, name: str, published_by: set[str] | None, interrupted: bool) -> RemoteDevice | None:
    base = f"devices/{name}/"
    names = sorted(entry for entry, _ in source.names(base))
    assert set(names) <= {"head.json", "segments"}, f"{base} holds {names}"
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
    assert set(head) == {"format", "device", "segments", "last"}, head
    assert head["format"] == 1 and head["device"] == name, head
    assert isinstance(head["segments"], int) and head["segments"] >= 0, head
    wanted = [f"{n:012d}.jsonl" for n in range(1, head["segments"] + 1)]
    beyond = [f"{head['segments'] + 1:012d}.jsonl"] if interrupted else []
    assert files in (wanted, wanted + beyond), (
        f"device {name}: head names {head['segments']} segments, the folder holds {files}")
    device = RemoteDevice(name, head)
    previous = ""
    for number in range(1, head["segments"] + 1):
        data = source.get(f"{base}segments/{number:012d}.jsonl")
        assert data is not None, f"segment {number} of {name} is missing"
        assert data.endswith(b"\n"), f"segment {number} of {name} is cut short"
        lines = data[:-1].split(b"\n")
        header = json.loads(lines[0])
        assert header == {"format": 1, "device": name, "number": number, "previous": previous,
                          "revisions": len(lines) - 1}, (number, header, previous)
        revisions = [json.loads(line) for line in lines[1:]]
        text_bytes = sum(len((r.get("text") or "").encode()) for r in revisions)
        assert len(revisions) >= 1
        assert len(revisions) <= SEGMENT_REVISIONS, f"segment {number}: {len(revisions)} revisions"
        assert len(revisions) == 1 or text_bytes <= SEGMENT_TEXT_BYTES, f"segment {number}: {text_bytes} bytes"
        device.segments.append(revisions)
        device.raw.append(data)
        previous = sha256_hex(data)
    assert head["last"] == previous, f"device {name}: head's last {head['last']} != hash {previous}"
    return device


def check_revisions(view: RemoteView) -> None:
    """Every revision line as protocol/sync.md describes it, and its parents where they must be."""
    known = view.revisions
    for device in view.devices.values():
        position: dict[str, int] = {}
        for r in device.revisions:
            position.setdefault(r["id"], len(position))
        for number, segment in enumerate(device.segments, 1):
            for r in segment:
                where = f"device {device.device} segment {number} revision {r.get('id')}"
                deleted = r["deleted"]
                expected = REVISION_FIELDS | (set() if deleted else {"text"})
                assert set(r) == expected, f"{where}: fields {sorted(r)}"
                assert isinstance(deleted, bool), where
                assert UUID_LOWER.match(r["memo"]), where
                assert isinstance(r["createdAt"], int) and isinstance(r["modifiedAt"], int), where
                parents = r["parents"]
                assert isinstance(parents, list) and parents == sorted(parents) and len(parents) <= 2, where
                assert len(set(parents)) == len(parents) and all(HEX32.match(p) for p in parents), where
                assert r["id"] == revision_id(r), f"{where}: id does not match the content"
                for parent in parents:
                    assert parent in known, f"{where}: parent {parent} is on no segment of the remote"
                    assert known[parent]["memo"] == r["memo"], f"{where}: parent {parent} is of another memo"
                    # parents before children in the device's own stream
                    assert position.get(parent, -1) < position[r["id"]], f"{where}: parent {parent} comes after it"


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

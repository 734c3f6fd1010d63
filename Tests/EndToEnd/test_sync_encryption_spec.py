"""An encrypted sync remote can be read by another implementation written from protocol/sync.md alone.

The reader here follows the page's "Encryption" section and nothing else: it derives the wrapping key
from the marker with scrypt, unwraps the data key with ChaCha20-Poly1305, checks its keyID, and opens
every head and segment as a sealed file (HKDF file key, 64 KiB chunks, STREAM nonces, the path as
associated data). What it decrypts must be exactly the memos the shell wrote, in format 2 as the
"Layout" section describes it (checked by the plain remote's reader, `read_remote`), with each head's
`last` the hash of its last segment's plain bytes. A memo of 200 KB makes a segment of several chunks,
and a segment of exactly two full chunks must end at its second. A file moved to another path and a
wrong passphrase must fail; after `sync --change-passphrase` the new passphrase opens the same data
key, the old one opens nothing, and the marker is the only file rewritten.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
from pathlib import Path

import pytest
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import ChaCha20Poly1305
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from cnsupport.cli import Cli
from cnsupport.remote import folder_url, read_remote, remote_files
from cnsupport.syncing import make_store

PASSPHRASE = "correct horse battery staple ünïcode"
NEW_PASSPHRASE = "a much newer passphrase — ß"
WITH_PASSPHRASE = {"CLOUDNOTES_PASSPHRASE": PASSPHRASE}

MARKER = "cloudnotes-sync.json"
CIPHER = "chacha20poly1305-stream-64k"
MAX_LOG_N = 22                       # a reader refuses scrypt's logN above this
KEY_AD = b"cloudnotes-sync key"      # associated data of the wrapped data key
KEY_ID_LABEL = b"cloudnotes-sync key id"
FILE_KEY_INFO = b"cloudnotes-sync file key"
MAGIC = b"CNS1"
SALT_BYTES = 16
NONCE_BYTES = 12
TAG_BYTES = 16
CHUNK = 65536                        # plain bytes per chunk
PIECE = CHUNK + TAG_BYTES            # sealed bytes per chunk
HEAD_PATH = re.compile(r"^devices/[0-9a-f]{32}/head\.json$")
SEGMENT_PATH = re.compile(r"^devices/([0-9a-f]{32})/segments/(\d{12})\.jsonl$")

SHORT_TEXTS = [
    "Groceries\nmilk, eggs, bread\n",
    "Médecin: résultats d'analyse\nglycémie normale — revoir en mars\n",
    "日本語のメモ\n秘密の計画 🗝️\n",
    "",
]
LONG_TEXT = "".join(f"line {n:06d} of a long memo that spans several chunks of a sealed file\n" for n in range(3000))


# ---------------------------------------------------------------------------------------------------
# A reader of the spec: the marker and the key
# ---------------------------------------------------------------------------------------------------

def read_marker(remote: Path) -> dict:
    """The marker's `encryption` object, after checking that the marker says an encrypted remote."""
    marker = json.loads((remote / MARKER).read_bytes())
    assert marker["format"] == "cloudnotes-sync" and marker["version"] == 3, marker
    encryption = marker["encryption"]
    assert encryption["cipher"] == CIPHER, encryption
    assert encryption["kdf"]["name"] == "scrypt", encryption
    assert re.fullmatch(r"[0-9a-f]{32}", encryption["keyID"]), encryption
    return encryption


def b64(text: str) -> bytes:
    """Standard base64 (RFC 4648, with padding), refusing anything else."""
    return base64.b64decode(text, validate=True)


def wrapping_key(passphrase: str, kdf: dict) -> bytes:
    """The key that wraps the data key: scrypt over the passphrase with the marker's parameters."""
    assert 1 <= kdf["logN"] <= MAX_LOG_N, f"a reader refuses logN {kdf['logN']}"
    salt = b64(kdf["salt"])
    assert len(salt) == 16, salt
    return Scrypt(salt=salt, length=32, n=1 << kdf["logN"], r=kdf["r"], p=kdf["p"]).derive(passphrase.encode("utf-8"))


def unwrap_data_key(encryption: dict, passphrase: str) -> bytes:
    """The 32-byte data key the marker's `key` holds; InvalidTag for a wrong passphrase."""
    wrapped = b64(encryption["key"])
    assert len(wrapped) == NONCE_BYTES + 32 + TAG_BYTES, len(wrapped)
    aead = ChaCha20Poly1305(wrapping_key(passphrase, encryption["kdf"]))
    data_key = aead.decrypt(wrapped[:NONCE_BYTES], wrapped[NONCE_BYTES:], KEY_AD)
    assert len(data_key) == 32
    return data_key


def key_id(data_key: bytes) -> str:
    """The keyID that names a data key: the first 16 bytes of an HMAC-SHA256, in lowercase hex."""
    return hmac.new(data_key, KEY_ID_LABEL, hashlib.sha256).digest()[:16].hex()


def open_marker(remote: Path, passphrase: str) -> bytes:
    """The data key of the remote's marker, opened with `passphrase` and checked against its keyID."""
    encryption = read_marker(remote)
    data_key = unwrap_data_key(encryption, passphrase)
    assert key_id(data_key) == encryption["keyID"], "the unwrapped key is not the one the keyID names"
    return data_key


# ---------------------------------------------------------------------------------------------------
# A reader of the spec: sealed files
# ---------------------------------------------------------------------------------------------------

def file_key(data_key: bytes, salt: bytes) -> bytes:
    """The key of one sealed file: HKDF-SHA256 of the data key with the file's salt."""
    return HKDF(algorithm=hashes.SHA256(), length=32, salt=salt, info=FILE_KEY_INFO).derive(data_key)


def chunk_nonce(number: int, last: bool) -> bytes:
    """The nonce of chunk `number`: the number as 11 bytes big-endian, then 1 for the last chunk, else 0."""
    return number.to_bytes(11, "big") + (b"\x01" if last else b"\x00")


def pieces(body: bytes) -> list[bytes]:
    """The sealed chunks of a file's body: pieces of 65,552 bytes, the last one what is left.

    A body of whole pieces ends with a whole piece: the writer makes an empty chunk only for an empty
    file, so there is no empty piece after them (the spec's "what is left" would otherwise be nothing)."""
    cut = [body[start:start + PIECE] for start in range(0, len(body), PIECE)]
    return cut or [b""]


def open_sealed(data_key: bytes, sealed: bytes, path: str) -> bytes:
    """The plain bytes of a sealed file at `path` (relative to the remote); InvalidTag if it fails."""
    assert sealed[:4] == MAGIC, f"{path} does not start with CNS1: {sealed[:4]!r}"
    salt, body = sealed[4:4 + SALT_BYTES], sealed[4 + SALT_BYTES:]
    aead = ChaCha20Poly1305(file_key(data_key, salt))
    cut = pieces(body)
    associated = path.encode("utf-8")
    plain = [aead.decrypt(chunk_nonce(n, n == len(cut) - 1), piece, associated) for n, piece in enumerate(cut)]
    assert all(len(chunk) == CHUNK for chunk in plain[:-1]) and (plain[-1] or len(plain) == 1), path
    return b"".join(plain)


def sealed_size(plain_size: int) -> int:
    """The size of a sealed file of `plain_size` plain bytes: header, salt, and a tag per chunk."""
    chunks = max(1, -(-plain_size // CHUNK))
    return len(MAGIC) + SALT_BYTES + plain_size + TAG_BYTES * chunks


def decrypt_remote(remote: Path, data_key: bytes) -> dict[str, bytes]:
    """Every file of the remote but the marker, opened at its own path: path -> plain bytes."""
    plain = {}
    for path in remote_files(remote):
        if path == MARKER:
            continue
        assert HEAD_PATH.match(path) or SEGMENT_PATH.match(path), f"a file the layout does not describe: {path}"
        sealed = (remote / path).read_bytes()
        plain[path] = opened = open_sealed(data_key, sealed, path)
        assert len(sealed) == sealed_size(len(opened)), f"{path}: {len(sealed)} sealed bytes for {len(opened)}"
    return plain


def parse_segment(plain: bytes) -> tuple[dict, list[dict]]:
    """A segment's first line and its revisions (JSON lines, UTF-8)."""
    lines = [json.loads(line) for line in plain.decode("utf-8").splitlines()]
    return lines[0], lines[1:]


def segments_of(plain: dict[str, bytes]) -> dict[str, list[tuple[int, bytes]]]:
    """Each device's decrypted segments, in order: device -> [(number, plain bytes)]."""
    devices: dict[str, list[tuple[int, bytes]]] = {}
    for path, data in sorted(plain.items()):
        match = SEGMENT_PATH.match(path)
        if match:
            devices.setdefault(match.group(1), []).append((int(match.group(2)), data))
    return devices


def plain_copy(plain: dict[str, bytes], folder: Path) -> Path:
    """The decrypted files written as a plain format 2 remote, for the plain remote's reader to check."""
    folder.mkdir()
    (folder / MARKER).write_text(json.dumps({"format": "cloudnotes-sync", "version": 2}))
    for path, data in plain.items():
        (folder / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / path).write_bytes(data)
    return folder


def decrypted_texts(plain: dict[str, bytes]) -> dict[str, str]:
    """Each memo's text in the latest revision the decrypted segments hold for it."""
    texts = {}
    for segments in segments_of(plain).values():
        for _, data in segments:
            for revision in parse_segment(data)[1]:
                assert not revision["deleted"], revision
                texts[revision["memo"]] = revision["text"]
    return texts


def check_heads(plain: dict[str, bytes]) -> None:
    """Each head names its device's segments 1..n, the last one's plain hash, and every segment's
    `previous` is the plain hash of the one before it."""
    segments = segments_of(plain)
    heads = {path.split("/")[1]: json.loads(data) for path, data in plain.items() if HEAD_PATH.match(path)}
    assert set(heads) == set(segments), (sorted(heads), sorted(segments))
    for device, head in heads.items():
        numbers = [number for number, _ in segments[device]]
        assert head["format"] == 2 and head["device"] == device, head
        assert numbers == list(range(1, head["segments"] + 1)), (numbers, head)
        previous = ""
        for number, data in segments[device]:
            first, revisions = parse_segment(data)
            assert first == {**first, "device": device, "number": number, "previous": previous,
                             "revisions": len(revisions)}, first
            previous = hashlib.sha256(data).hexdigest()
        assert head["last"] == previous, f"{device}: the head's last is not the hash of segment {numbers[-1]}"


# ---------------------------------------------------------------------------------------------------
# Stores
# ---------------------------------------------------------------------------------------------------

def encrypted_store(tmp_root: Path, remote: Path) -> tuple[Cli, dict[str, str]]:
    """A store whose memos (short ones, then a long one) went to an encrypted folder remote in two
    syncs, the second without a passphrase; the store and its memos (id -> text)."""
    a = make_store(tmp_root, "a")
    memos = {a.new(text): text for text in SHORT_TEXTS}
    a.sync(folder_url(remote), "--encrypt", env=WITH_PASSPHRASE)
    memos[a.new(LONG_TEXT)] = LONG_TEXT
    a.sync()
    assert a.texts() == memos
    return a, memos


def sealed_segments(remote: Path) -> list[str]:
    """The paths of the remote's segments, in order."""
    return [path for path in remote_files(remote) if SEGMENT_PATH.match(path)]


# ---------------------------------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------------------------------

def test_a_reader_written_from_the_spec_decrypts_what_the_shell_synced(tmp_root, remote):
    a, memos = encrypted_store(tmp_root, remote)
    data_key = open_marker(remote, PASSPHRASE)
    plain = decrypt_remote(remote, data_key)
    assert decrypted_texts(plain) == memos
    check_heads(plain)
    long_segment = plain[sealed_segments(remote)[-1]]
    assert len(long_segment) > 3 * CHUNK, "the long memo's segment should span several chunks"
    view = read_remote(plain_copy(plain, tmp_root / "decrypted"), published_by={a.status()["device"]})
    assert {r["memo"]: r["text"] for r in view.revisions.values()} == memos


def test_a_segment_of_exactly_two_chunks_ends_with_its_second(tmp_root, remote):
    a, _ = encrypted_store(tmp_root, remote)
    data_key = open_marker(remote, PASSPHRASE)
    probe = "x" * 100_000
    a.new(probe)
    a.sync()
    probe_path = sealed_segments(remote)[-1]
    size = len(open_sealed(data_key, (remote / probe_path).read_bytes(), probe_path))
    text = "y" * (len(probe) + 2 * CHUNK - size)   # the same segment but for the text's length
    memo_id = a.new(text)
    a.sync()
    path = sealed_segments(remote)[-1]
    sealed = (remote / path).read_bytes()
    segment = open_sealed(data_key, sealed, path)
    assert len(segment) == 2 * CHUNK, f"the segment came out {len(segment)} bytes, not {2 * CHUNK}"
    assert len(sealed) == len(MAGIC) + SALT_BYTES + 2 * PIECE, "a segment of whole chunks has no empty chunk after them"
    assert [(r["memo"], r["text"]) for r in parse_segment(segment)[1]] == [(memo_id, text)]


def test_a_sealed_file_opens_only_at_its_own_path_and_whole(tmp_root, remote):
    encrypted_store(tmp_root, remote)
    data_key = open_marker(remote, PASSPHRASE)
    first, last = sealed_segments(remote)[0], sealed_segments(remote)[-1]
    head = next(path for path in remote_files(remote) if HEAD_PATH.match(path))
    sealed = (remote / last).read_bytes()
    assert open_sealed(data_key, sealed, last)
    for elsewhere in (first, head, "/" + last, last.replace("/", "\\")):
        with pytest.raises(InvalidTag):
            open_sealed(data_key, sealed, elsewhere)
    with pytest.raises(InvalidTag):   # cut after a whole chunk: the one before the last is not a last one
        open_sealed(data_key, sealed[:len(MAGIC) + SALT_BYTES + PIECE], last)
    with pytest.raises(InvalidTag):   # another key
        open_sealed(bytes(32), sealed, last)


def test_a_wrong_passphrase_does_not_unwrap_the_key(tmp_root, remote):
    encrypted_store(tmp_root, remote)
    encryption = read_marker(remote)
    for wrong in ("correct horse battery staple unicode", PASSPHRASE + " ", ""):
        with pytest.raises(InvalidTag):
            unwrap_data_key(encryption, wrong)


def test_a_new_passphrase_wraps_the_same_data_key_and_the_old_one_opens_nothing(tmp_root, remote):
    a, memos = encrypted_store(tmp_root, remote)
    before = read_marker(remote)
    data_key = open_marker(remote, PASSPHRASE)
    files = {path: (remote / path).read_bytes() for path in remote_files(remote) if path != MARKER}
    a.ok("sync", "--change-passphrase", env={"CLOUDNOTES_NEW_PASSPHRASE": NEW_PASSPHRASE})
    after = read_marker(remote)
    assert after["keyID"] == before["keyID"]
    assert after["kdf"]["salt"] != before["kdf"]["salt"], "a new passphrase wraps the key with a new salt"
    assert open_marker(remote, NEW_PASSPHRASE) == data_key
    with pytest.raises(InvalidTag):
        unwrap_data_key(after, PASSPHRASE)
    assert {path: (remote / path).read_bytes() for path in remote_files(remote) if path != MARKER} == files, \
        "changing the passphrase rewrites the marker alone"
    assert decrypted_texts(decrypt_remote(remote, data_key)) == memos

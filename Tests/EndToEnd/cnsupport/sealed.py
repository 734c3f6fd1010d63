"""What an encrypted remote must never show, and how the tests look for it: a memo's text, title, lines,
id and times, and the passphrase, in any encoding someone might write them in carelessly."""

from __future__ import annotations

import base64
import datetime
import json

from .cli import Cli

PASSPHRASE = "correct horse battery staple ünïcode"
WITH_PASSPHRASE = {"CLOUDNOTES_PASSPHRASE": PASSPHRASE}


def encodings(value: str) -> list[bytes]:
    """The forms in which `value` could show in a file someone wrote carelessly."""
    raw = value.encode()
    forms = [raw, json.dumps(value).encode(), json.dumps(value, ensure_ascii=False).encode(),
             value.encode("utf-16-le"), value.encode("utf-16-be"), raw.hex().encode(), raw.hex().upper().encode(),
             base64.b64encode(raw), base64.urlsafe_b64encode(raw).rstrip(b"=")]
    return [form for form in forms if len(form) >= 6]


def leaks(files: dict[str, bytes], secrets: list[str]) -> list[tuple[str, str]]:
    """(path, secret) for every secret found in a file, in any of its encodings."""
    found = []
    for path, data in files.items():
        for secret in secrets:
            if any(form in data for form in encodings(secret)):
                found.append((path, secret))
    return found


def memo_secrets(device: Cli) -> list[str]:
    """What must never be readable on an encrypted remote: each memo's text, title and lines, its id in
    every spelling, and its times (as shown, and in milliseconds, as revisions carry them)."""
    secrets = []
    for memo_id in device.ids():
        memo = device.memo(memo_id)
        secrets += [memo["text"], memo["id"], memo["id"].replace("-", ""), memo["id"].upper()]
        secrets += [line for line in memo["text"].splitlines() if len(line) >= 4]
        for field in ("createdAt", "modifiedAt"):
            moment = datetime.datetime.fromisoformat(memo[field].replace("Z", "+00:00"))
            secrets += [memo[field], str(round(moment.timestamp() * 1000))]  # as shown, and as sync writes it
    return secrets

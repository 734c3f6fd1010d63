"""Where things are: the repository, the binary under test, the sample import file."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
BINARY = os.environ.get("CLOUDNOTES_BIN", str(REPO / ".build" / "debug" / "cloudnotes"))
SAMPLE_JSON = Path(os.environ.get("CLOUDNOTES_SAMPLE", str(REPO.parent / "shared" / "samples" / "sample.json")))


def path_with_binary(folder: Path) -> str:
    """A PATH on which `cloudnotes` is the binary under test (a link to it in `folder`/bin), before the rest."""
    bin_dir = folder / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "cloudnotes").symlink_to(Path(BINARY).resolve())
    return f"{bin_dir}{os.pathsep}{os.environ['PATH']}"


def sample_path() -> Path:
    """The original app's sample import file: beside the repository, or on this workplace's shared disk."""
    for candidate in (SAMPLE_JSON, Path("/work/shared/samples/sample.json")):
        if candidate.exists():
            return candidate
    pytest.fail(f"the sample import file is missing: {SAMPLE_JSON}")

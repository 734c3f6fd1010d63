"""The file in which an editor driven by bench/frontend.py (Neovim's Lua, Emacs's Lisp) writes its figures."""

from __future__ import annotations

import json
import os

from .driver import BenchError


def fresh_result_path(work: str, editor: str) -> str:
    """Where `editor` writes its figures in `work`, with no file there yet."""
    out = os.path.join(work, f"{editor}_result.json")
    if os.path.exists(out):
        os.remove(out)
    return out


def read_result(out: str, editor: str, n: int, exit_code: int | None, output: str) -> dict:
    """The figures `editor` wrote in `out` on a store of `n` memos; a BenchError if it wrote none (its exit
    code and the end of its `output` then say why) or wrote an error."""
    if not os.path.exists(out):
        raise BenchError(f"{editor} wrote no result (exit code {exit_code}): {output}")
    with open(out) as f:
        result = json.load(f)
    if result.get("error"):
        raise BenchError(f"{editor} on {n:,} memos: {result['error']}")
    return result

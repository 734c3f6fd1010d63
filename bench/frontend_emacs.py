"""The Emacs driver of bench/frontend.py: `emacs -nw -Q` on a pseudo-terminal, with only clients/emacs on
its load-path (byte-compiled, and natively compiled when Emacs can: see prepare), running
clients/emacs/tests/cloudnotes-bench.el, which opens the list, jumps to its end and writes the figures.

Not `emacs --batch`: a batch Emacs never redisplays, so its windows never scroll to point and nothing is
ever drawn, where a headless Neovim still redraws its screen; on a terminal Emacs goes through its
command loop and redisplay as in a user's session. The terminal's output is read and thrown away.
"""

from __future__ import annotations

import fcntl
import filecmp
import glob
import json
import os
import select
import shutil
import struct
import subprocess
import sys
import termios
import time

from benchlib.driver import BenchError
from benchlib.editor_result import fresh_result_path, read_result

EMACS_PACKAGE = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "clients", "emacs")
EMACS_SCRIPT = os.path.join(EMACS_PACKAGE, "tests", "cloudnotes-bench.el")


def emacs_bin() -> str:
    return os.environ.get("EMACS", "emacs")


def emacs_available() -> bool:
    return shutil.which(emacs_bin()) is not None


_READY: set[str] = set()  # the folders prepare() made in this process


def prepare(binary: str, store: str, n: int, work: str, screen: tuple[int, int]) -> str:
    """The folder kept beside the stores (bench/data/emacs) with the package and Emacs's home.

    Once per benchmark run: clients/emacs and the bench script are copied into its lisp/ and
    byte-compiled, as an installed package is (again only if one changed); then one untimed run waits for
    the native compilations it started. An Emacs built with native compilation compiles each .elc it
    loads that has no .eln newer than it (the package, jsonrpc, eieio, term/xterm...) in background
    processes, into $HOME's eln-cache (kept here): these would share the CPU with the timed runs, and the
    first runs would time other code than the later ones. The first benchmark run spends about a minute
    on them; the later ones about a second."""
    base = os.path.join(os.path.dirname(os.path.abspath(store)), "emacs")
    lisp = os.path.join(base, "lisp")
    if lisp in _READY:
        return base
    os.makedirs(lisp, exist_ok=True)
    changed = False
    for file in glob.glob(os.path.join(EMACS_PACKAGE, "cloudnotes*.el")) + [EMACS_SCRIPT]:
        copy = os.path.join(lisp, os.path.basename(file))
        if not (os.path.exists(copy + "c") and filecmp.cmp(file, copy, shallow=False)):
            shutil.copyfile(file, copy)
            changed = True
    if changed:  # all of them: a file's macros are expanded in the others' .elc
        proc = subprocess.run([emacs_bin(), "--batch", "-Q", "-L", lisp, "-f", "batch-byte-compile",
                               *sorted(glob.glob(os.path.join(lisp, "*.el")))], capture_output=True, timeout=300)
        if proc.returncode != 0:
            raise BenchError(f"emacs could not byte-compile clients/emacs: {proc.stderr.decode()[-1500:]}")
    t = time.monotonic()
    run_emacs(binary, store, n, work, base, 600, screen, warmup=True)
    print(f"emacs: warm-up run (and its native compilations) in {time.monotonic() - t:.1f} s",
          file=sys.stderr, flush=True)
    _READY.add(lisp)
    return base


def emacs_driver(binary: str, store: str, n: int, work: str, timeout_s: float,
                 screen: tuple[int, int] = (50, 200)) -> dict:
    """One run of Emacs on a store of n memos: {"first_screen_ms", "rss_kb", "scroll_end_ms", ...}."""
    return run_emacs(binary, store, n, work, prepare(binary, store, n, work, screen), timeout_s, screen)


def run_emacs(binary: str, store: str, n: int, work: str, base: str, timeout_s: float,
              screen: tuple[int, int], warmup: bool = False) -> dict:
    """Emacs once, with the package and home in base; its figures."""
    out = fresh_result_path(work, "emacs")
    home = os.path.join(base, "home")
    os.makedirs(home, exist_ok=True)
    cfg = {"bin": binary, "store": store, "n": n, "out": out, "timeout_s": timeout_s}
    if warmup:
        cfg["warmup"] = True
    # screen-256color: an xterm's colours and keys, without the queries Emacs sends an xterm as it starts
    # (it waited 2 s for their answers here, still pending as the timing began).
    env = dict(os.environ, CN_FRONTEND=json.dumps(cfg), TERM="screen-256color", HOME=home, TZ="UTC",
               LANG="C.UTF-8")
    for var in ("CLOUDNOTES_STORE", "LC_ALL", "LC_TIME", "EMACSLOADPATH", "DISPLAY"):
        env.pop(var, None)
    master, slave = os.openpty()
    lines, columns = screen
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", lines, columns, 0, 0))
    lisp = os.path.join(base, "lisp")
    argv = [emacs_bin(), "-nw", "-Q", "-L", lisp, "-l", os.path.join(lisp, "cloudnotes-bench")]
    try:
        proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env, cwd=work,
                                start_new_session=True,  # the pty becomes its controlling terminal
                                preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
    finally:
        os.close(slave)
    tail = b""
    deadline = time.monotonic() + timeout_s + 30
    try:
        while True:  # drain the terminal, or Emacs blocks once its buffer is full
            if time.monotonic() > deadline:
                proc.kill()
                raise BenchError(f"emacs on {n:,} memos did not finish in {timeout_s + 30:.0f} s")
            if select.select([master], [], [], 0.2)[0]:
                try:
                    data = os.read(master, 65536)
                except OSError:  # EIO: every end of the terminal is closed
                    data = b""
                if not data:
                    break
                tail = (tail + data)[-3000:]
            elif proc.poll() is not None:
                break
        proc.wait(timeout=30)
    finally:
        os.close(master)
    return read_result(out, "emacs", n, proc.returncode, repr(tail.decode(errors="replace")[-1500:]))

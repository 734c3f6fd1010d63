"""What bash, zsh and fish themselves offer on Tab with cloudnotes's completion scripts loaded: each
shell runs the script the binary generates, is given a command line, and says what it would complete.
The drivers are in cnsupport/completion/."""

from __future__ import annotations

import os
import pty
import select
import shlex
import signal
import subprocess
import time
from pathlib import Path

from .paths import BINARY

DRIVERS = Path(__file__).parent / "completion"
SCRIPT_NAMES = {"bash": "cloudnotes.bash", "zsh": "_cloudnotes", "fish": "cloudnotes.fish"}


def offers(shell: str, line: str, folder: Path, env: dict[str, str]) -> list[str]:
    """What `shell` offers after `line` (the words typed, ending with a space to start a new word).

    The completion script is generated into `folder`; `env` must put the binary on PATH as
    `cloudnotes`, for the completions that ask it (memo ids)."""
    script = folder / SCRIPT_NAMES[shell]
    generated = subprocess.run([BINARY, "--generate-completion-script", shell], capture_output=True, env=env,
                               timeout=60, check=True)
    script.write_bytes(generated.stdout)
    if shell == "bash":
        command = ["bash", "--norc", str(DRIVERS / "bash_offers.sh"), str(script), line]
    elif shell == "zsh":
        command = ["zsh", "-f", str(DRIVERS / "zsh_offers.zsh"), line]
        env = {**env, "OFFERS_FPATH": str(folder)}
    else:
        return _fish_offers(script, line, env)
    result = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, f"{shell} could not complete {line!r}: {result.stderr}"
    return [entry.split("\t")[0] for entry in result.stdout.splitlines() if entry]


def _fish_offers(script: Path, line: str, env: dict[str, str]) -> list[str]:
    """What an interactive fish offers: `fish -c 'complete -C LINE'` is no judge, since fish 3.6 answers
    `commandline -C` (which the generated script asks) only with a command line being edited. So fish runs
    on a pseudo-terminal, the words are typed, and a key bound to `complete -C` prints the matches
    between ^B and ^C."""
    setup = (f"source {shlex.quote(str(script))}; "
             "function __offers; printf '\\x02'; complete -C; printf '\\x03'; end; bind \\cg __offers; "
             "printf 're''ady\\n'\r")
    pid, terminal = pty.fork()
    if pid == 0:
        os.execvpe("fish", ["fish", "--no-config", "--private", "-i"], {**env, "TERM": "dumb"})
    try:
        os.write(terminal, setup.encode())
        _read_until(terminal, b"ready\r\n")
        os.write(terminal, line.encode() + b"\x07")
        shown = _read_until(terminal, b"\x03")
    finally:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(terminal)
    offered = shown[shown.rindex(b"\x02") + 1:-1].decode()
    return [entry.split("\t")[0] for entry in offered.replace("\r", "").splitlines() if entry]


def _read_until(terminal: int, end: bytes, timeout: float = 60) -> bytes:
    """What the pseudo-terminal shows, up to and including `end`."""
    shown = b""
    deadline = time.monotonic() + timeout
    while end not in shown:
        remaining = deadline - time.monotonic()
        assert remaining > 0, f"the shell never showed {end!r}; it showed {shown[-500:]!r}"
        if select.select([terminal], [], [], remaining)[0]:
            shown += os.read(terminal, 65536)
    return shown[:shown.index(end) + len(end)]

"""`Cli`: the shell subcommands (`cloudnotes new|show|list|edit|rm|share|import|export|sync ...`) on one
store, run as a person or a script would: the real binary, its stdout, stderr and exit status, in a pipe
or on a terminal (a pseudo-terminal).

Each `Cli` has a clean environment of its own, which each call may extend: its own HOME (so that no
~/.netrc of the machine is read), TMPDIR (where `cloudnotes edit` keeps a text it could not save), no
user locale or colour settings, no CLOUDNOTES_REMOTE_* unless a test sets them. The store is named with
`--store` after the subcommand, or (`store_flag=False`) by CLOUDNOTES_STORE, for what takes no `--store`
and for tests of the variable itself.
"""

from __future__ import annotations

import json
import os
import pty
import select
import shlex
import subprocess
from dataclasses import dataclass
from pathlib import Path

from .paths import BINARY
from .schema import UUID_LOWER

ERROR_PREFIX = "cloudnotes: error: "


@dataclass
class Run:
    code: int
    out: str
    err: str

    @property
    def both(self) -> str:
        return self.out + self.err


def error_line(stderr: str) -> str:
    """The one `cloudnotes: error:` line of a failure's stderr, which must be its last line ('' if not).

    Other lines before it (log lines) are checked by a test of their own
    (test_sync_webdav_credentials.py::test_a_failed_sync_prints_one_error_line_and_a_clean_one_no_log_lines)."""
    lines = stderr.splitlines()
    errors = [line for line in lines if line.startswith(ERROR_PREFIX)]
    if len(errors) != 1 or not lines or lines[-1] != errors[0] or not stderr.endswith("\n"):
        return ""
    return errors[0]


def read_terminal(master: int, proc: subprocess.Popen, timeout: float, what: str) -> bytes:
    """What the processes on a pseudo-terminal wrote to it, until the last of them closes it."""
    captured = bytearray()
    while True:
        ready, _, _ = select.select([master], [], [], timeout)
        if not ready:
            proc.kill()
            raise AssertionError(f"{what} did not finish: {bytes(captured)!r}")
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every writer is gone
            break
        if not chunk:
            break
        captured += chunk
    os.close(master)
    return bytes(captured)


class Cli:
    """`cloudnotes SUBCOMMAND ...` on one store, with a clean environment that each call may extend."""

    def __init__(self, store: Path | str, home: Path | str | None = None, env: dict[str, str] | None = None, *,
                 store_flag: bool = True):
        self.store = Path(store)
        self.home = Path(home) if home is not None else self.store.parent
        self.name = self.home.name
        self.store_flag = store_flag
        for folder in (self.home, self.store.parent):
            folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(self.home), "LANG": "C.UTF-8",
                    "TZ": "UTC", "TMPDIR": str(self.home)}
        if not store_flag:
            self.env["CLOUDNOTES_STORE"] = str(self.store)
        self.env.update(env or {})

    def __repr__(self) -> str:
        return f"Cli({self.name})"

    def command(self, subcommand: str, *args: str) -> list[str]:
        return [BINARY, subcommand, *(["--store", str(self.store)] if self.store_flag else []), *args]

    def environment(self, env: dict[str, str | None] | None = None) -> dict[str, str]:
        """This store's environment with `env` on top (a None value removes a variable)."""
        merged = {**self.env, **(env or {})}
        return {k: v for k, v in merged.items() if v is not None}

    def run(self, *args: str, input: str | bytes | None = None, env: dict | None = None, tty_out: bool = False,
            tty_err: bool = False, timeout: float = 300) -> Run:
        """`cloudnotes *args`, in pipes or with stdout and/or stderr on a terminal 100 columns wide."""
        command = self.command(*args)
        data = input.encode() if isinstance(input, str) else input
        if not (tty_out or tty_err):
            proc = subprocess.run(command, input=data if data is not None else b"", capture_output=True,
                                  env=self.environment(env), cwd=self.home, timeout=timeout)
            return Run(proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace"))
        master, slave = pty.openpty()
        proc = subprocess.Popen(
            command, stdin=subprocess.PIPE, env=self.environment({**(env or {}), "TERM": "xterm", "COLUMNS": "100"}),
            stdout=slave if tty_out else subprocess.PIPE, stderr=slave if tty_err else subprocess.PIPE, cwd=self.home)
        os.close(slave)
        if data is not None:
            proc.stdin.write(data)
        proc.stdin.close()
        terminal = read_terminal(master, proc, timeout, str(command)).decode().replace("\r\n", "\n")
        piped_out = proc.stdout.read().decode() if proc.stdout else ""
        piped_err = proc.stderr.read().decode() if proc.stderr else ""
        code = proc.wait(timeout)
        return Run(code, terminal if tty_out else piped_out, terminal if tty_err and not tty_out else piped_err)

    def popen(self, *args: str, env: dict | None = None, **options) -> subprocess.Popen:
        """`cloudnotes *args` started, not waited for (stdin empty; stdout and stderr piped unless told)."""
        options = {"stdin": subprocess.DEVNULL, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE, **options}
        return subprocess.Popen(self.command(*args), env=self.environment(env), cwd=self.home, **options)

    def ok(self, *args: str, **kwargs) -> Run:
        result = self.run(*args, **kwargs)
        assert result.code == 0, f"{self.name}: cloudnotes {' '.join(args)} failed ({result.code}): {result.err}"
        return result

    def fails(self, *args: str, **kwargs) -> Run:
        """A command that must fail: status 1, nothing on stdout, and on stderr one `cloudnotes: error:`
        line, its first and last, which never shows a Swift error's description."""
        result = self.run(*args, **kwargs)
        assert result.code == 1, f"{self.name}: expected failure, got {result.code}: {result.out!r} {result.err!r}"
        assert result.out == "", result.out
        assert error_line(result.err), f"expected one error line, the last: {result.err!r}"
        assert result.err.startswith(ERROR_PREFIX), result.err
        assert "Error(" not in result.err and "ResponseError" not in result.err, result.err
        return result

    # -- memos ----------------------------------------------------------------------------------------

    def new(self, text: str) -> str:
        """`cloudnotes new` with the text on stdin (any text, however long); the new memo's id."""
        memo_id = self.ok("new", input=text).out.strip()
        assert UUID_LOWER.match(memo_id), memo_id
        return memo_id

    def edit(self, memo_id: str, text: str) -> None:
        """`cloudnotes edit` with an editor that writes `text` into the file; the memo then holds it."""
        source = self.home / f"edit-{memo_id}.txt"
        source.write_bytes(text.encode("utf-8"))
        self.ok("edit", memo_id, env={"VISUAL": f"cp {shlex.quote(str(source))}", "EDITOR": None})
        assert self.text(memo_id) == text, f"{self.name}: the edit of {memo_id} did not save the text"

    def rm(self, memo_id: str) -> None:
        self.ok("rm", memo_id)

    def import_file(self, path: Path, timeout: float = 600) -> Run:
        return self.ok("import", str(path), timeout=timeout)

    def trash(self) -> list[dict]:
        """`trash --json`: the memos in the trash, most recently deleted first."""
        return json.loads(self.ok("trash", "--json").out)

    def history(self, memo_id: str) -> list[dict]:
        """`history ID --json`: the memo's kept versions, newest first."""
        return json.loads(self.ok("history", memo_id, "--json").out)["versions"]

    def rows(self, *args: str) -> list[dict]:
        """`list --json`: the rows, newest first."""
        return json.loads(self.ok("list", "--json", *args).out)

    def ids(self) -> list[str]:
        return [row["id"] for row in self.rows()]

    def memo(self, memo_id: str) -> dict:
        return json.loads(self.ok("show", memo_id, "--json").out)

    def text(self, memo_id: str) -> str:
        return self.memo(memo_id)["text"]

    def texts(self) -> dict[str, str]:
        """id -> exact text of every memo, through `list --json` and `show --json` (slow: small stores only)."""
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

    def sync_run(self, remote: str | None = None, *extra: str, env: dict | None = None, timeout: float = 300) -> Run:
        """`cloudnotes sync [--remote URL] ... --json`, however it ends."""
        args = (["--remote", remote] if remote else []) + list(extra) + ["--json"]
        return self.run("sync", *args, env=env, timeout=timeout)

    def sync(self, remote: str | None = None, *extra: str, env: dict | None = None, timeout: float = 300) -> dict:
        """A sync that must succeed; its `--json` report (the SyncResult)."""
        result = self.sync_run(remote, *extra, env=env, timeout=timeout)
        assert result.code == 0, f"{self.name}: cloudnotes sync failed ({result.code}): {result.err}"
        report = json.loads(result.out)
        assert set(report) == {"changedMemos", "conflicts", "published", "requests", "status"}, report
        assert report["status"]["state"] == "idle", report
        return report

    def status(self, env: dict | None = None) -> dict:
        return json.loads(self.ok("sync", "--status", "--json", env=env).out)

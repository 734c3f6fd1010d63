"""Spawning ``cloudnotes serve`` and moving lines of bytes through its pipes.

This layer knows nothing about JSON-RPC: it finds the binary, starts the process, writes whole lines to
its stdin, reads lines from its stdout, and keeps the tail of its stderr (the server's log) so that an
error about a dead server can say why it died.
"""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import threading
from typing import List, Mapping, Optional, Sequence, Union

from .errors import BinaryNotFoundError, ServerDiedError

PathLike = Union[str, "os.PathLike[str]"]

#: How much of the server's stderr is kept for error messages.
STDERR_TAIL_BYTES = 64 * 1024


def find_binary(binary: Optional[PathLike] = None) -> str:
    """Resolves the server executable: ``binary``, else ``$CLOUDNOTES_BIN``, else ``cloudnotes`` on PATH."""
    candidate = os.fspath(binary) if binary is not None else os.environ.get("CLOUDNOTES_BIN") or None
    if candidate is None:
        found = shutil.which("cloudnotes")
        if found is None:
            raise BinaryNotFoundError(
                "cannot find the cloudnotes server: pass binary=..., set CLOUDNOTES_BIN, or put `cloudnotes` on PATH")
        return found
    # A bare name is looked up on PATH, as a shell would; a path must exist.
    if os.sep not in candidate and not os.path.exists(candidate):
        found = shutil.which(candidate)
        if found is None:
            raise BinaryNotFoundError(f"cannot find the cloudnotes server {candidate!r} on PATH")
        return found
    if not os.path.isfile(candidate) or not os.access(candidate, os.X_OK):
        raise BinaryNotFoundError(f"the cloudnotes server {candidate!r} does not exist or is not executable")
    # Absolute, so that a server started in another working directory (cwd=...) is still found.
    return os.path.abspath(candidate)


def serve_command(binary: str, store: Optional[PathLike] = None, extra_args: Sequence[str] = ()) -> List[str]:
    """The argument list for ``cloudnotes serve [--store PATH] [extra args]``."""
    command = [binary, "serve"]
    if store is not None:
        command += ["--store", os.fspath(store)]
    return command + list(extra_args)


class ServerProcess:
    """One server process on pipes: write lines to it, read lines from it."""

    def __init__(self, command: Sequence[str], *, env: Optional[Mapping[str, str]] = None,
                 cwd: Optional[PathLike] = None):
        self.command = list(command)
        environment = dict(os.environ)
        if env:
            environment.update(env)
        try:
            self._proc = subprocess.Popen(
                self.command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                env=environment, cwd=os.fspath(cwd) if cwd is not None else None, bufsize=0)
        except OSError as error:
            raise BinaryNotFoundError(f"cannot start {self.command[0]!r}: {error}") from error
        # readline() on a raw pipe costs one system call per byte; a buffer makes long lines cheap.
        self._stdout = io.BufferedReader(self._proc.stdout, buffer_size=1 << 16)
        self._write_lock = threading.Lock()
        self._stderr_tail = bytearray()
        self._stderr_lock = threading.Lock()
        # The server blocks when its stderr pipe fills, so the log is always drained.
        self._stderr_thread = threading.Thread(target=self._drain_stderr, name="cloudnotes-stderr", daemon=True)
        self._stderr_thread.start()

    @property
    def pid(self) -> int:
        """The server's process id."""
        return self._proc.pid

    @property
    def returncode(self) -> Optional[int]:
        """The exit code, or None while the process runs."""
        return self._proc.poll()

    @property
    def stderr_tail(self) -> str:
        """The last part of what the server wrote to stderr (its log)."""
        with self._stderr_lock:
            return bytes(self._stderr_tail).decode("utf-8", "replace")

    def _drain_stderr(self) -> None:
        stream = self._proc.stderr
        while True:
            try:
                chunk = stream.read(8192)
            except (OSError, ValueError):
                return
            if not chunk:
                return
            with self._stderr_lock:
                self._stderr_tail += chunk
                del self._stderr_tail[:-STDERR_TAIL_BYTES]

    def write_line(self, data: bytes) -> None:
        """Writes one message (``data`` plus ``\\n``) to the server's stdin in one piece."""
        with self._write_lock:
            try:
                self._proc.stdin.write(data + b"\n")
            except (BrokenPipeError, ValueError, OSError) as error:
                raise ServerDiedError(f"cannot write to the server ({error.__class__.__name__})",
                                      self.wait_briefly(), self.stderr_tail) from error

    def read_line(self) -> bytes:
        """The next line from stdout, with its line end; ``b""`` at end of output."""
        try:
            return self._stdout.readline()
        except (OSError, ValueError):
            return b""

    def close_stdin(self) -> None:
        """Ends the server's input; the server then finishes its work and exits."""
        with self._write_lock:
            try:
                self._proc.stdin.close()
            except OSError:
                pass

    def wait(self, timeout: Optional[float] = None) -> Optional[int]:
        """Waits for the process to end; returns its exit code, or None if it still runs after ``timeout``."""
        try:
            return self._proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            return None

    def wait_briefly(self) -> Optional[int]:
        """The exit code once the process is gone; its pipes close a moment before it is reaped."""
        return self.wait(2.0)

    def kill(self) -> None:
        """Kills the process (SIGKILL on POSIX) if it still runs."""
        if self._proc.poll() is None:
            try:
                self._proc.kill()
            except OSError:
                pass

    def release(self) -> None:
        """Closes the pipes once the process is gone (after the reader has seen the end of stdout)."""
        self._stderr_thread.join(timeout=5)
        for pipe in (self._proc.stdin, self._stdout, self._proc.stderr):
            try:
                pipe.close()
            except (OSError, ValueError):
                pass

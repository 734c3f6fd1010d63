"""The driver: one process on pipes, one round trip at a time (`Driver`) or pipelined (`pipelined`).

The same driver, with the same per-trip work, runs the server and the `cat` of the baselines, so that its
own cost is in the floor too. See "The driver" in bench/README.md.
"""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import threading
import time

perf_ns = time.perf_counter_ns

# The server writes the members in declaration order: notifications start with the first prefix, responses
# with one of the others. A line in another order takes the slow path (parsed), so that must stay rare.
NOTIFICATION_PREFIX = b'{"jsonrpc":"2.0","method"'
RESPONSE_PREFIXES = (b'{"jsonrpc":"2.0","id":', b'{"id":', b'{"error":')


def is_response(line: bytes) -> bool:
    """Whether a line the server wrote is a response: by its first bytes, else (keys in another order) parsed."""
    return line.startswith(RESPONSE_PREFIXES) or (not line.startswith(NOTIFICATION_PREFIX) and "id" in json.loads(line))


# The `initialize` request of a timed start-up (see `timed_start`).
INITIALIZE_LINE = (b'{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"clientInfo":{"name":"cloudnotes-bench"},'
                   b'"locale":"en-US","timeZone":"UTC"}}\n')


class BenchError(Exception):
    """Something broke: an error response, a crash, a hang, a wrong answer. Aborts the run."""


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# The server raises both its pipes to 256 KB (Sources/CloudNotesTransport/PipeCapacity.swift); `cat` gets
# the same, so that the pipe's floor is measured through pipes like the server's.
SERVER_PIPE_BYTES = 1 << 18
F_SETPIPE_SZ = 1031


def enlarge_pipes(proc: subprocess.Popen, size: int) -> None:
    for pipe in (proc.stdin, proc.stdout):
        try:
            fcntl.fcntl(pipe.fileno(), F_SETPIPE_SZ, size)
        except OSError:
            pass  # above /proc/sys/fs/pipe-max-size: the server is refused the same


class Driver:
    """One process on pipes: one line per request, read lines until the matching response.

    Lean on purpose, so that its own cost is small and the same for the server and for `cat`: request
    lines are bytes built before the clock starts; the timed loop only writes, reads lines and checks
    their first bytes; parsing and checking happen after the clock stops.
    """

    def __init__(self, argv: list[str], log_path: str | None = None, timeout: float = 900.0, label: str = "",
                 pipe_bytes: int | None = None, preexec_fn=None):
        self.label = label or os.path.basename(argv[0])
        self.log_path = log_path
        self._log = open(log_path, "ab") if log_path else subprocess.DEVNULL
        self.t_spawn = perf_ns()
        self.proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self._log,
                                     bufsize=1 << 16, preexec_fn=preexec_fn)
        if pipe_bytes:
            enlarge_pipes(self.proc, pipe_bytes)
        self.fd = self.proc.stdin.fileno()
        self.readline = self.proc.stdout.readline
        self.next_id = 1
        self.killed_by_watchdog = False
        self._watchdog = threading.Timer(timeout, self._kill)
        self._watchdog.daemon = True
        self._watchdog.start()

    # -- plumbing

    def _kill(self) -> None:
        self.killed_by_watchdog = True
        try:
            self.proc.kill()
        except OSError:
            pass

    def write(self, data: bytes) -> None:
        try:
            n = os.write(self.fd, data)
            if n != len(data):
                view = memoryview(data)[n:]
                while view:
                    view = view[os.write(self.fd, view):]
        except BrokenPipeError:
            raise self.died("writing") from None

    def died(self, doing: str) -> BenchError:
        if self.killed_by_watchdog:
            return BenchError(f"{self.label}: hung while {doing}; killed after the timeout{self.stderr_tail()}")
        try:
            code = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = "still running"
        return BenchError(f"{self.label}: the process closed its output while {doing} (exit code {code})"
                          f"{self.stderr_tail()}")

    def stderr_tail(self) -> str:
        if not self.log_path:
            return ""
        try:
            with open(self.log_path, "rb") as f:
                f.seek(max(0, os.path.getsize(self.log_path) - 2000))
                tail = f.read().decode(errors="replace").strip()
        except OSError:
            return ""
        return f"\n--- last lines of {self.log_path} ---\n{tail}" if tail else ""

    def request(self, method: str, params: dict | None = None) -> tuple[int, bytes]:
        """A request line (bytes) and its id."""
        rid = self.next_id
        self.next_id += 1
        line = b'{"jsonrpc":"2.0","id":%d,"method":"%s"' % (rid, method.encode())
        if params is not None:
            line += b',"params":' + json.dumps(params, ensure_ascii=False, separators=(",", ":")).encode()
        return rid, line + b"}\n"

    def notify(self, method: str, params: dict | None = None) -> None:
        line = b'{"jsonrpc":"2.0","method":"%s"' % method.encode()
        if params is not None:
            line += b',"params":' + json.dumps(params, separators=(",", ":")).encode()
        self.write(line + b"}\n")

    # -- the timed part

    def round_trip(self, line: bytes) -> tuple[int, bytes, list[bytes]]:
        """Writes one request line and reads up to its response: (elapsed ns, response, notifications)."""
        readline, notifications = self.readline, []
        t0 = perf_ns()
        self.write(line)
        while True:
            got = readline()
            if got.startswith(NOTIFICATION_PREFIX):
                notifications.append(got)
                continue
            if got.startswith(RESPONSE_PREFIXES):
                return perf_ns() - t0, got, notifications
            if not got:
                raise self.died("waiting for a response")
            if "id" in json.loads(got):  # keys in another order: slow path
                return perf_ns() - t0, got, notifications
            notifications.append(got)

    def echo_trip(self, line: bytes) -> int:
        """For `cat`: writes a line and reads one line back (the pipe's floor)."""
        t0 = perf_ns()
        self.write(line)
        got = self.readline()
        elapsed = perf_ns() - t0
        if len(got) != len(line):
            raise self.died("echoing")
        return elapsed

    # -- checks, after the clock

    def check(self, rid: int, response: bytes, method: str):
        try:
            message = json.loads(response)
        except ValueError:
            raise BenchError(f"{method} (id {rid}): the server wrote a line that is not JSON: {response[:300]!r}")
        if message.get("id") != rid:
            raise BenchError(f"{method}: expected the response to id {rid}, got {response[:300]!r}")
        if "error" in message:
            raise BenchError(f"{method} (id {rid}) failed: {json.dumps(message['error'], ensure_ascii=False)[:1000]}")
        if "result" not in message:
            raise BenchError(f"{method} (id {rid}): a response without result: {response[:300]!r}")
        return message["result"]

    def call(self, method: str, params: dict | None = None):
        """One checked request, untimed: (result, parsed notifications)."""
        rid, line = self.request(method, params)
        _, response, notifications = self.round_trip(line)
        return self.check(rid, response, method), [json.loads(n) for n in notifications]

    def read_until_notification(self, method: str) -> tuple[int, list[bytes]]:
        """Reads lines until a notification `method` (ns since spawn, lines read)."""
        marker = b'"method":"%s"' % method.encode()
        seen = []
        while True:
            got = self.readline()
            if not got:
                raise self.died(f"waiting for {method}")
            seen.append(got)
            if marker in got:
                return perf_ns() - self.t_spawn, seen
            if is_response(got):
                raise BenchError(f"{self.label}: unexpected response while waiting for {method}: {got[:300]!r}")
            if b'"method":"detail/didClear"' in got and method == "detail/didShow":
                raise BenchError(f"{self.label}: detail/didClear after initialized: the store looks empty")

    def vm_kb(self) -> dict:
        """VmHWM (peak RSS), VmRSS and its parts (RssAnon: the process's own memory; RssFile: mapped file
        pages, mostly the binary's code) of the process, in kB."""
        out = {}
        try:
            with open(f"/proc/{self.proc.pid}/status") as f:
                for row in f:
                    if row.startswith(("VmHWM:", "VmRSS:", "RssAnon:", "RssFile:")):
                        key, value = row.split(":", 1)
                        out[key] = int(value.split()[0])
        except OSError:
            pass
        return out

    def close_log(self) -> None:
        if self._log is not subprocess.DEVNULL:
            self._log.close()

    def close_cat(self) -> None:
        self._watchdog.cancel()
        self.proc.stdin.close()
        self.proc.stdout.read()
        self.proc.wait(timeout=30)
        self.close_log()

    def shutdown(self) -> dict:
        """Reads VmHWM, then shutdown + exit; the process must end with code 0. Returns the memory figures."""
        memory = self.vm_kb()
        self.call("shutdown")
        self.notify("exit")
        self.proc.stdin.close()
        rest = self.proc.stdout.read()
        try:
            code = self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self._kill()
            raise BenchError(f"{self.label}: did not exit after shutdown + exit{self.stderr_tail()}")
        self._watchdog.cancel()
        self.close_log()
        if rest.strip():
            raise BenchError(f"{self.label}: wrote after the shutdown response: {rest[:300]!r}")
        if code != 0:
            raise BenchError(f"{self.label}: exit code {code} after shutdown + exit{self.stderr_tail()}")
        return memory


def timed_start(d: Driver) -> tuple[int, int]:
    """A just-spawned server's start-up, in ns from the spawn: to the `initialize` response, and to the
    first `detail/didShow` after `initialized`. The server keeps running."""
    d.write(INITIALIZE_LINE)  # before the server is ready for it, as an editor does
    _, response, _ = d.round_trip(b"")  # reads up to the initialize response
    t_init = perf_ns() - d.t_spawn
    d.check(1, response, "initialize")
    d.next_id = 2
    d.notify("initialized")
    t_show, _ = d.read_until_notification("detail/didShow")
    return t_init, t_show


def start_initialized(argv: list[str], label: str, timeout: float = 900.0, preexec_fn=None) -> Driver:
    """A process on pipes, sent `initialize` (en-US, UTC) and `initialized`, as bench/compare.py's servers are."""
    d = Driver(argv, label=label, timeout=timeout, preexec_fn=preexec_fn)
    d.call("initialize", {"locale": "en-US", "timeZone": "UTC"})
    d.notify("initialized")
    return d


def json_escape(text: str) -> bytes:
    """`text` as the inside of a JSON string, in UTF-8 (what goes between the quotes)."""
    return json.dumps(text, ensure_ascii=False)[1:-1].encode()


def memo_id_bytes(memo_id: str) -> bytes:
    """A memo's id for a `%`-formatted request line."""
    return memo_id.encode().replace(b"%", b"%%")


def pipelined(d: Driver, lines: list[bytes], count_every_line: bool = False,
              received: list[bytes] | None = None) -> tuple[int, list[bytes]]:
    """Writes all lines from a thread without waiting and reads every response: (ns, responses).

    The writer is a thread so that neither side blocks on a full pipe. The clock runs from the first
    write to the last response. `received`, if given, gets every line read (notifications too).

    While the clock runs, the reader only reads into one buffer, made (and its pages touched) before,
    and counts the responses there; the lines are split off after the clock stops. The driver shares
    this machine's two CPUs with the server, so its own work counts against the server's figure: a
    reader that split each chunk into new line objects as it came (copying the 266 MB that 10,000
    updates write back twice, into memory new to it) measured the same binary at 16,627 updates a
    second where this one measures 19,177 (medians of 5 runs each, in turns; bench/HISTORY.md).
    """
    chunks, chunk, size = [], [], 0
    for line in lines:
        chunk.append(line)
        size += len(line)
        if size >= 1 << 16:
            chunks.append(b"".join(chunk))
            chunk, size = [], 0
    if chunk:
        chunks.append(b"".join(chunk))
    failure = []

    def writer():
        try:
            for c in chunks:
                d.write(c)
        except BenchError as e:
            failure.append(e)

    # Room for all that comes back: the same lines from `cat`; from the server, each reply carries the
    # text twice (and its body), beside a notification.
    sent = sum(map(len, lines))
    buffer = bytearray((sent if count_every_line else 3 * sent) + (1 << 20))
    view = memoryview(buffer)
    # What marks a line to count, newline first: a newline is put before the first line too.
    marker = b"\n" if count_every_line else b"\n" + RESPONSE_PREFIXES[0]
    buffer[0] = ord("\n")
    read, expected, counted, end = d.proc.stdout.readinto1, len(lines), 0, 1
    lowest = 1 if count_every_line else 0  # the newline put first is no line
    # Whether the first lines have been looked at for responses that begin otherwise: those would never be
    # counted, and the reader would wait for the watchdog.
    looked = count_every_line

    def more_to_read() -> bool:
        """Whether a response has yet to begin, or the last one to end."""
        if counted < expected:
            return True
        return not count_every_line and buffer.find(b"\n", buffer.rfind(marker, 0, end) + 1, end) < 0

    thread = threading.Thread(target=writer, daemon=True)
    t0 = perf_ns()
    thread.start()
    while more_to_read():
        if end == len(buffer):
            raise BenchError(f"{d.label}: wrote back more than the {len(buffer):,} bytes of room for {sent:,} sent")
        got = read(view[end:])
        if not got:
            raise d.died("echoing pipelined lines" if count_every_line else "reading pipelined responses")
        # A marker that began in the bytes before this read and ends in it is counted now, not before.
        counted += buffer.count(marker, max(lowest, end - len(marker) + 1), end + got)
        end += got
        if not looked and counted == 0 and buffer.count(b"\n", 1, end) >= 8:
            looked = True
            unmarked = [line for line in bytes(view[1:end]).split(b"\n")[:-1] if is_response(line)]
            if unmarked:
                raise BenchError(f"{d.label}: a response begins {unmarked[0][:40]!r}, not {RESPONSE_PREFIXES[0]!r}, "
                                 "which the pipelined reader counts")
    elapsed = perf_ns() - t0
    thread.join()
    if failure:
        raise failure[0]
    complete = bytes(view[1:end]).split(b"\n")[:-1]
    del view, buffer
    if received is not None:
        received.extend(complete)
    responses = [got for got in complete if count_every_line or is_response(got)]
    if len(responses) != expected:
        raise BenchError(f"{d.label}: {len(responses)} responses to {expected} pipelined lines")
    return elapsed, responses

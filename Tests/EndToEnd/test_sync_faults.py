"""Sync through a network that breaks: every fault of `FaultProxy` at every request of a sync, and SIGKILL.

The scenario: devices A and B share a memo and both have unpublished changes (the shared memo edited on
different lines on each, new memos on each; on A also a 100 KB memo, a delete of a memo B made (to the
trash), an undelete of a memo B deleted, a restore of an earlier version of a memo, and a 1 MB memo, so
that A publishes three segments).  A has published nothing before: its sync makes its
folders (MKCOL on Apache) and publishes its first segments.  A syncs through a FaultProxy;
the fault hits request k of A's sync (k = 1 .. the number of requests a clean sync makes, counted first).
A's faulty sync fails (exit 1, one error line) or succeeds; then a clean sync of A succeeds, B syncs, A syncs
again, and both stores hold exactly the expected memos (same ids and texts, nothing lost, nothing
duplicated, the shared memo merged), and the remote is consistent (every head names segments that all exist
and chain; see cnsupport.remote.read_remote) -- right after the fault as well as at the end.

Every case starts from the same template: the stores and the remote's files are restored from copies
taken once per server, so the cases are independent and the request numbering is the same in each.
Timeouts use CLOUDNOTES_REMOTE_TIMEOUT=1 and a proxy that hangs for HANG_SECONDS.

The whole matrix (8 faults x every request index) runs on Apache, on nginx, and on both S3 servers (moto's,
which honours conditional writes, and rclone's, which checks every signature), with the proxy as A's
endpoint.  SIGKILL of `cloudnotes sync`
at seeded random moments (when the proxy receives a chosen request, or after a random delay) runs on Apache,
during syncs of ~2,000 memos.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import socket
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from cnsupport.cli import Cli, error_line
from cnsupport.dav_servers import DavServer
from cnsupport.fault_proxy import FAULTS, FaultProxy, TriggerProxy, hang_up
from cnsupport.remote import read_remote, remote_state
from cnsupport.session import write_entries
from cnsupport.store_file import copy_store, memos_of
from cnsupport.syncing import describe_difference

HANG_SECONDS = 2.0
TIMEOUT_ENV = {"CLOUDNOTES_REMOTE_TIMEOUT": "1"}
SHARED = "Shared plan\nline 2: the start\nline 3: unchanged\nline 4: unchanged\nline 5: the end\nline 6: unchanged\n"
SHARED_A = SHARED.replace("line 2: the start", "line 2: the start, edited on A")
SHARED_B = SHARED.replace("line 5: the end", "line 5: the end, edited on B")
SHARED_MERGED = SHARED_A.replace("line 5: the end", "line 5: the end, edited on B")
BIG = "Big memo of 100 KB\n" + "".join(f"line {i:05d}: " + "x" * 40 + "\n" for i in range(2000))
HUGE = "Huge memo of 1 MB\n" + "".join(f"row {i:06d} " + "y" * 50 + "\n" for i in range(17000))


class DavStorage:
    """A WebDAV collection behind the proxy: A reaches it through the proxy's URL."""

    def __init__(self, kind: str, server: DavServer):
        self.kind, self.server = kind, server
        self.url = server.new_collection(f"faults-{kind}-{time.monotonic_ns()}")
        self.proxy = FaultProxy(self.url, hang_seconds=HANG_SECONDS)
        self.a_url, self.a_env, self.b_env = self.proxy.url, {}, {}
        self.template: Path | None = None

    def keep(self, root: Path) -> None:
        self.template = root / "template" / "collection"
        shutil.copytree(self.server.path_of(self.url), self.template)

    def restore(self) -> None:
        collection = self.server.path_of(self.url)
        shutil.rmtree(collection)
        shutil.copytree(self.template, collection)
        self.server.give_tree(collection)

    def source(self):
        return self.url

    def remove(self) -> None:
        shutil.rmtree(self.server.path_of(self.url), ignore_errors=True)


class S3Storage:
    """A prefix of a bucket on an S3 server: A reaches it with the proxy as its endpoint (which passes the
    Host header on as A signed it), B straight."""

    def __init__(self, server):
        self.kind, self.server = server.kind, server
        self.bucket = server.new_bucket()
        self.url = f"s3://{self.bucket}/faults"
        self.proxy = FaultProxy(server.endpoint + "/", hang_seconds=HANG_SECONDS, keep_host=True)
        self.a_url, self.a_env, self.b_env = self.url, {**server.env, "AWS_ENDPOINT_URL": self.proxy.base_url}, server.env
        self.template: dict[str, bytes] = {}

    def keep(self, root: Path) -> None:
        self.template = self.server.objects(self.bucket)

    def restore(self) -> None:
        self.server.replace_objects(self.bucket, self.template)

    def source(self):
        return self.server.source(self.bucket, "faults")

    def remove(self) -> None:
        self.server.replace_objects(self.bucket, {})


@dataclass
class Scenario:
    kind: str
    storage: DavStorage | S3Storage
    proxy: FaultProxy
    root: Path
    a: Cli                        # A syncs through the proxy
    b: Cli                        # B syncs straight
    template_a: Path
    template_b: Path
    expected: dict[str, str]
    devices: set[str]
    clean_requests: list[tuple[str, str]] = field(default_factory=list)
    clean_seconds: float = 0.0

    def restore(self) -> None:
        self.proxy.clear()
        self.storage.restore()
        copy_store(self.template_a, self.a.store)
        copy_store(self.template_b, self.b.store)
        self.proxy.reset_counts()
        self.proxy.events.clear()


def build_scenario(storage: DavStorage | S3Storage) -> Scenario:
    kind, url, proxy = storage.kind, storage.url, storage.proxy
    root = Path(tempfile.mkdtemp(prefix=f"cloudnotes-faults-{kind}-"))
    a = Cli(root / "template" / "a" / "notes.sqlite", env=storage.a_env)
    b = Cli(root / "template" / "b" / "notes.sqlite", env=storage.b_env)
    # B publishes the shared memo and another; A reads them and has published nothing yet, so that A's sync
    # is its first publication (making its folders) and goes through every step of sync.md.
    shared = b.new(SHARED)
    old = b.new("Old on B\nwill be deleted on A")
    trashed = b.new("In the trash\nbrought back on A")
    b.rm(trashed)
    b.sync(url)
    a.sync(storage.a_url)
    assert memos_of(a.store) == memos_of(b.store) and len(memos_of(a.store)) == 2
    assert [row["id"] for row in a.trash()] == [trashed]
    # unpublished changes on both; A's fill three segments (at most 1 MiB of text in each; the 1 MB memo alone)
    a.edit(shared, SHARED_A)
    b.edit(shared, SHARED_B)
    huge = a.new(HUGE)
    new_a = [a.new("New on A\nfirst"), a.new("New on A\nsecond, with ünïcödé ✓")]
    big = a.new(BIG)
    a.rm(old)
    a.ok("undelete", trashed)
    restored = a.new("Restored on A\nfirst")
    a.edit(restored, "Restored on A\nsecond")
    a.ok("restore", restored, "1")
    new_b = b.new("New on B\nonly one")
    expected = {shared: SHARED_MERGED, new_a[0]: "New on A\nfirst", new_a[1]: "New on A\nsecond, with ünïcödé ✓",
                big: BIG, huge: HUGE, new_b: "New on B\nonly one", trashed: "In the trash\nbrought back on A",
                restored: "Restored on A\nfirst"}
    devices = {a.status()["device"], b.status()["device"]}
    storage.keep(root)
    scenario = Scenario(kind, storage, proxy, root, Cli(root / "run" / "a" / "notes.sqlite", env=storage.a_env),
                        Cli(root / "run" / "b" / "notes.sqlite", env=storage.b_env), a.store, b.store, expected, devices)
    # a clean sync of A, to count its requests
    scenario.restore()
    started = time.monotonic()
    scenario.a.sync(env=TIMEOUT_ENV)
    scenario.clean_seconds = time.monotonic() - started
    scenario.clean_requests = proxy.requests
    assert proxy.errors == [], proxy.errors
    finish(scenario)  # the scenario itself ends as expected without faults
    return scenario


def finish(s: Scenario) -> None:
    """B syncs, A syncs again; both hold exactly the expected memos; the remote is consistent."""
    reports = [s.b.sync(), s.a.sync(env=TIMEOUT_ENV)]
    on_a, on_b = memos_of(s.a.store), memos_of(s.b.store)
    assert on_a == s.expected, describe_difference("A", on_a, s.expected)
    assert on_b == s.expected, describe_difference("B", on_b, s.expected)
    for report in reports:
        status = report["status"]
        assert (status["pendingChanges"], status["conflicts"], status.get("lastError")) == (0, [], None), status
    view = read_remote(s.storage.source(), published_by=s.devices)
    assert remote_state(view) == s.expected, "the remote's history ends in the expected memos"
    for device in view.devices.values():
        ids = [r["id"] for segment in device.segments for r in segment]
        assert len(ids) == len(set(ids)), f"device {device.device} published a revision twice"


@pytest.fixture(scope="module", params=["apache", "nginx", "moto", "rclone"])
def scenario(request):
    if request.param in ("moto", "rclone"):
        storage = S3Storage(request.getfixturevalue(f"{request.param}_s3"))
    else:
        storage = DavStorage(request.param, request.getfixturevalue(f"{request.param}_dav"))
    s = build_scenario(storage)
    print(f"\n{s.kind}: a clean sync of A makes {len(s.clean_requests)} requests in {s.clean_seconds:.2f} s: "
          f"{[(m, p.rsplit('/', 3)[-3:]) for m, p in s.clean_requests]}")
    yield s
    s.proxy.stop()
    shutil.rmtree(s.root, ignore_errors=True)
    storage.remove()


def run_case(s: Scenario, fault: str, k: int) -> str:
    """One case; returns how A's faulty sync ended."""
    s.restore()
    rule = s.proxy.fail(fault, after=k - 1)
    faulty = s.a.sync_run(env=TIMEOUT_ENV, timeout=120)
    assert rule.fired == 1, f"the fault did not fire (the sync made {len(s.proxy.requests)} requests)"
    assert faulty.code in (0, 1), f"the faulty sync exited {faulty.code}: {faulty.err}"
    if faulty.code == 1:
        assert faulty.out == "" and error_line(faulty.err), faulty.err
        status = s.a.status()
        assert status["state"] == "failed" and status["lastError"], status
    # readers never see a broken remote, even right after a fault (a segment no head names yet is allowed)
    read_remote(s.storage.source(), interrupted=True)
    s.proxy.clear()
    clean = s.a.sync_run(env=TIMEOUT_ENV, timeout=120)
    assert clean.code == 0, f"the clean sync after the fault failed: {clean.err}"
    finish(s)
    assert s.proxy.errors == [], s.proxy.errors
    return "succeeded" if faulty.code == 0 else f"failed: {error_line(faulty.err)[len('cloudnotes: error: '):][:110]}"


@pytest.mark.parametrize("fault", sorted(FAULTS))
def test_every_fault_at_every_request_of_a_sync(scenario, fault):
    s = scenario
    problems, outcomes = [], []
    for k in range(1, len(s.clean_requests) + 1):
        method, path = s.clean_requests[k - 1]
        where = f"{fault} at request {k} ({method} {path.rsplit('/', 3)[-3:]})"
        try:
            outcomes.append(f"{where}: {run_case(s, fault, k)}")
        except AssertionError as error:
            problems.append(f"{where}: {str(error)[:1500]}")
        except Exception:
            problems.append(f"{where}: {traceback.format_exc()[-1500:]}")
    print("\n" + "\n".join(outcomes))
    assert not problems, f"{len(problems)} of {len(s.clean_requests)} cases failed on {s.kind}:\n" + "\n\n".join(problems)


# ---------------------------------------------------------------------------------------------------
# SIGKILL at random moments
# ---------------------------------------------------------------------------------------------------

SEED = int(os.environ.get("CLOUDNOTES_KILL_SEED", "20261121"))
ROUNDS = 40


def import_memos(cli: Cli, path: Path, entries: list[dict]) -> dict[str, str]:
    """Imports `entries`; returns the memos the import made (id -> text)."""
    before = memos_of(cli.store)
    cli.import_file(write_entries(path, entries))
    after = memos_of(cli.store)
    made = {k: v for k, v in after.items() if k not in before}
    assert len(made) == len(entries)
    return made


def test_sigkill_at_random_moments_loses_and_duplicates_nothing(apache_dav, tmp_root):
    """A holds ~2,000 memos and B 300; in each round A changes (100 more imported memos, an edit, a delete, a
    new memo) and so does B (which syncs straight, unharmed), then A's sync through a slow proxy is killed
    with SIGKILL when the proxy receives a chosen request, or after a random delay (seeded; the request
    number and the delay are drawn up to what the last uninterrupted sync took).  Then a clean sync of A,
    B, A: both hold exactly the expected memos, none duplicated; the remote is consistent."""
    rng = random.Random(SEED)
    url = apache_dav.new_collection(f"sigkill-{time.monotonic_ns()}")
    proxy = TriggerProxy(url, hang_seconds=HANG_SECONDS, delay=0.01)
    try:
        a, b = Cli(tmp_root / "a" / "notes.sqlite"), Cli(tmp_root / "b" / "notes.sqlite")
        expected = import_memos(b, tmp_root / "b.json", [
            {"title": f"From B {i}", "body": f"made on B, number {i}", "last_modified": 1_650_000_000 + i}
            for i in range(300)])
        b.sync(url)
        imported = import_memos(a, tmp_root / "a.json", [
            {"title": f"Imported {i}", "body": f"body of imported memo {i}\n" * (1 + i % 5),
             "last_modified": 1_650_000_000 + i} for i in range(2000)])
        expected.update(imported)
        a.ok("sync", "--remote", proxy.url, "--status")        # sets the remote; no sync yet
        mine = sorted(imported)
        outcomes, killed_rounds = [], 0
        last_requests, last_seconds = 20, 1.0
        for round_number in range(ROUNDS):
            made = import_memos(a, tmp_root / f"round-{round_number}.json", [
                {"title": f"Round {round_number} memo {i}", "body": "x", "last_modified": 1_660_000_000 + i}
                for i in range(100)])
            expected.update(made)
            mine += sorted(made)
            memo = mine[rng.randrange(len(mine))]
            if memo in expected:
                if round_number % 4 == 3:
                    a.rm(memo)
                    del expected[memo]
                else:
                    expected[memo] = f"Edited on A in round {round_number}\n{expected[memo]}"
                    a.edit(memo, expected[memo])
            if round_number % 2 == 0:
                text = f"Made on B in round {round_number}"
                expected[b.new(text)] = text
                b.sync()

            proxy.reset_counts()
            started = time.monotonic()
            process = a.popen("sync")

            timers: list[threading.Timer] = []

            def kill(process=process):
                # A kill that comes after the sync ended does nothing: a Popen that was waited for is
                # never signalled again.
                try:
                    process.send_signal(signal.SIGKILL)
                except ProcessLookupError:
                    pass

            def kill_after(delay: float) -> None:
                timers.append(threading.Timer(delay, kill))
                timers[-1].start()

            if rng.random() < 0.5:
                proxy.trigger_at, jitter = rng.randint(1, last_requests), rng.choice([0, 0, 0.002, 0.008])
                proxy.trigger = (lambda j=jitter: kill_after(j)) if jitter else kill
                how = f"when request {proxy.trigger_at} arrives + {jitter * 1000:.0f} ms"
            else:
                delay = rng.uniform(0, last_seconds)
                how = f"after {delay:.3f} s"
                kill_after(delay)
            process.communicate(timeout=120)
            seconds = time.monotonic() - started
            proxy.trigger = None
            for timer in timers:
                timer.cancel()
                timer.join()
            if process.returncode == -signal.SIGKILL:
                killed_rounds += 1
                ended = "killed"
            else:
                assert process.returncode == 0, f"round {round_number}: exit {process.returncode}"
                ended = "finished"
                last_requests, last_seconds = len(proxy.requests), seconds
            outcomes.append(f"round {round_number}: kill {how}: {ended} after {len(proxy.requests)} requests, "
                            f"{seconds:.3f} s")
        print(f"\nseed {SEED} (CLOUDNOTES_KILL_SEED)\n" + "\n".join(outcomes))
        assert killed_rounds >= ROUNDS // 2, f"only {killed_rounds} of {ROUNDS} syncs were killed:\n" + "\n".join(outcomes)
        a.sync()
        b.sync()
        a.sync()
        on_a, on_b = memos_of(a.store), memos_of(b.store)
        assert on_a == expected, describe_difference("A", on_a, expected)
        assert on_b == expected, describe_difference("B", on_b, expected)
        assert len(set(on_a.values())) == len(on_a), "no memo is duplicated"
        view = read_remote(url, published_by={a.status()["device"], b.status()["device"]})
        assert remote_state(view) == expected
    finally:
        proxy.stop()


# ---------------------------------------------------------------------------------------------------
# A server that stops in the middle of an answer
# ---------------------------------------------------------------------------------------------------

class StallingServer:
    """Answers every request with `200`, a Content-Length of 1,000, 10 bytes of body, and then nothing for
    `stall` seconds (a server or a network that stops mid-answer without closing the connection)."""

    def __init__(self, stall: float):
        self.stall = stall
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.port = self.listener.getsockname()[1]
        self.stopping = threading.Event()
        self.connections: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while not self.stopping.is_set():
            try:
                connection, _ = self.listener.accept()
            except OSError:
                return
            self.connections.append(connection)
            threading.Thread(target=self._answer, args=(connection,), daemon=True).start()

    def _answer(self, connection: socket.socket) -> None:
        try:
            connection.recv(65536)
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n0123456789")
            self.stopping.wait(self.stall)
        except OSError:
            pass
        finally:
            connection.close()

    def stop(self) -> None:
        self.stopping.set()
        self.listener.close()
        hang_up(self.connections)


def test_the_request_timeout_also_bounds_an_answer_that_stops_midway(tmp_root):
    """CLOUDNOTES_REMOTE_TIMEOUT bounds each WebDAV request: also one whose answer began (status, headers,
    part of the body) and then stalled.  Here the server stalls for longer than the command may run (its
    guard against a hang), and never closes the connection: a sync that ends at all, with its error, was
    ended by its own timeout (1 s)."""
    server = StallingServer(stall=600)
    try:
        a = Cli(tmp_root / "a" / "notes.sqlite")
        a.new("Waiting for a stalled server")
        a.ok("sync", "--remote", f"http://127.0.0.1:{server.port}/dav/stalled/", "--status")
        run = a.run("sync", env=TIMEOUT_ENV, timeout=120)
        assert run.code == 1 and error_line(run.err), run
        assert server.connections and not server.stopping.is_set(), "the server stalled and never closed"
    finally:
        server.stop()

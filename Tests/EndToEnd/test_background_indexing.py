"""The background indexer stays out of the way of bulk work (rule C7 in Server.swift): while a
sync or an import runs, it indexes nothing, even though the client is quiet; once they end, it indexes what
is left. (The two took turns at the store's one write lock: a first sync of 100,000 memos took 59.5 s with
the indexer beside it, 24.9 s without.)"""

from __future__ import annotations

import http.server
import os
import threading
import time

from cnsupport.dav_http import AnyMethodHandler
from cnsupport.server import Server
from cnsupport.session import make_entries
from cnsupport.store_file import unindexed, wait_until_indexed

QUIET_PERIOD = 0.3  # BackgroundIndexer.quietPeriod


def start_with_unindexed_memos(servers, count: int = 40) -> Server:
    """A server whose store holds `count` memos just imported, which the indexer has not reached yet (it
    waits for the client to be quiet)."""
    server = servers.session(args=["--sync-interval", "0", "--sync-delay", "600"])
    assert server.call("memo/import", {"memos": make_entries(count, "waiting")})["imported"] == count
    return server


class HeldRemote:
    """A WebDAV remote on 127.0.0.1 that holds every request until `release`, then answers 503: a sync
    against it runs until the test lets it end."""

    def __init__(self) -> None:
        self.released = threading.Event()
        self.requests = 0
        held = self

        class Handler(AnyMethodHandler):
            def handle_any(self) -> None:
                held.requests += 1
                held.released.wait(60)
                self.send_response(503)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/notes"

    def close(self) -> None:
        self.released.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def keep_busy_until(server: Server, started, what: str) -> None:
    """Sends requests (each one puts the indexer off) until `started()`: the client goes quiet only once
    the bulk work is under way, however long the server takes to start it."""
    deadline = time.monotonic() + 60  # a guard against a hang
    while not started():
        assert time.monotonic() < deadline, f"{what} never started"
        server.call("sync/status")
        time.sleep(QUIET_PERIOD / 6)


def test_the_indexer_waits_while_a_sync_runs(servers):
    server = start_with_unindexed_memos(servers)
    remote = HeldRemote()
    try:
        # Configuring a remote starts a sync at once; it waits on the remote's first answer.
        server.call("sync/configure", {"remote": remote.url})
        keep_busy_until(server, lambda: remote.requests > 0, "the sync")
        time.sleep(QUIET_PERIOD * 4)  # the client is quiet: without the sync, the indexer would be done
        assert unindexed(servers.store) == 40
        remote.released.set()
        wait_until_indexed(servers.store)
    finally:
        remote.close()


def test_the_indexer_waits_while_an_import_runs(servers, tmp_root):
    server = start_with_unindexed_memos(servers)
    # An import from a pipe runs until the test writes its file and closes it.
    fifo = tmp_root / "import.fifo"
    os.mkfifo(fifo)
    import_id = server.send_request("memo/import", {"path": str(fifo)})
    writer = None

    def import_started() -> bool:
        # The server's import opens the pipe for reading: then a writer's open that does not wait succeeds.
        nonlocal writer
        try:
            writer = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        except OSError:
            return False
        return True

    keep_busy_until(server, import_started, "the import")
    time.sleep(QUIET_PERIOD * 4)
    assert unindexed(servers.store) == 40
    os.write(writer, b'[{"title": "last", "body": "imported through a pipe", "last_modified": 1600000000}]')
    os.close(writer)
    _, response = server.wait_response(import_id)
    assert response["result"]["imported"] == 1, response
    wait_until_indexed(servers.store)

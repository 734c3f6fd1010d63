"""The server's relation to its client process and to the store's file permissions."""

import os
import subprocess
import time


def test_the_server_exits_when_its_client_process_is_gone(servers, tmp_root):
    client_process = subprocess.Popen(["sleep", "60"])
    try:
        srv = servers.start(args=["--client-process-id", str(client_process.pid)])
        srv.initialize()
        memo = srv.create("written before the editor went away")
        client_process.kill()
        client_process.wait()
        # The server is still reading stdin (nobody closed it): only the watch can end it.
        assert srv.wait(timeout=10) == 0
        srv.stop()  # drains stderr
        assert "is gone" in srv.stderr
    finally:
        if client_process.poll() is None:
            client_process.kill()
    again = servers.start()
    again.initialize()
    assert [row["id"] for row in again.list_all()["rows"]] == [memo["id"]]


def test_a_running_client_process_keeps_the_server_alive(servers):
    srv = servers.start(args=["--client-process-id", str(os.getpid())])
    srv.initialize()
    time.sleep(1.5)  # three checks of the client process
    assert srv.proc.poll() is None
    srv.create("still here")


def test_a_store_readable_by_others_is_reported(servers, tmp_root):
    folder = tmp_root / "shared-folder"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    store = folder / "notes.sqlite"
    srv = servers.start(store)
    srv.initialize()
    srv.create("private?")
    srv.stop()
    assert "readable by other users" in srv.stderr
    assert "chmod 0700" in srv.stderr


def test_a_private_store_is_not_reported(servers):
    srv = servers.start()
    srv.initialize()
    srv.create("private")
    srv.stop()
    assert "readable by other users" not in srv.stderr

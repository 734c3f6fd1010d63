"""The server's relation to its client process, to the store's file permissions, and to its flags."""

import fcntl
import os
import subprocess
import time

import pytest

from cnsupport.paths import BINARY


def test_the_server_exits_when_its_client_process_is_gone(servers, tmp_root):
    client_process = subprocess.Popen(["sleep", "60"])
    try:
        srv = servers.session(args=["--client-process-id", str(client_process.pid)])
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
    again = servers.session()
    assert [row["id"] for row in again.list_all()["rows"]] == [memo["id"]]


def test_a_running_client_process_keeps_the_server_alive(servers):
    srv = servers.session(args=["--client-process-id", str(os.getpid())])
    time.sleep(1.5)  # three checks of the client process
    assert srv.proc.poll() is None
    srv.create("still here")


def test_a_store_readable_by_others_is_reported(servers, tmp_root):
    folder = tmp_root / "shared-folder"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    store = folder / "notes.sqlite"
    srv = servers.session(store)
    srv.create("private?")
    srv.stop()
    assert "readable by other users" in srv.stderr
    assert "chmod 0700" in srv.stderr


def test_a_private_store_is_not_reported(servers):
    srv = servers.session()
    srv.create("private")
    srv.stop()
    assert "readable by other users" not in srv.stderr


# -- serve's flags --------------------------------------------------------------------------------
# `serve` parses its own flags alone first (it is quicker at start-up); whatever that parse cannot take
# goes to the whole command tree, which must answer as it always has: usage under `cloudnotes serve`.

@pytest.mark.parametrize("use_serve", [True, False], ids=["serve", "default subcommand"])
def test_serve_takes_every_flag_with_or_without_its_name(servers, tmp_root, use_serve):
    log = tmp_root / f"serve-{use_serve}.log"
    srv = servers.start(use_serve=use_serve, args=[
        "--durability", "synced", "--log-level", "debug", "--log-file", str(log),
        "--client-process-id", str(os.getpid()), "--sync-interval", "0", "--sync-delay", "0.5"])
    srv.initialize()
    srv.notify("an/unknown-notification")
    memo = srv.create("taken with every flag")
    assert srv.shutdown_and_exit() == 0
    srv.stop()
    logged = log.read_text()
    assert "debug cloudnotes: ignored the notification an/unknown-notification" in logged
    assert f"serving {srv.store}" in logged
    assert srv.stderr == ""  # the logs went to the file
    again = servers.session(srv.store)
    assert [row["id"] for row in again.list_all()["rows"]] == [memo["id"]]


def run_command(tmp_root, *arguments):
    store = tmp_root / "flags" / "notes.sqlite"
    return subprocess.run([BINARY, *arguments], input="", capture_output=True, text=True, timeout=60,
                          env={**os.environ, "CLOUDNOTES_STORE": str(store)})


SERVE_FLAG_MISTAKES = [
    pytest.param(["--sync-interval=-1"], "Error: --sync-interval must be 0 or more", id="validation"),
    pytest.param(["--sync-delay", "nan"], "Error: --sync-delay must be 0 or more", id="validation of a double"),
    pytest.param(["--durability", "nope"], "Error: The value 'nope' is invalid for '--durability <mode>'", id="bad value"),
    pytest.param(["--bogus"], "Error: Unknown option '--bogus'", id="unknown flag"),
]


# Without `serve`, a first word that is no option is an unknown command (test_shell_unix.py), not serve's.
@pytest.mark.parametrize("prefix, flags, message", [
    *(pytest.param([], *mistake.values, id=f"{mistake.id}, default subcommand") for mistake in SERVE_FLAG_MISTAKES),
    *(pytest.param(["serve"], *mistake.values, id=f"{mistake.id}, serve") for mistake in SERVE_FLAG_MISTAKES),
    pytest.param(["serve"], ["extra"], "Error: Unexpected argument 'extra'", id="extra argument, serve"),
])
def test_a_mistake_in_serves_flags_is_explained_by_the_whole_command(tmp_root, prefix, flags, message):
    result = run_command(tmp_root, *prefix, *flags)
    assert result.returncode == 64, result
    assert result.stdout == ""
    assert message in result.stderr
    assert "Usage: cloudnotes serve [--store <path>]" in result.stderr
    assert "See 'cloudnotes serve --help' for more information." in result.stderr


def test_help_version_and_completion_requests_reach_the_whole_command(tmp_root):
    for arguments in (["serve", "--help"], ["serve", "-h"], ["help", "serve"]):
        result = run_command(tmp_root, *arguments)
        assert result.returncode == 0, (arguments, result)
        assert "USAGE: cloudnotes serve [--store <path>]" in result.stdout, arguments
    version = run_command(tmp_root, "--version")
    assert (version.returncode, version.stdout) == (0, "0.1.0\n")
    for arguments in (["--generate-completion-script", "bash"], ["serve", "--generate-completion-script", "bash"]):
        script = run_command(tmp_root, *arguments)
        assert script.returncode == 0, (arguments, script)
        assert "complete -o filenames -F _cloudnotes cloudnotes" in script.stdout, arguments
    assert not (tmp_root / "flags").exists()  # none of these opened a store


def minor_page_faults(pid: int) -> int:
    """The process's minor page faults so far (the tenth field of /proc/PID/stat)."""
    with open(f"/proc/{pid}/stat") as stat:
        after_name = stat.read().rsplit(")", 1)[1].split()
    return int(after_name[7])


def test_typing_into_a_long_memo_reuses_memory_instead_of_mapping_fresh_pages(servers):
    # glibc's defaults map every block over 128 KB afresh and give big free blocks back, so each keystroke
    # into a 100 KB memo met about 95 new pages, each a page fault; the server keeps such memory for reuse.
    srv = servers.session()
    text = "".join(f"line {i}: 회의 메모, meeting notes about the budget\n" for i in range(2_000))
    assert len(text.encode()) > 100_000
    memo = srv.create(text)
    version = memo["version"]

    def type_keys(count: int) -> None:
        nonlocal text, version
        for _ in range(count):
            text += "x"
            version = srv.call("memo/update", {"id": memo["id"], "text": text, "baseVersion": version})["memo"]["version"]

    type_keys(20)
    before = minor_page_faults(srv.proc.pid)
    type_keys(40)
    per_keystroke = (minor_page_faults(srv.proc.pid) - before) / 40
    # Measured: about 1-2 a keystroke, against 32-63 with glibc's defaults.
    assert per_keystroke < 10, f"{per_keystroke:.0f} page faults a keystroke"
    assert srv.memo_text(memo["id"]) == text


F_GETPIPE_SZ = 1032


def test_the_server_enlarges_its_pipes_so_a_long_memo_crosses_in_one_write(servers):
    # A keystroke in a 100 KB memo is a 100 KB request and a reply of over 200 KB: through Linux's 64 KB
    # pipes each would stop the writer until the reader drained, several times a message.
    with open("/proc/sys/fs/pipe-max-size") as limit:
        if int(limit.read()) < 1 << 18:
            pytest.skip("this system lets no unprivileged process have a 256 KB pipe")
    srv = servers.session()
    assert fcntl.fcntl(srv.proc.stdin.fileno(), F_GETPIPE_SZ) == 1 << 18
    assert fcntl.fcntl(srv.proc.stdout.fileno(), F_GETPIPE_SZ) == 1 << 18
    text = "한글 and English, " * 15_000
    memo = srv.create(text)
    assert srv.call("memo/update", {"id": memo["id"], "text": text + "!", "baseVersion": memo["version"]})["memo"]["text"] == text + "!"

"""Sync through real WebDAV servers (Apache mod_dav and nginx dav_ext): protocol/sync.md end to end.

Two stores (devices) sync through one collection with `cloudnotes sync`; what lands on the server is read
back over HTTP and checked against the layout and the rules of protocol/sync.md, as another implementation
would read it.  Apache with Basic auth checks the credentials: from the environment, from a netrc file, a
wrong password, and that a password never shows (output, server log, store), nor a URL with one in it.
"""

from __future__ import annotations

import base64
import json
import re
import shutil
import time
from pathlib import Path

import pytest

from syncsupport import Cli, check_remote, conflict_copy_id, leaves, remote_state, sha256_hex
from webdav import ApacheDav, free_port, http_request, propfind

BASE_TEXT = "Trip plan\nday 1: train to Lyon\nday 2: museum\nday 3: walk by the river\nday 4: market\nday 5: home\n"


@pytest.fixture
def pair(tmp_root) -> tuple[Cli, Cli]:
    """Two devices: stores A and B, each with its own HOME."""
    return Cli(tmp_root / "a" / "notes.sqlite"), Cli(tmp_root / "b" / "notes.sqlite")


def replace_line(text: str, old: str, new: str) -> str:
    assert old in text
    return text.replace(old, new, 1)


def wait_for_next_millisecond(pause: float = 0.01) -> None:
    time.sleep(pause)   # modifiedAt of two edits must differ for the "later side wins" rule to be observable


# ---------------------------------------------------------------------------------------------------
# Two devices through one collection
# ---------------------------------------------------------------------------------------------------

def test_a_memo_made_on_a_appears_on_b_and_edits_and_deletes_travel_back(dav_collection, pair):
    server, url = dav_collection
    a, b = pair
    first = a.new("Groceries\nmilk\neggs")
    report = a.sync(url)
    assert (report["published"], report["changedMemos"], report["conflicts"]) == (1, 0, 0), report
    assert report["status"]["remote"] == url and report["status"]["pendingChanges"] == 0, report

    report = b.sync(url)
    assert (report["changedMemos"], report["published"]) == (1, 0), report
    assert b.listed() == {first: "Groceries\nmilk\neggs"}

    second = b.new("From B\nwritten on the second device")
    b.edit(first, "Groceries\nmilk\neggs\nbread")
    report = b.sync()
    assert report["published"] == 2, report
    report = a.sync()
    assert report["changedMemos"] == 2, report
    expected = {first: "Groceries\nmilk\neggs\nbread", second: "From B\nwritten on the second device"}
    assert a.listed() == b.listed() == expected

    a.rm(second)
    assert a.sync()["published"] == 1
    assert b.sync()["changedMemos"] == 1
    assert a.listed() == b.listed() == {first: expected[first]}
    # the fast reader the other tests use agrees with the shell
    assert a.memos() == a.listed() and b.memos() == b.listed()
    # nothing changed: a sync changes and publishes nothing
    for device in (a, b):
        report = device.sync()
        assert (report["changedMemos"], report["published"], report["conflicts"]) == (0, 0, 0), report
    check_remote(url, published_by={a.status()["device"], b.status()["device"]})


def test_a_collection_whose_name_needs_escaping(dav_collection, pair):
    """Spaces, non-ASCII and "+" in the collection's path: PROPFIND's hrefs come back escaped."""
    server, _ = dav_collection
    a, b = pair
    url = server.new_collection(f"my notes ä+b {time.monotonic_ns()}")
    memo = a.new("Escaped\npath")
    a.sync(url)
    assert b.sync(url)["changedMemos"] == 1
    assert b.listed() == {memo: "Escaped\npath"}
    check_remote(url, published_by={a.status()["device"]})


def test_concurrent_edits_of_different_lines_merge(dav_collection, pair):
    server, url = dav_collection
    a, b = pair
    memo = a.new(BASE_TEXT)
    a.sync(url)
    b.sync(url)
    a.edit(memo, replace_line(BASE_TEXT, "day 1: train to Lyon", "day 1: train to Lyon, 8:02 from Gare de Lyon"))
    b.edit(memo, replace_line(BASE_TEXT, "day 4: market", "day 4: market (buy cheese)"))
    a.sync()
    report = b.sync()
    assert (report["changedMemos"], report["conflicts"]) == (1, 0), report
    report = a.sync()
    assert (report["changedMemos"], report["conflicts"]) == (1, 0), report
    merged = BASE_TEXT.replace("day 1: train to Lyon", "day 1: train to Lyon, 8:02 from Gare de Lyon").replace(
        "day 4: market", "day 4: market (buy cheese)")
    assert a.listed() == b.listed() == {memo: merged}
    assert a.status()["conflicts"] == b.status()["conflicts"] == []
    # the merge is one revision with both edits as parents, and the history has one live leaf: the merged text
    view = check_remote(url)
    assert remote_state(view) == {memo: merged}
    [leaf] = leaves(view)[memo]
    assert len(view.revisions[leaf]["parents"]) == 2


def test_overlapping_edits_give_the_same_conflict_copy_on_both(dav_collection, pair):
    server, url = dav_collection
    a, b = pair
    memo = a.new(BASE_TEXT)
    a.sync(url)
    b.sync(url)
    text_a = replace_line(BASE_TEXT, "day 2: museum", "day 2: Musée des Confluences")
    text_b = replace_line(BASE_TEXT, "day 2: museum", "day 2: Fourvière and the old town")
    a.edit(memo, text_a)
    wait_for_next_millisecond()
    b.edit(memo, text_b)             # B's edit is the later one: B's text stays, A's becomes the copy
    a.sync()
    report = b.sync()
    assert report["conflicts"] == 1, report
    a.sync()
    view = check_remote(url)
    [losing] = [r for r in view.revisions.values() if r["memo"] == memo and r.get("text") == text_a]
    copy = conflict_copy_id(memo, losing["text"])
    on_a, on_b = a.listed(), b.listed()
    assert on_a == on_b, "both devices hold the same memos"
    assert set(on_a) == {memo, copy}, f"the memo and its conflict copy {copy} (id as sync.md derives it)"
    assert on_a[memo] == text_b
    assert on_a[copy].endswith(text_a) and on_a[copy] != text_a
    assert b.status()["conflicts"] == [{"memo": memo, "copy": copy}], "B met the conflict"
    # the copy's history: one root revision dated by the losing revision
    [copy_revision] = [r for r in view.revisions.values() if r["memo"] == copy]
    assert copy_revision["parents"] == []
    assert copy_revision["createdAt"] == copy_revision["modifiedAt"] == losing["modifiedAt"]
    # deleting the copy settles the conflict, on both devices
    a.rm(copy)
    a.sync()
    b.sync()
    assert a.status()["conflicts"] == b.status()["conflicts"] == []
    assert a.listed() == b.listed() == {memo: text_b}


def test_a_device_that_receives_a_conflict_copy_lists_the_conflict_too(dav_collection, pair):
    """sync/status's `conflicts` lists each conflict kept as a copy until the copy is deleted: A, which
    received B's merge and copy (rather than merging itself), holds the copy too, and should list it."""
    server, url = dav_collection
    a, b = pair
    memo = a.new(BASE_TEXT)
    a.sync(url)
    b.sync(url)
    a.edit(memo, replace_line(BASE_TEXT, "day 4: market", "day 4: flea market"))
    wait_for_next_millisecond()
    b.edit(memo, replace_line(BASE_TEXT, "day 4: market", "day 4: covered market"))
    a.sync()
    b.sync()
    a.sync()
    [copy] = [memo_id for memo_id in a.listed() if memo_id != memo]
    assert b.status()["conflicts"] == [{"memo": memo, "copy": copy}]
    assert a.status()["conflicts"] == [{"memo": memo, "copy": copy}], "A holds the copy but does not list the conflict"


def test_conflict_copy_text_follows_sync_md(dav_collection, pair):
    """sync.md: the copy's text is `Conflict copy: ` followed by the losing text."""
    server, url = dav_collection
    a, b = pair
    memo = a.new(BASE_TEXT)
    a.sync(url)
    b.sync(url)
    text_a = replace_line(BASE_TEXT, "day 3: walk by the river", "day 3: rest")
    a.edit(memo, text_a)
    wait_for_next_millisecond()
    b.edit(memo, replace_line(BASE_TEXT, "day 3: walk by the river", "day 3: boat trip"))
    a.sync()
    b.sync()
    copies = [text for memo_id, text in b.listed().items() if memo_id != memo]
    assert copies == ["Conflict copy: " + text_a], copies


@pytest.mark.parametrize("outcome", ["merge", "conflict"])
def test_two_devices_that_merge_independently_make_the_same_revisions(dav_collection, pair, outcome):
    """Deterministic merges: A and B each merge the same two revisions without having seen the other's merge,
    and make the very same revisions: one merge id (and for a conflict one copy), published by both.

    Timing is simulated by rewinding a head on the server for one sync (readers see only what heads name),
    as if the other device's sync had not finished yet."""
    server, url = dav_collection
    a, b = pair
    memo = a.new(BASE_TEXT)
    a.sync(url)
    b.sync(url)
    device_a, device_b = a.status()["device"], b.status()["device"]
    head_a = f"{url}devices/{device_a}/head.json"
    text_a = replace_line(BASE_TEXT, "day 2: museum", "day 2: opera")
    text_b = replace_line(BASE_TEXT, "day 5: home" if outcome == "merge" else "day 2: museum",
                          "day 5: home by bus" if outcome == "merge" else "day 2: zoo")
    a.edit(memo, text_a)
    wait_for_next_millisecond()
    b.edit(memo, text_b)
    head_before_a = http_request("GET", head_a).body
    a.sync()                                   # A publishes a
    head_with_a = http_request("GET", head_a).body
    server.write_file(head_a, head_before_a)   # B syncs before A's sync is visible: B publishes b alone
    report = b.sync()
    assert (report["published"], report["changedMemos"]) == (1, 0), report
    server.write_file(head_a, head_with_a)
    report = a.sync()                          # A meets b: merges on its own
    assert report["conflicts"] == (1 if outcome == "conflict" else 0), report
    head_with_merge = http_request("GET", head_a).body
    server.write_file(head_a, head_with_a)     # B meets a without A's merge: merges on its own
    report = b.sync()
    assert report["conflicts"] == (1 if outcome == "conflict" else 0), report
    server.write_file(head_a, head_with_merge)
    a.sync()
    b.sync()
    view = check_remote(url, published_by={device_a, device_b})
    published = {device: {r["id"] for s in view.devices[device].segments for r in s} for device in view.devices}
    merges = {r["id"] for r in view.revisions.values() if len(r["parents"]) == 2}
    assert len(merges) == 1, f"one merge revision, whoever made it: {merges}"
    [merge] = merges
    assert merge in published[device_a] and merge in published[device_b], "both devices made (and published) it"
    on_a, on_b = a.listed(), b.listed()
    assert on_a == on_b
    if outcome == "merge":
        assert on_a == {memo: BASE_TEXT.replace("day 2: museum", "day 2: opera").replace("day 5: home",
                                                                                           "day 5: home by bus")}
    else:
        [losing] = [r for r in view.revisions.values() if r.get("text") == text_a]
        copy = conflict_copy_id(memo, losing["text"])
        assert set(on_a) == {memo, copy} and on_a[memo] == text_b and on_a[copy].endswith(text_a)
        [copy_revision] = [r for r in view.revisions.values() if r["memo"] == copy]
        assert copy_revision["id"] in published[device_a] and copy_revision["id"] in published[device_b]
        assert a.status()["conflicts"] == b.status()["conflicts"] == [{"memo": memo, "copy": copy}]
    merged = view.revisions[merge]
    sides = [view.revisions[p] for p in merged["parents"]]
    assert merged["createdAt"] == min(s["createdAt"] for s in sides)
    assert merged["modifiedAt"] == max(s["modifiedAt"] for s in sides)


# ---------------------------------------------------------------------------------------------------
# What lands on the server
# ---------------------------------------------------------------------------------------------------

def write_import_file(path: Path, count: int, prefix: str) -> Path:
    entries = [{"title": f"{prefix} {i}", "body": f"line one of {prefix} {i}\nline two", "last_modified": 1_700_000_000 + i}
               for i in range(count)]
    path.write_text(json.dumps(entries), encoding="utf-8")
    return path


def test_the_remote_follows_the_layout_of_sync_md(dav_collection, pair, tmp_root):
    """Segments of at most 1,000 revisions or 1 MiB of text (a longer memo alone), numbered from 1 with
    12 digits, chained by hashes up to the head; revision ids recomputed from their content; a delete is a
    tombstone with no text; the marker; nothing else at the top."""
    server, url = dav_collection
    a, b = pair
    a.import_file(write_import_file(tmp_root / "import.json", 1500, "imported"))
    big = "Big memo\n" + ("0123456789abcdef" * 64 + "\n") * 1500          # about 1.5 MiB: a segment alone
    big_id = a.new(big)
    gone = a.new("Soon deleted\nonce")
    a.sync(url)
    a.rm(gone)
    a.sync()
    device = a.status()["device"]
    view = check_remote(url, published_by={device})
    assert list(view.devices) == [device]
    segments = view.devices[device].segments
    counts = [len(s) for s in segments]
    assert sum(counts) == 1500 + 2 + 1, counts
    assert any(len(s) == 1 and s[0]["memo"] == big_id for s in segments), f"the 1.5 MiB memo alone: {counts}"
    assert max(counts) <= 1000 and len(segments) >= 4, counts
    memos = a.memos()
    state = remote_state(view)
    assert state == memos, "the remote's history ends, memo by memo, in what the store holds"
    assert len(memos) == 1501 and big_id in memos and gone not in memos
    [tombstone] = [r for r in view.revisions.values() if r["memo"] == gone and r["deleted"]]
    [live] = [r for r in view.revisions.values() if r["memo"] == gone and not r["deleted"]]
    assert tombstone["parents"] == [live["id"]] and "text" not in tombstone
    assert tombstone["createdAt"] == live["createdAt"]
    # the head file and the segments as bytes: JSON lines ending in a newline, UTF-8
    head = http_request("GET", f"{url}devices/{device}/head.json").body
    assert json.loads(head)["last"] == sha256_hex(view.devices[device].raw[-1])
    # a second device reads all of it, and publishes nothing it did not change
    report = b.sync(url)
    assert report["published"] == 0 and report["changedMemos"] >= 1501, report
    assert b.memos() == memos


def test_changed_memos_counts_each_memo_once(dav_collection, pair):
    """`changedMemos`: memos changed here by other devices' edits.  A memo made in one of A's segments and
    edited in the next is one memo changed on B, not two."""
    server, url = dav_collection
    a, b = pair
    memo = a.new("Counted\nonce")
    a.sync(url)
    a.edit(memo, "Counted\nonce, edited")
    other = a.new("Another\nmemo")
    a.sync()
    report = b.sync(url)
    assert b.listed() == {memo: "Counted\nonce, edited", other: "Another\nmemo"}
    assert report["changedMemos"] == 2, f"2 memos changed on B, reported {report['changedMemos']}"


def test_a_copied_store_takes_a_new_device_id(dav_collection, pair):
    """sync.md: a store that finds another store's segments under its own id takes a new id and publishes
    its unpublished revisions under it; nothing of either store is lost."""
    server, url = dav_collection
    a, b = pair
    shared = a.new("Shared\nfrom the original")
    a.sync(url)
    copy = Cli(a.store.parent.parent / "copy" / "notes.sqlite")
    for each in a.store.parent.glob(a.store.name + "*"):
        (copy.store.parent / each.name).write_bytes(each.read_bytes())
    original_device = a.status()["device"]
    assert copy.status()["device"] == original_device
    only_original = a.new("Only in the original")
    only_copy = copy.new("Only in the copy")
    a.sync()
    copy.sync()
    assert copy.status()["device"] != original_device
    b.sync(url)
    a.sync()
    copy.sync()
    expected = {shared: "Shared\nfrom the original", only_original: "Only in the original", only_copy: "Only in the copy"}
    assert a.listed() == b.listed() == copy.listed() == expected
    check_remote(url, published_by={original_device, copy.status()["device"]})


def test_a_store_whose_history_the_remote_lost_stops_and_republish_recovers(dav_collection, pair):
    server, url = dav_collection
    a, b = pair
    memo = a.new("Kept\nlocally")
    a.sync(url)
    for child in server.path_of(url).iterdir():               # the collection is emptied behind our back
        shutil.rmtree(child) if child.is_dir() else child.unlink()
    result = a.fails("sync")
    assert "--republish" in result.err and url in result.err, result.err
    assert a.listed() == {memo: "Kept\nlocally"}
    assert propfind(url) == [], "a sync that stops changes nothing on the remote"
    report = a.sync(None, "--republish")
    assert report["published"] == 1, report
    b.sync(url)
    assert b.listed() == {memo: "Kept\nlocally"}


def test_a_reader_follows_a_device_that_republished_its_history(dav_collection, pair):
    """B had read A's 2 segments; the remote is emptied and A republishes everything (1 segment), then
    edits (segment 2).  B's read position (2) now points into a different history: the head's `last` no
    longer matches the hash B recorded.  B must not silently skip A's new segment 2."""
    server, url = dav_collection
    a, b = pair
    first = a.new("First\nv1")
    a.sync(url)
    second = a.new("Second\nv1")
    a.sync()
    b.sync(url)
    assert b.listed() == {first: "First\nv1", second: "Second\nv1"}
    for child in server.path_of(url).iterdir():
        shutil.rmtree(child) if child.is_dir() else child.unlink()
    a.sync(None, "--republish")
    a.edit(first, "First\nv2, after the remote was emptied")
    a.sync()
    result = b.sync_run()
    assert result.code != 0 or b.listed()[first] == "First\nv2, after the remote was emptied", (
        "B's sync succeeded but B silently missed A's edit: it compares only segment counts, not A's head hash "
        f"with the one it recorded; B holds {b.listed()}")


# ---------------------------------------------------------------------------------------------------
# What the shell prints
# ---------------------------------------------------------------------------------------------------

LOG_LINE = re.compile(r"^\d{4}-\d\d-\d\dT\S+ (trace|debug|info|notice|warning|error|critical) ")


def test_a_failed_sync_prints_one_error_line_and_a_clean_one_no_log_lines(dav_collection, pair):
    """The shell's interface: a failure prints one `cloudnotes: error: ...` line on stderr, exit 1; and
    `sync --json` prints its JSON; neither shows the sync engine's log lines."""
    server, url = dav_collection
    a, _ = pair
    a.new("Printed\nonce")
    problems = []
    run = a.run("sync", "--remote", url, "--json")
    assert run.code == 0 and json.loads(run.out)["published"] == 1, run
    if [line for line in run.err.splitlines() if LOG_LINE.match(line)]:
        problems.append(f"a successful `sync --json` wrote log lines on stderr: {run.err!r}")
    a.ok("sync", "--remote", f"http://127.0.0.1:{free_port()}/dav/nobody/", "--status")
    run = a.run("sync", env={"CLOUDNOTES_REMOTE_TIMEOUT": "2"})
    assert run.code == 1 and run.out == "", run
    if not (run.err.startswith("cloudnotes: error: ") and run.err.count("\n") == 1):
        problems.append(f"a failed sync should write one error line on stderr, wrote: {run.err!r}")
    assert not problems, "\n".join(problems)


def test_a_remote_that_refuses_connections_fails_fast(pair):
    """Nothing listens on the port: the sync fails at once with the reason, rather than retrying until the
    request timeout (here 8 s)."""
    a, _ = pair
    a.new("Nowhere to go")
    a.ok("sync", "--remote", f"http://127.0.0.1:{free_port()}/dav/nobody/", "--status")
    started = time.monotonic()
    run = a.fails("sync", env={"CLOUDNOTES_REMOTE_TIMEOUT": "8"}, timeout=60)
    seconds = time.monotonic() - started
    assert "refused" in run.err.lower(), run.err
    assert seconds < 4, f"a refused connection took {seconds:.1f} s to report (the whole request timeout)"


# ---------------------------------------------------------------------------------------------------
# Credentials (Apache with Basic auth)
# ---------------------------------------------------------------------------------------------------

USER = "sync-tester"
PASSWORD = "Hunter2-zx81-PLUGH-unique-4711"
TOKEN = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
WRONG = "Wrong-pass-Xyzzy-9000-unique"
WRONG_TOKEN = base64.b64encode(f"{USER}:{WRONG}".encode()).decode()
SECRETS = (PASSWORD, TOKEN, WRONG, WRONG_TOKEN)


@pytest.fixture(scope="module")
def apache_auth(tmp_path_factory):
    server = ApacheDav(tmp_path_factory.mktemp("apache-auth"), auth=(USER, PASSWORD)).start()
    yield server
    server.stop()


def assert_no_secret(text: str | bytes, where: str) -> None:
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    for secret in SECRETS:
        assert secret not in text, f"{where} shows a credential ({secret[:6]}…): {text[-2000:]}"


def store_bytes(cli: Cli) -> bytes:
    return b"".join(p.read_bytes() for p in cli.store.parent.glob(cli.store.name + "*") if p.is_file())


def test_credentials_from_the_environment(apache_auth, pair):
    a, b = pair
    url = apache_auth.new_collection()
    env = {"CLOUDNOTES_REMOTE_USER": USER, "CLOUDNOTES_REMOTE_PASSWORD": PASSWORD}
    memo = a.new("Behind a password\nyes")
    outputs = [a.sync_run(url, env=env)]
    assert outputs[0].code == 0, outputs[0].err
    outputs.append(b.sync_run(url, env=env))
    assert outputs[1].code == 0, outputs[1].err
    assert b.listed() == {memo: "Behind a password\nyes"}
    outputs.append(a.run("sync", "--status", env=env))
    outputs.append(a.run("sync", env=env))                  # the human-readable report too
    assert outputs[-1].code == 0, outputs[-1].err
    for run in outputs:
        assert_no_secret(run.both, "cloudnotes sync's output")
    assert_no_secret(store_bytes(a), "the store file")
    check_remote(url, auth=(USER, PASSWORD), published_by={a.status()["device"]})


@pytest.mark.parametrize("where", ["NETRC", "HOME"])
def test_credentials_from_a_netrc_file(apache_auth, pair, where):
    a, b = pair
    url = apache_auth.new_collection()
    netrc = f"machine example.org login someone password other\nmachine 127.0.0.1 login {USER} password {PASSWORD}\n"
    if where == "NETRC":
        path = a.home / "credentials" / "my-netrc"
        path.parent.mkdir()
        env = {"NETRC": str(path)}
    else:
        path = a.home / ".netrc"
        env = {}
    path.write_text(netrc)
    path.chmod(0o600)
    memo = a.new("Netrc\nworks")
    run = a.sync_run(url, env=env)
    assert run.code == 0, run.err
    assert_no_secret(run.both, "cloudnotes sync's output")
    # B has no credentials at all: refused, with a message that says where credentials come from
    run = b.fails("sync", "--remote", url)
    assert "credentials" in run.err and "CLOUDNOTES_REMOTE_USER" in run.err, run.err
    (b.home / ".netrc").write_text(netrc)
    (b.home / ".netrc").chmod(0o600)
    b.sync()
    assert b.listed() == {memo: "Netrc\nworks"}


@pytest.mark.parametrize("source", ["environment", "netrc"])
def test_a_wrong_password_fails_with_exit_1_and_says_so_without_showing_it(apache_auth, pair, source):
    a, _ = pair
    url = apache_auth.new_collection()
    a.new("Not published\nwith a wrong password")
    if source == "environment":
        env = {"CLOUDNOTES_REMOTE_USER": USER, "CLOUDNOTES_REMOTE_PASSWORD": WRONG}
    else:
        (a.home / ".netrc").write_text(f"machine 127.0.0.1\n  login {USER}\n  password {WRONG}\n")
        env = {}
    run = a.fails("sync", "--remote", url, env=env)
    assert "credentials" in run.err, run.err
    assert_no_secret(run.both, "a refused sync's output")
    status = a.run("sync", "--status", "--json", env=env)
    assert_no_secret(status.both, "sync --status")
    assert json.loads(status.out)["state"] == "failed" and "credentials" in json.loads(status.out)["lastError"]
    assert_no_secret(store_bytes(a), "the store file")
    assert propfind(url, auth=(USER, PASSWORD)) == [], "nothing was written"


def test_the_server_never_logs_or_sends_a_password(apache_auth, servers, tmp_root):
    """`cloudnotes serve --log-file` at trace level: wrong password, then right password, then a URL with
    credentials in it: neither password, nor the Basic token, reaches the log, stdout or stderr."""
    url = apache_auth.new_collection()
    log = tmp_root / "logs" / "server.log"
    log.parent.mkdir()
    store = tmp_root / "served" / "notes.sqlite"
    home = tmp_root / "served-home"
    home.mkdir()
    args = ["--log-file", str(log), "--log-level", "trace", "--sync-interval", "0"]

    wrong = servers.start(store, args=args, env={"HOME": str(home), "CLOUDNOTES_REMOTE_USER": USER,
                                                 "CLOUDNOTES_REMOTE_PASSWORD": WRONG})
    wrong.initialize()
    wrong.create("Served memo\nsynced by the server")
    status = wrong.call("sync/configure", {"remote": url, "intervalSeconds": 0})
    assert status["remote"] == url
    _, response = wrong.request("sync/now", {"workDoneToken": "wrong-1"}, timeout=60)
    error = response.get("error")
    assert error and error["code"] == -33006 and error["data"]["reason"] == "unauthorized", response
    assert "credentials" in error["message"], error
    # a URL with credentials is refused, and not repeated
    _, response = wrong.request("sync/configure", {"remote": url.replace("http://", f"http://{USER}:{PASSWORD}@")})
    assert response.get("error", {}).get("code") == -32602, response
    assert wrong.call("sync/status")["remote"] == url
    wrong.shutdown_and_exit()

    right = servers.start(store, args=args, env={"HOME": str(home), "CLOUDNOTES_REMOTE_USER": USER,
                                                 "CLOUDNOTES_REMOTE_PASSWORD": PASSWORD})
    right.initialize()
    notes, result = right.call_notes("sync/now", {"workDoneToken": "right-1"}, timeout=60)
    # The server's own sync at start may have published the memo before this one ran: either way it is out.
    assert result["status"]["state"] == "idle" and result["status"]["pendingChanges"] == 0, result
    assert "lastError" not in result["status"], result
    progress = [n["params"]["value"]["kind"] for n in notes if n["method"] == "$/progress"
                and n["params"]["token"] == "right-1"]
    assert progress[0] == "begin" and progress[-1] == "end", progress
    right.shutdown_and_exit()

    for server in (wrong, right):
        assert_no_secret(json.dumps(server.received), "the server's stdout")
        assert_no_secret(server.stderr, "the server's stderr")
    text = log.read_text(errors="replace")
    assert "sync" in text, "the log was written"
    assert_no_secret(text, "the server's log file")
    assert_no_secret(store_bytes(Cli(store)), "the store file")


def test_a_url_with_credentials_is_refused_without_echoing_them(apache_auth, pair):
    a, _ = pair
    url = apache_auth.new_collection()
    for bad in (url.replace("http://", f"http://{USER}:{PASSWORD}@"),
                url.replace("http://", f"http://:{PASSWORD}@"),
                url.replace("http://", f"http://{USER}:{PASSWORD}@") + "?x=1"):
        run = a.fails("sync", "--remote", bad)
        assert_no_secret(run.both, "a refused URL's error")
        assert "credentials" in run.err, run.err
    assert "remote" not in a.status(), "nothing was recorded"
    assert_no_secret(store_bytes(a), "the store file")

"""`cloudnotes edit`: the user's editor ($VISUAL, then $EDITOR, with its arguments; on the terminal it
takes) changes a memo; nothing the user typed is ever lost, to a failing editor or to a change made
meanwhile."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import stat
import subprocess
import termios
import textwrap
from pathlib import Path

from cnsupport.cli import read_terminal
from cnsupport.paths import BINARY


def write_script(path: Path, body: str) -> Path:
    path.write_text("#!/bin/sh\n" + textwrap.dedent(body))
    path.chmod(0o700)
    return path


def kept_text(failed) -> Path:
    """The file where a failed `cloudnotes edit` kept what the user typed, as its error says."""
    return Path(re.search(r"your text is in (\S+)", failed.err).group(1))


# -- edit --------------------------------------------------------------------------------------------

def test_edit_saves_what_the_editor_wrote(shell):
    memo_id = shell.new("Draft\nold line")
    editor = write_script(shell.home / "editor", """\
        printf 'Final\\nnew line\\n' > "$1"
        """)
    result = shell.ok("edit", memo_id[:8], env={"EDITOR": str(editor)})
    assert "Saved" in result.err
    memo = shell.memo(memo_id)
    # The memo had no final newline; the one the editor adds on save is not the user's.
    assert memo["text"] == "Final\nnew line"
    assert memo["version"] == 2
    assert shell.rows()[0]["id"] == memo_id


def test_edit_prefers_visual_and_passes_the_path_as_one_argument(shell):
    memo_id = shell.new("Spaces")
    editor = write_script(shell.home / "my editor", """\
        [ "$#" -eq 2 ] && [ "$1" = "--flag" ] && printf 'edited by visual' > "$2"
        """)
    # VISUAL may carry arguments, as `code --wait` does; the file's path is never split or expanded.
    shell.ok("edit", memo_id, env={"VISUAL": f"'{editor}' --flag", "EDITOR": "false"})
    assert shell.text(memo_id) == "edited by visual"


def test_edit_works_with_an_editor_that_takes_the_terminal(shell):
    # A terminal editor (vi, nano) sets the terminal's modes: outside the terminal's foreground
    # process group it would be stopped by SIGTTOU, and `cloudnotes edit` would hang.
    memo_id = shell.new("on a terminal")
    editor = write_script(shell.home / "tty-editor", """\
        stty -echo < /dev/tty && stty echo < /dev/tty || exit 9
        printf 'edited on a terminal' > "$1"
        """)
    master, slave = pty.openpty()

    def take_the_terminal():  # as a login shell would: a new session with the pty as its terminal
        os.setsid()
        fcntl.ioctl(slave, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen(shell.command("edit", memo_id), stdin=slave, stdout=slave, stderr=slave,
                            env=shell.environment({"EDITOR": str(editor)}), cwd=shell.home,
                            preexec_fn=take_the_terminal, pass_fds=(slave,))
    os.close(slave)
    output = read_terminal(master, proc, 60, "cloudnotes edit on a terminal editor")
    assert proc.wait(10) == 0, output
    assert shell.text(memo_id) == "edited on a terminal"


def test_edit_keeps_the_users_text_when_the_editor_fails_after_a_change(shell):
    memo_id = shell.new("Keep me")
    failed = shell.fails("edit", memo_id, env={"EDITOR": "sh -c 'printf typed > \"$0\"; exit 3'"})
    kept = kept_text(failed)
    assert kept.read_text() == "typed"
    assert kept.is_relative_to(shell.home)  # in $TMPDIR
    assert shell.text(memo_id) == "Keep me"


def test_edit_without_a_change_or_with_a_failing_editor_changes_nothing(shell):
    memo_id = shell.new("Keep me")
    unchanged = shell.ok("edit", memo_id, env={"EDITOR": "true"})
    assert "No change" in unchanged.err
    failed = shell.fails("edit", memo_id, env={"EDITOR": "false"})
    assert "not changed" in failed.err and "your text" not in failed.err
    memo = shell.memo(memo_id)
    assert memo["text"] == "Keep me" and memo["version"] == 1


def test_edit_never_overwrites_a_change_made_meanwhile(shell):
    memo_id = shell.new("original")
    # While "the user" edits, another front end (here a nested `cloudnotes edit`) changes the memo.
    editor = write_script(shell.home / "editor", f"""\
        EDITOR="sed -i s/original/theirs/" "{BINARY}" edit {memo_id}
        printf 'mine' > "$1"
        """)
    result = shell.run("edit", memo_id, env={"EDITOR": str(editor)})
    assert result.code == 1 and result.out == ""
    assert "cloudnotes: error: the memo changed elsewhere" in result.err
    kept = kept_text(result)
    assert kept.read_text() == "mine"  # the user's text survives, in a file only they can read
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert shell.text(memo_id) == "theirs"

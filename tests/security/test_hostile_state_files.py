"""Attacks through the state directory, against the real `mcptask` process: a symbolic link
planted as the record of known tasks (or as its -wal or -shm journal) to redirect
mcptask's writes to a file of the attacker's choosing, and a state directory that other
users may write (or a link to one), where they could plant such links.

The record is a side benefit: a command that does not need it warns once and goes on; one
that does (`--known`, `forget`) fails in one line naming the file (exit 2). Either way the
link's target is never written, and nothing appears beside it.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.cli_process import Result, mcptask_argv, run_mcptask
from tests.conftest import StartServer

RECORD = "known-tasks.sqlite3"


@pytest.fixture
def url(reference_server: StartServer) -> str:
    return reference_server("--seed", "working=1")


def snapshot(directory: Path) -> dict[str, bytes]:
    """Every file of `directory`, by name, with its content."""
    return {path.name: path.read_bytes() for path in sorted(directory.iterdir())}


def assert_refused(url: str, env: dict[str, str], *fragments: str) -> None:
    """A command that does not need the record warns once and works; those that need it
    fail in one line; each line holds `fragments`."""
    got = run_mcptask("get", "working-001", "--url", url, "-o", "ids", env=env)
    assert (got.code, got.stdout) == (0, "working-001\n"), got.stderr
    assert len(got.stderr_lines) == 1, got.stderr
    assert "tasks are not being recorded" in got.stderr
    for fragment in fragments:
        assert fragment in got.stderr
    known = run_mcptask("list", "--known", "--url", url, env=env)
    known.assert_one_line_error(2, "cannot use the record of known tasks", *fragments)
    run_mcptask("forget", "--all", env=env).assert_one_line_error(2, *fragments)


def complete(words: str, env: dict[str, str]) -> Result:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("MCPTASK_")}
    environment |= env | {
        "_MCPTASK_COMPLETE": "complete_bash",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split()) - 1),
    }
    done = subprocess.run(
        mcptask_argv(), capture_output=True, text=True, env=environment, check=False, timeout=30
    )
    return Result(done.returncode, done.stdout, done.stderr)


@pytest.mark.parametrize("content", ["empty", "a record"])
def test_a_record_that_is_a_symbolic_link_is_not_written_through(
    url: str, tmp_path: Path, content: str
) -> None:
    # The attacker's choice: a file of the user's elsewhere (SQLite would make an empty one
    # a record), or another record, which SQLite would write into.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = elsewhere / "victim.sqlite3"
    if content == "empty":
        target.touch()
    else:
        recorded = {"MCPTASK_STATE_DIR": str(elsewhere)}
        assert run_mcptask("get", "working-001", "--url", url, env=recorded).code == 0
        (elsewhere / RECORD).rename(target)
    before = snapshot(elsewhere)
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    (state / RECORD).symlink_to(target)
    env = {"MCPTASK_STATE_DIR": str(state)}
    link = state / RECORD
    assert_refused(url, env, f"{link} is a symbolic link", f"rm {link}")
    started = run_mcptask("start", "long_job", "seconds:=60", "--url", url, "-o", "ids", env=env)
    assert started.code == 0, started.stderr
    assert complete("mcptask get work", env).stdout.split() == []
    assert snapshot(elsewhere) == before
    assert sorted(os.listdir(state)) == [RECORD]
    link.unlink()  # the fix the line names works
    fixed = run_mcptask("get", "working-001", "--url", url, env=env)
    assert (fixed.code, fixed.stderr) == (0, "")
    assert run_mcptask("list", "--known", "--url", url, "-o", "ids", env=env).code == 0


@pytest.mark.parametrize("suffix", ["-wal", "-shm"])
def test_a_journal_that_is_a_symbolic_link_is_not_written_through(
    url: str, tmp_path: Path, suffix: str
) -> None:
    state = tmp_path / "state"
    env = {"MCPTASK_STATE_DIR": str(state)}
    assert run_mcptask("get", "working-001", "--url", url, env=env).code == 0
    target = tmp_path / "victim"
    target.write_bytes(b"the user's own file\n")
    link = state / (RECORD + suffix)
    link.symlink_to(target)
    assert_refused(url, env, f"{link} is a symbolic link", f"rm {link}")
    assert target.read_bytes() == b"the user's own file\n"
    assert sorted(os.listdir(tmp_path)) == ["state", "victim"]


@pytest.mark.parametrize("mode", [0o777, 0o770, 0o1777, 0o757])
def test_a_state_directory_others_may_write_is_refused(url: str, tmp_path: Path, mode: int) -> None:
    state = tmp_path / "state"
    state.mkdir()
    state.chmod(mode)
    env = {"MCPTASK_STATE_DIR": str(state)}
    assert_refused(
        url, env, f"{state} is writable by other users (mode {mode:04o})", f"chmod go-w {state}"
    )
    assert os.listdir(state) == []
    state.chmod(0o755)  # the fix the line names works; the directory keeps its mode
    fixed = run_mcptask("get", "working-001", "--url", url, env=env)
    assert (fixed.code, fixed.stderr) == (0, "")
    assert (state.stat().st_mode & 0o7777, (state / RECORD).stat().st_mode & 0o777) == (
        0o755,
        0o600,
    )


def test_a_state_directory_that_links_to_a_shared_one_is_refused(url: str, tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    state = tmp_path / "state"
    state.symlink_to(shared)
    env = {"MCPTASK_STATE_DIR": str(state)}
    assert_refused(url, env, f"{state} (a link to {shared}) is writable by other users")
    assert os.listdir(shared) == []
    # a link to a directory of the user's own is fine
    shared.chmod(0o700)
    fixed = run_mcptask("get", "working-001", "--url", url, env=env)
    assert (fixed.code, fixed.stderr) == (0, "")
    assert (shared / RECORD).is_file()


def test_tokens_and_profiles_are_not_written_in_a_directory_others_may_write(
    tmp_path: Path,
) -> None:
    state, config = tmp_path / "state", tmp_path / "config"
    for directory in (state, config):
        directory.mkdir()
        directory.chmod(0o777)
    env = {"MCPTASK_STATE_DIR": str(state), "MCPTASK_CONFIG_DIR": str(config)}
    run_mcptask("logout", "--all", env=env).assert_one_line_error(
        2, f"{state} is writable by other users"
    )
    run_mcptask("profiles", "--delete", "p", env=env).assert_one_line_error(
        2, f"{config} is writable by other users"
    )
    assert os.listdir(state) == os.listdir(config) == []

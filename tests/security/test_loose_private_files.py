"""Attacks through mcptask's own files, against the real `mcptask` process: a token cache
other users can read (or plant tokens in), a token cache that is a symbolic link to a file
of someone else's choosing, a profiles file other users may change (where credentials go),
a profiles file that is a symbolic link (a save must not write through it), and lock files
that are symbolic links (opening one would create or lock the file it names)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from mcptask.store import tokens
from mcptask.store.profiles import Profile, save_profile
from mcptask.store.tokens import CachedToken
from tests.cli_process import run_mcptask
from tests.conftest import StartServer
from tests.security.hostile_oauth import HostileServer, Seen, json_answer


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {
        "MCPTASK_STATE_DIR": str(tmp_path / "state"),
        "MCPTASK_CONFIG_DIR": str(tmp_path / "config"),
        "BROWSER": "",
    }


def _token(server: str, access_token: str) -> CachedToken:
    return CachedToken(
        server=server,
        issuer="https://as.example.com",
        resource=server,
        client_id="c",
        grant="authorization_code",
        access_token=access_token,
        token_endpoint="https://as.example.com/token",
        auth_method="none",
    )


def _not_found(seen: Seen) -> tuple[int, dict[str, str], bytes]:
    return json_answer(404, {"error": "not_found"})


@pytest.mark.parametrize("mode", [0o644, 0o660])
def test_a_token_cache_open_to_other_users_is_refused(
    tmp_path: Path, env: dict[str, str], mode: int
) -> None:
    cache = tmp_path / "state" / "tokens.json"
    with HostileServer(_not_found) as server:
        tokens.store_token(cache, _token(server.origin + "/mcp", "the-users-token"))
        cache.chmod(mode)
        result = run_mcptask("list", "--url", server.origin + "/mcp", env=env)
        received = server.seen
    result.assert_one_line_error(
        2, f"the token cache {cache} is open to other users", f"chmod 600 {cache}"
    )
    assert received == []
    logout = run_mcptask("logout", "--all", env=env)
    logout.assert_one_line_error(2, f"chmod 600 {cache}")
    cache.chmod(0o600)  # the fix the line names works
    assert run_mcptask("logout", "--all", env=env).code == 0


def test_a_token_cache_that_is_a_symbolic_link_is_refused(
    tmp_path: Path, env: dict[str, str]
) -> None:
    # Someone else's file, with a token of their choice for the server the user asks.
    planted = tmp_path / "planted.json"
    with HostileServer(_not_found) as server:
        tokens.store_token(planted, _token(server.origin + "/mcp", "planted-token"))
        before = planted.read_bytes()
        cache = tmp_path / "state" / "tokens.json"
        cache.parent.mkdir()
        cache.symlink_to(planted)
        result = run_mcptask("list", "--url", server.origin + "/mcp", env=env)
        received = server.seen
    result.assert_one_line_error(2, f"the token cache {cache} is a symbolic link", f"rm {cache}")
    assert received == []
    logout = run_mcptask("logout", "--all", env=env)
    logout.assert_one_line_error(2, "is a symbolic link")
    assert planted.read_bytes() == before


def test_a_profiles_file_others_may_change_is_warned_about_once(
    shared_reference_server: StartServer, tmp_path: Path, env: dict[str, str]
) -> None:
    path = tmp_path / "config" / "profiles.toml"
    url = shared_reference_server("--seed", "working=1")
    save_profile(path, Profile(name="p", url=url))
    path.chmod(0o664)
    warning = f"{path} is writable by other users (mode 0664)"
    # connect reads the file twice (before it connects, and to save into it): one warning.
    commands = (["list", "-P", "p", "-o", "ids"], ["profiles"], ["connect", url, "--save", "q"])
    for command in commands:
        result = run_mcptask(*command, env=env)
        assert result.code == 0, result.stderr
        warned = [line for line in result.stderr_lines if "writable by other users" in line]
        assert warned == [
            f"mcptask: {warning}, who could send your credentials elsewhere: chmod 600 {path}"
        ]
    assert stat.S_IMODE(path.stat().st_mode) == 0o600  # the save wrote it private
    path.chmod(0o644)
    quiet = run_mcptask("profiles", env=env)
    assert (quiet.code, quiet.stderr) == (0, "")


@pytest.mark.parametrize(("mode", "warned"), [(0o775, True), (0o1777, False), (0o755, False)])
def test_a_profiles_directory_others_may_write_is_warned_about(
    shared_reference_server: StartServer,
    tmp_path: Path,
    env: dict[str, str],
    mode: int,
    warned: bool,
) -> None:
    path = tmp_path / "config" / "profiles.toml"
    save_profile(path, Profile(name="p", url=shared_reference_server()))
    path.parent.chmod(mode)  # others could replace profiles.toml with their own (not sticky)
    result = run_mcptask("profiles", "-o", "json", env=env)
    assert result.code == 0, result.stderr
    warning = (
        f"mcptask: {path.parent} is writable by other users (mode {mode:04o}), who could send "
        f"your credentials elsewhere: chmod go-w {path.parent}"
    )
    assert result.stderr_lines == ([warning] if warned else [])


def test_saving_a_profile_replaces_a_symbolic_link(
    shared_reference_server: StartServer, tmp_path: Path, env: dict[str, str]
) -> None:
    target = tmp_path / "someone-elses.toml"
    target.write_text('[profiles.theirs]\nurl = "https://theirs.example.com/mcp"\n')
    before = target.read_bytes()
    path = tmp_path / "config" / "profiles.toml"
    path.parent.mkdir()
    path.symlink_to(target)
    saved = run_mcptask("connect", shared_reference_server(), "--save", "mine", env=env)
    assert saved.code == 0, saved.stderr
    assert target.read_bytes() == before
    assert not path.is_symlink()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert "[profiles.mine]" in path.read_text()


@pytest.mark.parametrize(
    ("lock", "command"),
    [
        ("state/.tokens.json.lock", ["logout", "--all"]),
        ("config/.profiles.toml.lock", ["profiles", "--default", "p"]),
    ],
)
def test_a_lock_file_that_is_a_symbolic_link_is_refused(
    tmp_path: Path, env: dict[str, str], lock: str, command: list[str]
) -> None:
    save_profile(tmp_path / "config" / "profiles.toml", Profile(name="p", url="https://h/mcp"))
    (tmp_path / "state").mkdir()
    link = tmp_path / lock
    target = tmp_path / "created-through-the-link"
    link.unlink(missing_ok=True)  # the save above left its lock file
    link.symlink_to(target)
    result = run_mcptask(*command, env=env)
    result.assert_one_line_error(2, f"{link} is a symbolic link", f"rm {link}")
    assert not target.exists()

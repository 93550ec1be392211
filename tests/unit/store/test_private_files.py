"""The token cache and the profiles file as other users could reach them: a token cache that
is a symbolic link or open to other users is refused (as ssh refuses such a key); a profiles
file other users may write is warned about, once; writes replace a symbolic link, never
write through it."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from mcptask.errors import StateError
from mcptask.store import profiles, tokens
from mcptask.store.paths import exclusive, write_private
from mcptask.store.profiles import Profile

EMPTY_CACHE = '{"version": 1, "tokens": [], "clients": []}'


@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o620, 0o602])
def test_a_token_cache_open_to_others_is_refused(tmp_path: Path, mode: int) -> None:
    path = tmp_path / "tokens.json"
    path.write_text(EMPTY_CACHE)
    path.chmod(mode)
    with pytest.raises(StateError, match=rf"mode 0{mode:o}\): chmod 600 {path}$"):
        tokens.load(path)
    path.chmod(0o600)
    assert tokens.load(path) == tokens.TokenCache()


def test_a_token_cache_that_is_a_symbolic_link_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text(EMPTY_CACHE)
    target.chmod(0o600)
    path = tmp_path / "tokens.json"
    path.symlink_to(target)
    with pytest.raises(StateError, match="is a symbolic link"):
        tokens.load(path)
    with pytest.raises(StateError, match="is a symbolic link"):
        tokens.forget_all(path)
    assert target.read_text() == EMPTY_CACHE
    # A link to nowhere is refused too: a write would create the file it names.
    target.unlink()
    with pytest.raises(StateError, match="is a symbolic link"):
        tokens.forget_all(path)
    assert not target.exists()


def test_an_absent_or_broken_token_cache_is_still_empty(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    assert tokens.load(path) == tokens.TokenCache()
    path.write_text("{not json")
    path.chmod(0o600)
    assert tokens.load(path) == tokens.TokenCache()


def test_a_private_write_replaces_a_symbolic_link(tmp_path: Path) -> None:
    target = tmp_path / "target"
    target.write_text("theirs")
    path = tmp_path / "file"
    path.symlink_to(target)
    write_private(path, b"ours")
    assert not path.is_symlink()
    assert path.read_text() == "ours"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert target.read_text() == "theirs"


def test_a_lock_file_that_is_a_symbolic_link_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere"
    lock = tmp_path / ".tokens.json.lock"
    lock.symlink_to(target)
    refused = pytest.raises(StateError, match=rf"{lock} is a symbolic link.*: rm {lock}$")
    with refused, exclusive(tmp_path / "tokens.json"):
        pass
    assert not target.exists()  # not created through the link


def test_a_state_directory_that_cannot_be_made_is_a_one_line_state_error(
    tmp_path: Path,
) -> None:
    (tmp_path / "file").write_text("")
    path = tmp_path / "file" / "state" / "tokens.json"
    with pytest.raises(StateError, match=rf"^cannot write {path}: .*Not a directory"):
        tokens.forget_all(path)


def test_a_profiles_file_others_may_write_is_warned_about_once(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "profiles.toml"
    profiles.save_profile(path, Profile(name="p", url="https://h/mcp"))
    profiles.load(path)
    assert capsys.readouterr().err == ""
    path.chmod(0o644)  # readable: not a secret store, unless --save-secrets
    profiles.load(path)
    assert capsys.readouterr().err == ""
    path.chmod(0o664)
    assert profiles.load(path).profiles["p"].url == "https://h/mcp"
    profiles.load(path)
    warned = capsys.readouterr().err
    assert warned == (
        f"mcptask: {path} is writable by other users (mode 0664), who could send your "
        f"credentials elsewhere: chmod 600 {path}\n"
    )

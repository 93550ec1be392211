"""Named server profiles: one TOML file in the configuration directory, mode 0600 (see
docs/servers.md, "Profiles"; the settings are the fields of `Profile`).

A credential is written as text only when the user asks (`--save-secrets`); otherwise it
names an environment variable (`{ env = "NAME" }`) or a file (`{ file = "PATH" }`) read on
use. The file is written atomically under a lock, and never when it cannot be read: a broken
file is the user's to mend, and its error names file and line.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import stat
import sys
import tomllib
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal

from mcptask.errors import UsageError
from mcptask.store.paths import exclusive, write_private
from mcptask.store.paths import profiles_path as profiles_path  # the commands' way in

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


@dataclass(frozen=True)
class Reference:
    """A value kept outside the profile: an environment variable or a file, read on use."""

    kind: Literal["env", "file"]
    name: str

    def resolve(self, environ: Mapping[str, str], what: str) -> str:
        """The value now; a UsageError (never showing the value) when it cannot be read."""
        if self.kind == "env":
            value = environ.get(self.name)
            if not value:
                raise UsageError(f"{what}: the environment variable {self.name} is not set")
            return value
        path = Path(self.name).expanduser()  # stripped; errors never show its content
        try:
            text = path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise UsageError(f"cannot read {what} {str(path)!r}: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise UsageError(f"{what} {str(path)!r} is not UTF-8 text") from None
        if not text:
            raise UsageError(f"{what} {str(path)!r} is empty")
        return text


Value = str | Reference  # a setting's value: as text, or a reference to where it is kept


@dataclass(frozen=True)
class ConfigSource:
    """Where a profile's target came from, when not from the command line: the MCP client
    config file it was read from (an absolute path) and its server's name there."""

    file: str
    server: str


@dataclass(frozen=True)
class Profile:
    """One saved server: its target and how to talk to it. The fields after `name` are its
    table's settings, in the order written."""

    name: str
    url: str | None = None
    server: str | None = None
    env: dict[str, Value] = field(default_factory=dict)
    headers: dict[str, Value] = field(default_factory=dict)
    token: Value | None = None
    protocol: str | None = None
    timeout: float | None = None
    keep_session: bool = False
    session_id: str | None = None
    auth: str | None = None  # the sign-in method (`--auth`)
    client_id: str | None = None
    client_key_file: str | None = None
    client_issuer: str | None = None
    """The authorization server (issuer) the client belongs to: its secret or key goes there."""
    scope: str | None = None
    client_secret: Value | None = None
    source: ConfigSource | None = None
    """The config file the target was read from (`--config`, or saved from one); None: the
    command line (`connect TARGET --save`)."""

    @property
    def target(self) -> str:
        """The URL or the server command, for display."""
        return self.url or self.server or ""

    def to_toml(self) -> dict[str, Any]:
        """The profile's table, without empty entries."""
        table: dict[str, Any] = {}
        for key in _FIELDS:
            value = getattr(self, key)
            if isinstance(value, dict):
                value = {name: _to_toml(item) for name, item in value.items()}
            if value is not None and value is not False and value != {}:
                table[key] = _to_toml(value)
        return table


@dataclass(frozen=True)
class ProfileBook:
    """Every profile of the file, and which one is the default."""

    path: Path
    profiles: dict[str, Profile] = field(default_factory=dict)
    default: str | None = None

    def get(self, name: str) -> Profile:
        """The profile called `name`, or a UsageError that names the file."""
        profile = self.profiles.get(name)
        if profile is None:
            known = ", ".join(sorted(self.profiles)) or "none yet"
            raise UsageError(
                f"no profile named {name!r} in {self.path} (profiles: {known}; save one with "
                "mcptask connect TARGET --save NAME)"
            )
        return profile


def check_name(name: str) -> str:
    """A profile name: letters, digits, `_`, `.` and `-`, starting with a letter or digit."""
    if not NAME_PATTERN.fullmatch(name):
        raise UsageError(
            f"invalid profile name {name!r}: use letters, digits, '_', '.' and '-' "
            "(up to 64, starting with a letter or digit)"
        )
    return name


def load(path: Path) -> ProfileBook:
    """Read the profiles file; an absent file is an empty book. A file other users may write
    or replace (through its directory) is warned about: it says where credentials go."""
    try:
        with path.open(encoding="utf-8") as stream:
            _warn_if_writable(path, os.fstat(stream.fileno()).st_mode & 0o777)
            _warn_if_writable(path.parent, path.parent.stat().st_mode & 0o1777)
            text = stream.read()
    except FileNotFoundError:
        return ProfileBook(path)
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"cannot read {path}: it is not UTF-8 text") from None
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{path} is not valid TOML: {exc}") from None
    return _book(path, text, document)


def save_profile(path: Path, profile: Profile, *, make_default: bool = False) -> None:
    """Add or replace one profile (and make it the default if asked)."""
    with _editing(path) as book:
        default = profile.name if make_default else book.default
        _write(replace(book, profiles={**book.profiles, profile.name: profile}, default=default))


def update_session(path: Path, name: str, session_id: str | None) -> None:
    """Remember the session a keep-session profile is in now."""
    with _editing(path) as book:
        profile = replace(book.get(name), session_id=session_id)
        _write(replace(book, profiles={**book.profiles, name: profile}))


def delete_profile(path: Path, name: str) -> None:
    """Remove a profile (and the default, if it was that one)."""
    with _editing(path) as book:
        book.get(name)
        profiles = {key: value for key, value in book.profiles.items() if key != name}
        _write(
            replace(book, profiles=profiles, default=None if book.default == name else book.default)
        )


def set_default(path: Path, name: str) -> None:
    """Make an existing profile the default."""
    with _editing(path) as book:
        book.get(name)
        _write(replace(book, default=name))


@contextlib.contextmanager
def _editing(path: Path) -> Iterator[ProfileBook]:
    """The book, read under the file's lock; one that cannot be read raises first."""
    with exclusive(path):
        yield load(path)


@functools.cache
def _warn_if_writable(path: Path, mode: int) -> None:
    """Warn about a file others may write, or a directory where they may replace one (once)."""
    if mode & 0o022 and not mode & stat.S_ISVTX:
        fix = "chmod go-w" if path.is_dir() else "chmod 600"
        sys.stderr.write(
            f"mcptask: {path} is writable by other users (mode {mode:04o}), who could send "
            f"your credentials elsewhere: {fix} {path}\n"
        )


def _write(book: ProfileBook) -> None:
    import tomli_w

    document: dict[str, Any] = {} if book.default is None else {"default": book.default}
    document["profiles"] = {
        name: profile.to_toml() for name, profile in sorted(book.profiles.items())
    }
    write_private(book.path, tomli_w.dumps(document).encode("utf-8"))


def _book(path: Path, text: str, document: dict[str, Any]) -> ProfileBook:
    unknown = sorted(set(document) - {"default", "profiles"})
    if unknown:
        raise UsageError(f"{path}: unknown setting {unknown[0]!r} at the top level")
    tables = document.get("profiles", {})
    if not isinstance(tables, dict):
        raise UsageError(f"{path}: 'profiles' must be a table of [profiles.NAME] tables")
    profiles: dict[str, Profile] = {}
    for name, table in tables.items():
        where = f"{path}, line {_line_of(text, name)}: profile {name!r}"
        if not NAME_PATTERN.fullmatch(name):
            raise UsageError(f"{where}: invalid profile name")
        if not isinstance(table, dict):
            raise UsageError(f"{where} must be a table")
        try:
            profiles[name] = _profile(name, table)
        except ValueError as exc:
            raise UsageError(f"{where}: {exc}") from None
    default = document.get("default")
    if default is not None and default not in profiles:
        raise UsageError(
            f"{path}, line {_line_of(text, None)}: default {default!r} names no profile"
        )
    return ProfileBook(path, profiles, default)


_FIELDS = tuple(spec.name for spec in fields(Profile) if spec.name != "name")


def _profile(name: str, table: dict[str, Any]) -> Profile:
    unknown = sorted(set(table).difference(_FIELDS))
    if unknown:
        raise ValueError(f"unknown setting {unknown[0]!r}")
    profile = Profile(name, **{key: _setting(key, table[key]) for key in _FIELDS if key in table})
    if (profile.url is None) == (profile.server is None):
        raise ValueError("needs exactly one of url or server")
    return profile


def _setting(key: str, value: object) -> Any:
    """One setting of a profile's table, checked against the type of its field."""
    if key in ("env", "headers"):
        if not isinstance(value, dict):
            raise ValueError(f"{key} must be a table of NAME = value")
        return {str(name): _value(item, f"{key}.{name}") for name, item in value.items()}
    if key in ("token", "client_secret"):
        return _value(value, key)
    if key == "timeout":
        if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
            raise ValueError("timeout must be a positive number of seconds")
        return float(value)
    if key == "keep_session":
        if not isinstance(value, bool):
            raise ValueError("keep_session must be true or false")
        return value
    if key == "source":
        if not (
            isinstance(value, dict)
            and set(value) == {"file", "server"}
            and all(isinstance(item, str) for item in value.values())
        ):
            raise ValueError('source must be { file = "PATH", server = "NAME" }')
        return ConfigSource(value["file"], value["server"])
    if not isinstance(value, str):
        raise ValueError(f"{key} must be a string")
    return value


def _value(value: object, what: str) -> Value:
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and len(value) == 1:
        ((kind, name),) = value.items()
        if kind in ("env", "file") and isinstance(name, str) and name:
            return Reference(kind, name)
    raise ValueError(f'{what} must be a string, {{ env = "NAME" }} or {{ file = "PATH" }}')


def _to_toml(value: Any) -> Any:
    """A setting as TOML has it: a Reference is `{ env = "NAME" }` or `{ file = "PATH" }`, a
    ConfigSource `{ file = "PATH", server = "NAME" }`."""
    if isinstance(value, ConfigSource):
        return {"file": value.file, "server": value.server}
    return {value.kind: value.name} if isinstance(value, Reference) else value


def _line_of(text: str, profile: str | None) -> int:
    """The line of `[profiles.NAME]` (or of `default =`), for error messages; 1 if unseen."""
    if profile is None:
        pattern = re.compile(r"^\s*default\s*=")
    else:
        quoted = re.escape(profile)
        pattern = re.compile(rf"^\s*\[\s*profiles\s*\.\s*(?:{quoted}|\"{quoted}\"|'{quoted}')\s*\]")
    for number, line in enumerate(text.splitlines(), start=1):
        if pattern.match(line):
            return number
    return 1

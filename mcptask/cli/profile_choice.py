"""Which server a command talks to when the line names none by URL or command: the profile
that `--profile`, MCPTASK_PROFILE or the default names, from the saved profiles or from an
MCP client config file (`--config`), whose placeholders are filled in only as `--config-env`
allows (docs/servers.md)."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Mapping
from pathlib import Path

from mcptask.cli.options import Common
from mcptask.errors import UsageError
from mcptask.store.profiles import Profile, ProfileBook

ENV_URL = "MCPTASK_URL"
ENV_SERVER = "MCPTASK_SERVER"
ENV_PROFILE = "MCPTASK_PROFILE"
ENV_CONFIG = "MCPTASK_CONFIG"
ENV_CONFIG_ENV = "MCPTASK_CONFIG_ENV"
SEVERAL_MARKS = ",*?["
"""Characters that make `--profile` name several profiles, as a list or a shell-style
pattern (docs/fleet.md); saved profiles' names never hold them, but a `--config` file's
servers may: a value that is exactly one profile's name names that profile alone."""


def names_several(profile: str | None) -> bool:
    """Whether a `--profile` value is a list or a pattern rather than one profile's name."""
    return profile is not None and any(mark in profile for mark in SEVERAL_MARKS)


def config_file(line: Common, env: Mapping[str, str]) -> Path | None:
    """The MCP client config file whose servers the profiles are (`--config`), if any."""
    named = line.config or env.get(ENV_CONFIG)
    return Path(named) if named else None


def profile_book(line: Common, env: Mapping[str, str]) -> Callable[[], ProfileBook]:
    """Where the profiles come from: the `--config` file's servers, else the saved ones."""
    from mcptask.store import profiles
    from mcptask.store.client_configs import read_client_config

    config = config_file(line, env)
    if config is not None:
        return lambda: read_client_config(config)
    return lambda: profiles.load(profiles.profiles_path())


def profile_in_use(
    line: Common, book: ProfileBook | Callable[[], ProfileBook], env: Mapping[str, str]
) -> Profile | None:
    """The profile the line, MCPTASK_PROFILE or the default names; from a `--config` file,
    its placeholders filled in as `--config-env` allows."""
    config = config_file(line, env)
    chosen = _chosen_profile(line, book, env, config is not None)
    if chosen is None or config is None:
        return chosen
    from mcptask.store.client_configs import expanded

    allowed = {*(line.config_env or []), *env.get(ENV_CONFIG_ENV, "").split(",")} - {""}
    return expanded(chosen, config, env, allowed)


def _chosen_profile(
    line: Common,
    book: ProfileBook | Callable[[], ProfileBook],
    env: Mapping[str, str],
    from_config: bool,
) -> Profile | None:
    def opened() -> ProfileBook:
        return book if isinstance(book, ProfileBook) else book()

    def named_in_book(name: str) -> Profile:
        profiles = opened()
        if from_config and name not in profiles.profiles:  # not a saved profile's advice
            known = ", ".join(sorted(profiles.profiles)) or "none"
            raise UsageError(f"{profiles.path} has no server {name!r} (its servers: {known})")
        return profiles.get(name)

    if line.profile:
        if names_several(line.profile) and line.profile not in opened().profiles:
            raise UsageError(
                f"--profile {line.profile!r} names several servers: only connect, list, get "
                "and cancel, and watch, work on several at once"
            )
        if line.url or line.server:
            raise UsageError(
                "give the server either with --profile or with --url/--server, not both "
                "(a profile's credentials go only to its own server)"
            )
        return named_in_book(line.profile)
    if line.url or line.server:
        if line.config:
            raise UsageError("--config names servers by --profile; give no --url/--server")
        return None
    named = env.get(ENV_PROFILE)
    if named:
        if env.get(ENV_URL) or env.get(ENV_SERVER):
            raise UsageError(f"both {ENV_PROFILE} and {ENV_URL}/{ENV_SERVER} are set; unset one")
        if names_several(named) and named not in opened().profiles:
            several = shlex.quote(named)
            raise UsageError(f"{ENV_PROFILE} names one profile: name several with -P {several}")
        return named_in_book(named)
    if (env.get(ENV_URL) or env.get(ENV_SERVER)) and not line.config:
        return None  # --config on the line names the server, as --url would
    default = opened()
    if from_config and default.default is None:
        raise UsageError(
            f"{default.path} has {len(default.profiles)} servers: name one with --profile "
            f"({', '.join(sorted(default.profiles)) or 'none'})"
        )
    return default.profiles.get(default.default) if default.default else None

"""The sign-in settings of an invocation: the command line > the profile > the environment.

    --auth              profile auth              MCPTASK_AUTH              (default auto)
    --client-id         profile client_id         MCPTASK_CLIENT_ID
    --client-secret-file profile client_secret    MCPTASK_CLIENT_SECRET
    --client-key-file   profile client_key_file   MCPTASK_CLIENT_KEY_FILE
    --scope             profile scope             MCPTASK_SCOPE
                                                  MCPTASK_CLIENT_METADATA_URL
    --no-browser

A person can finish a browser sign-in when stdin and stderr are a terminal, or when BROWSER
names a browser (what Python's webbrowser opens). Sign-in applies to --url servers: a stdio
server takes its credentials from its environment (--env).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from mcptask.auth.config import AUTH_METHODS, AuthSettings
from mcptask.errors import UsageError
from mcptask.store.paths import tokens_path
from mcptask.store.profiles import Profile, Reference, Value, read_secret_file

if TYPE_CHECKING:
    from mcptask.cli.options import Common

ENV_AUTH = "MCPTASK_AUTH"
ENV_CLIENT_ID = "MCPTASK_CLIENT_ID"
ENV_CLIENT_SECRET = "MCPTASK_CLIENT_SECRET"
ENV_CLIENT_KEY_FILE = "MCPTASK_CLIENT_KEY_FILE"
ENV_SCOPE = "MCPTASK_SCOPE"
ENV_CLIENT_METADATA_URL = "MCPTASK_CLIENT_METADATA_URL"


def resolve_auth(
    line: Common,
    profile: Profile,
    env: Mapping[str, str],
    *,
    http: bool,
    force_sign_in: bool = False,
) -> tuple[AuthSettings | None, Profile]:
    """The sign-in settings (None for a stdio server), and the profile fields that save them.

    The saved fields are what the line or the profile gave (a secret as its reference); the
    MCPTASK_* variables stay ambient, as MCPTASK_TOKEN does.
    """
    given = [
        name
        for name, value in (
            ("--auth", line.auth),
            ("--client-id", line.client_id),
            ("--client-secret-file", line.client_secret_file),
            ("--client-key-file", line.client_key_file),
            ("--scope", line.scope),
            ("--no-browser", line.no_browser or None),
        )
        if value is not None
    ]
    if not http:
        if given:
            raise UsageError(
                f"{', '.join(given)}: sign-in applies to --url servers only (a --server "
                "process takes its credentials from its environment: --env)"
            )
        return None, Profile(name="")
    method = line.auth or profile.auth or env.get(ENV_AUTH) or "auto"
    if method not in AUTH_METHODS:
        raise UsageError(f"--auth takes one of: {', '.join(AUTH_METHODS)}")
    client_id = line.client_id or profile.client_id or env.get(ENV_CLIENT_ID) or None
    secret_value: Value | None = (
        Reference("file", str(line.client_secret_file))
        if line.client_secret_file is not None
        else profile.client_secret
    )
    secret = _read(secret_value, env) if secret_value is not None else None
    secret = secret or env.get(ENV_CLIENT_SECRET) or None
    key_file = line.client_key_file or _path(profile.client_key_file)
    if key_file is None and env.get(ENV_CLIENT_KEY_FILE):
        key_file = Path(env[ENV_CLIENT_KEY_FILE])
    scope = " ".join((line.scope or profile.scope or env.get(ENV_SCOPE) or "").split()) or None
    if method == "client-credentials" and not (client_id and (secret or key_file)):
        raise UsageError(
            "--auth client-credentials needs a client id (MCPTASK_CLIENT_ID or --client-id) "
            "and a secret (MCPTASK_CLIENT_SECRET) or a private key (--client-key-file / "
            "MCPTASK_CLIENT_KEY_FILE)"
        )
    if (secret or key_file) and not client_id:
        raise UsageError(
            "a client secret or key was given without a client id: set MCPTASK_CLIENT_ID or "
            "--client-id"
        )
    if key_file is not None and not key_file.expanduser().is_file():
        raise UsageError(f"the client key file {str(key_file)!r} does not exist")
    settings = AuthSettings(
        method=method,
        client_id=client_id,
        client_secret=secret,
        client_key_file=key_file.expanduser() if key_file is not None else None,
        scope=scope,
        client_metadata_url=env.get(ENV_CLIENT_METADATA_URL) or None,
        open_browser=not line.no_browser,
        # login is a person asking to sign in: the browser flow, whatever the terminal.
        interactive=force_sign_in or _terminal() or bool(env.get("BROWSER")),
        force_sign_in=force_sign_in,
        cache_path=tokens_path(env),
    )
    saved = Profile(
        name="",
        auth=method if method != "auto" else None,
        client_id=line.client_id or profile.client_id,
        client_secret=secret_value,
        client_key_file=(
            str(line.client_key_file) if line.client_key_file else profile.client_key_file
        ),
        scope=line.scope or profile.scope,
    )
    return settings, saved


def _read(value: Value, env: Mapping[str, str]) -> str:
    if isinstance(value, str):
        return value
    if value.kind == "file":
        return read_secret_file(Path(value.name).expanduser(), "--client-secret-file")
    return value.resolve(env, "the client secret")


def _path(text: str | None) -> Path | None:
    return Path(text) if text else None


def _terminal() -> bool:
    try:
        return os.isatty(sys.stdin.fileno()) and os.isatty(sys.stderr.fileno())
    except (OSError, ValueError, AttributeError):
        return False

"""Where to connect and with which credentials: field by field, an option on the command line
over the profile in use (saved, or a `--config` file's server) over the environment over the
default (docs/servers.md, "Which server", and docs/sign-in.md). A profile's credentials go
only to its own server, a client secret or key only to its issuer, and no credential over
plain http:// to another machine. The result is the client's `ConnectionSettings`, the same
settings as a profile saves them (credentials as references unless asked), and warnings.
"""

from __future__ import annotations

import math
import os
import shlex
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from mcptask.auth.config import AUTH_METHODS, AuthSettings, plain_remote
from mcptask.cli.inputs import header_safe, parse_env, parse_headers
from mcptask.cli.options import Common
from mcptask.errors import AuthError, UsageError
from mcptask.store.paths import tokens_path
from mcptask.store.profiles import Profile, ProfileBook, Reference, Value
from mcptask.transport import DEFAULT_TIMEOUT_SECONDS
from mcptask.transport.redact import is_sensitive_header

if TYPE_CHECKING:
    from mcptask.client.connection import ConnectionSettings

ENV_TOKEN = "MCPTASK_TOKEN"
ENV_URL = "MCPTASK_URL"
ENV_SERVER = "MCPTASK_SERVER"
ENV_PROFILE = "MCPTASK_PROFILE"
ENV_CONFIG = "MCPTASK_CONFIG"
ENV_CONFIG_ENV = "MCPTASK_CONFIG_ENV"
SEVERAL_MARKS = ",*?["
"""Characters that make `--profile` a list or a pattern of profiles (docs/fleet.md); a `--config`
file's server may hold them in its name: a value that is exactly one name names that one."""


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

    def opened() -> ProfileBook:
        return book if isinstance(book, ProfileBook) else book()

    def filled_in(profile: Profile | None) -> Profile | None:
        if profile is None or config is None:
            return profile
        from mcptask.store.client_configs import expanded

        allowed = {*(line.config_env or []), *env.get(ENV_CONFIG_ENV, "").split(",")} - {""}
        return expanded(profile, config, env, allowed)

    def chosen(name: str) -> Profile | None:
        profiles = opened()
        if config is not None and name not in profiles.profiles:  # not a saved profile's advice
            known = ", ".join(sorted(profiles.profiles)) or "none"
            raise UsageError(f"{profiles.path} has no server {name!r} (its servers: {known})")
        return filled_in(profiles.get(name))

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
        return chosen(line.profile)
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
        return chosen(named)
    if (env.get(ENV_URL) or env.get(ENV_SERVER)) and not line.config:
        return None  # --config on the line names the server, as --url would
    default = opened()
    if config is not None and default.default is None:
        raise UsageError(
            f"{default.path} has {len(default.profiles)} servers: name one with --profile "
            f"({', '.join(sorted(default.profiles)) or 'none'})"
        )
    return filled_in(default.profiles.get(default.default) if default.default else None)


@dataclass(frozen=True)
class Resolved:
    """The settings of one invocation, and where they came from."""

    settings: ConnectionSettings
    sources: Profile
    """The same settings with credentials as the line or profile gave them (references kept),
    nameless: what `connect --save` writes, through `to_profile`."""
    profile: str | None
    warnings: tuple[str, ...] = ()

    def to_profile(self, name: str, *, save_secrets: bool) -> Profile:
        """These settings as profile `name`, without a session (connect adds the one it
        kept); a credential given as text is refused unless `save_secrets`."""
        sources = self.sources
        return replace(
            sources,
            name=name,
            env=_saveable(sources.env, save_secrets, "--env"),
            headers=_saveable(sources.headers, save_secrets, "-H"),
            session_id=None,
        )


def resolve(
    line: Common,
    *,
    book: ProfileBook | Callable[[], ProfileBook],
    environ: Mapping[str, str] | None = None,
    keep_session: bool | None = None,
    force_sign_in: bool = False,
) -> Resolved:
    """Combine the command line, the profile in use and the environment, or raise UsageError.
    `book` may be a loader, called only when a profile is in use (a broken profiles file does
    not stop a command that names its server); `keep_session` overrides the profile's
    (connect --keep-session); `force_sign_in` ignores cached tokens (login)."""
    from mcptask.client.connection import ConnectionSettings
    from mcptask.protocol.handshake import PROTOCOL_CHOICES

    env = os.environ if environ is None else environ
    profile = profile_in_use(line, book, env)
    base = profile or Profile(name="")
    url, server = line.url, line.server
    if profile is not None:  # then the line names no server (`profile_in_use`)
        url, server = profile.url, profile.server
    if not (url or server):
        url, server = env.get(ENV_URL) or None, env.get(ENV_SERVER) or None
        if url and server:
            raise UsageError(f"both {ENV_URL} and {ENV_SERVER} are set; unset one")
    if url and server:
        raise UsageError("give either --url or --server, not both")
    if not (url or server):
        raise UsageError(
            f"no server given: use --url URL or --server 'COMMAND ARGS' (or {ENV_URL} / "
            f"{ENV_SERVER}, or a profile: mcptask connect TARGET --save NAME); try --server "
            "'mcptask reference-server --stdio'"
        )
    protocol = line.protocol or base.protocol or "auto"
    if protocol not in PROTOCOL_CHOICES:
        raise UsageError(f"--protocol takes one of: {', '.join(PROTOCOL_CHOICES)}")
    timeout = line.timeout if line.timeout is not None else base.timeout
    timeout = DEFAULT_TIMEOUT_SECONDS if timeout is None else timeout
    if not (math.isfinite(timeout) and timeout > 0):
        raise UsageError("--timeout must be a positive number of seconds")

    line_headers = parse_headers(line.header or [])
    header_values: dict[str, Value] = {**base.headers}
    for name, value in line_headers.items():
        header_values = {k: v for k, v in header_values.items() if k.lower() != name.lower()}
        header_values[name] = value
    env_values: dict[str, Value] = {**base.env, **parse_env(line.env or [])}
    token_value, token_what = _token_source(line, base)
    keep = base.keep_session if keep_session is None else keep_session
    session_id = line.session_id or (base.session_id if keep else None)
    if server and (line_headers or line.session_id or line.token_file or line.token_env):
        raise UsageError(
            "--header, --token-file, --token-env and --session-id apply to --url servers only"
        )
    if url and env_values:
        raise UsageError("--env applies to --server (stdio) servers only")
    if url and line.inherit_env:
        raise UsageError("--inherit-env applies to --server (stdio) servers only")
    if server and (line.ca_cert or line.insecure):
        raise UsageError("--ca-cert and --insecure apply to https:// servers only")
    if session_id is not None and not header_safe(session_id):
        raise UsageError("--session-id must be printable ASCII")
    auth, auth_saved = resolve_auth(line, base, env, http=bool(url), force_sign_in=force_sign_in)

    headers = {
        name: _resolved(value, env, f"header {name!r}") for name, value in header_values.items()
    }
    for name, value in headers.items():
        if not header_safe(value):
            raise UsageError(f"the value of header {name!r} must be printable ASCII")
    # A token is for HTTP servers; a stdio server takes credentials from its environment.
    token = None
    if url:
        token = _resolved(token_value, env, token_what) if token_value is not None else None
        token = token or env.get(ENV_TOKEN) or None
    if token and not any(name.lower() == "authorization" for name in headers):
        if not header_safe(token):
            raise UsageError("the bearer token must be printable ASCII (it is not shown here)")
        headers["Authorization"] = f"Bearer {token}"
    if url and plain_remote(url) and any(is_sensitive_header(name) for name in headers):
        # Anyone on the path could read a credential sent over plain http:// to another machine.
        raise AuthError(
            f"refusing to send credentials over plain http:// to {urlsplit(url).hostname}, "
            "which is not this machine: use https://"
        )
    settings = ConnectionSettings(
        url=url,
        server_command=server,
        headers=headers,
        env={name: _resolved(value, env, f"--env {name}") for name, value in env_values.items()},
        inherit_env=line.inherit_env,
        session_id=session_id,
        keep_session=keep,
        timeout=timeout,
        protocol=protocol,
        ca_cert=line.ca_cert,
        insecure=line.insecure,
        auth=auth,
    )
    sources = replace(
        auth_saved,
        url=url,
        server=server,
        env=env_values,
        headers=header_values,
        # Only a token the line or the profile named is saved; MCPTASK_TOKEN stays ambient.
        token=token_value,
        protocol=protocol if protocol != "auto" else None,
        timeout=timeout if timeout != DEFAULT_TIMEOUT_SECONDS else None,
        keep_session=keep,
        session_id=session_id if keep else None,
        source=base.source,
    )
    insecure = (
        "--insecure: the server's TLS certificate is not verified; anyone on the path can read "
        "and change this traffic"
    )
    warnings = (insecure,) if line.insecure else ()
    return Resolved(settings, sources, profile.name if profile else None, warnings)


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
    sign_in = ("auth", "client_id", "client_secret_file", "client_key_file", "client_issuer")
    given = [  # each field's option: --auth, --client-id...
        "--" + name.replace("_", "-")
        for name in (*sign_in, "scope", "no_browser")
        if getattr(line, name) not in (None, False)
    ]
    if not http:
        if given:
            raise UsageError(
                f"{', '.join(given)}: sign-in applies to --url servers only (a --server "
                "process takes its credentials from its environment: --env)"
            )
        return None, Profile(name="")
    saved = Profile(
        name="",
        auth=line.auth or profile.auth,
        client_id=line.client_id or profile.client_id,
        client_secret=(
            Reference("file", str(line.client_secret_file))
            if line.client_secret_file is not None
            else profile.client_secret
        ),
        client_key_file=(
            str(line.client_key_file) if line.client_key_file else profile.client_key_file
        ),
        client_issuer=line.client_issuer or profile.client_issuer,
        scope=line.scope or profile.scope,
    )
    method = saved.auth or env.get("MCPTASK_AUTH") or "auto"
    if method not in AUTH_METHODS:
        raise UsageError(f"--auth takes one of: {', '.join(AUTH_METHODS)}")
    client_id = saved.client_id or env.get("MCPTASK_CLIENT_ID") or None
    secret, secret_value = None, saved.client_secret
    if secret_value is not None:
        from_file = isinstance(secret_value, Reference) and secret_value.kind == "file"
        what = "--client-secret-file" if from_file else "the client secret"
        secret = _resolved(secret_value, env, what)
    secret = secret or env.get("MCPTASK_CLIENT_SECRET") or None
    key_text = saved.client_key_file or env.get("MCPTASK_CLIENT_KEY_FILE")
    key_file = Path(key_text) if key_text else None
    issuer = saved.client_issuer or env.get("MCPTASK_CLIENT_ISSUER") or None
    if issuer is not None and not _issuer_url(issuer):
        raise UsageError("--client-issuer (MCPTASK_CLIENT_ISSUER) takes an https:// URL")
    scope = " ".join((saved.scope or env.get("MCPTASK_SCOPE") or "").split()) or None
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
        client_issuer=issuer,
        scope=scope,
        client_metadata_url=env.get("MCPTASK_CLIENT_METADATA_URL") or None,
        open_browser=not line.no_browser,
        # login is a person asking to sign in: the browser flow, whatever the terminal.
        interactive=force_sign_in or _terminal() or bool(env.get("BROWSER")),
        force_sign_in=force_sign_in,
        cache_path=tokens_path(env),
    )
    return settings, replace(saved, auth=method if method != "auto" else None)


def _issuer_url(issuer: str) -> bool:
    """An issuer identifier: https, or http on this machine (RFC 8414 §2)."""
    try:
        parts = urlsplit(issuer)
    except ValueError:
        return False
    if not parts.hostname or parts.query or parts.fragment:
        return False
    return parts.scheme == "https" or (parts.scheme == "http" and not plain_remote(issuer))


def _terminal() -> bool:
    try:
        return os.isatty(sys.stdin.fileno()) and os.isatty(sys.stderr.fileno())
    except (OSError, ValueError, AttributeError):
        return False


def _token_source(line: Common, base: Profile) -> tuple[Value | None, str]:
    """Where the bearer token comes from, and how to name that source in a message."""
    if line.token_file is not None and line.token_env is not None:
        raise UsageError("give either --token-file or --token-env, not both")
    if line.token_file is not None:
        # Absolute: a saved profile is used from other directories too.
        return Reference("file", str(line.token_file.expanduser().resolve())), "--token-file"
    if line.token_env is not None:
        return Reference("env", line.token_env), "--token-env"
    return base.token, f"the token of profile {base.name!r}"


def _resolved(value: Value, env: Mapping[str, str], what: str) -> str:
    return value if isinstance(value, str) else value.resolve(env, what)


def _saveable(values: dict[str, Value], save_secrets: bool, option: str) -> dict[str, Value]:
    for name, value in values.items():
        if isinstance(value, str) and is_sensitive_header(name) and not save_secrets:
            raise UsageError(
                f"{option} {name} looks like a credential and is not saved in a profile unless "
                f'you add --save-secrets; or keep it outside: {name} = {{ env = "VAR" }} in the '
                "profiles file"
            )
    return dict(values)

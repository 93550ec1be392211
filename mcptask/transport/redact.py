"""Keep credentials out of everything mcptask prints: wire logs, targets, messages."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable, Mapping
from urllib.parse import unquote_plus, urlsplit, urlunsplit

_SENSITIVE_WORDS = ("auth", "token", "key", "secret", "cookie", "password", "session-token")

_SENSITIVE_QUERY_WORDS = (*_SENSITIVE_WORDS, "pass", "pwd", "sig", "jwt", "credential", "code")
"""Query keys whose value may be a credential (`?api_key=`, `?sig=`, `?code=`, ...)."""

_SECRET_SHAPES = re.compile(
    r"(?:(?:sk|rk|pk)[-_]|gh[pousr]_|github_pat_|glpat-|xox[abposr]-|AKIA|ASIA|AIza)[\w-]{12}"
    r"|eyJ[\w-]+\."
)
"""The first characters of well-known credentials (API keys, GitHub/GitLab/Slack tokens,
cloud access keys, JWTs): an argument starting so is a secret, whatever option it follows."""

REDACTED = "<redacted>"


def is_sensitive_header(name: str) -> bool:
    lowered = name.lower()
    return any(word in lowered for word in _SENSITIVE_WORDS)


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    return {
        name: REDACTED if is_sensitive_header(name) else value for name, value in headers.items()
    }


def scrub(text: str, secrets: Iterable[str | None]) -> str:
    """`text` with every occurrence of the given secrets replaced by `<redacted>`.

    For text a server wrote (an OAuth error description, say), which could quote back a
    credential it was sent.
    """
    for secret in sorted((s for s in secrets if s and len(s) >= 4), key=len, reverse=True):
        text = text.replace(secret, REDACTED)
    return text


def display_url(url: str) -> str:
    """The URL without user info, query or fragment, which may carry credentials."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:
        return "<invalid URL>"
    if ":" in host:
        host = f"[{host}]"
    netloc = f"{host}:{port}" if port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def redact_url(url: str) -> str:
    """The URL whole, but for its user info and the query values under credential-like keys
    or shaped like credentials, replaced by `<redacted>`
    (`https://<redacted>@host/mcp?api_key=<redacted>&tenant=a`)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a bad port
    except ValueError:
        return "<invalid URL>"
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rpartition('@')[2]}"
    query = "&".join(_redact_pair(pair) for pair in parts.query.split("&")) if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def _redact_pair(pair: str) -> str:
    name, equals, value = pair.partition("=")
    if equals and value:
        lowered = unquote_plus(name).lower()
        if any(word in lowered for word in _SENSITIVE_QUERY_WORDS) or _SECRET_SHAPES.match(
            unquote_plus(value)
        ):
            return f"{name}={REDACTED}"
    return REDACTED if _SECRET_SHAPES.match(unquote_plus(pair)) else pair


def display_command(argv: list[str]) -> str:
    """The command line with the values of credential-like options replaced by `<redacted>`.

    Covers `--token VALUE`, `--token=VALUE`, `API_KEY=VALUE` and `Authorization: VALUE`
    style arguments, arguments shaped like well-known credentials (`sk-...`, `ghp_...`), and
    the user info and credential-like query keys of URLs.
    """
    shown: list[str] = []
    hide_next = False
    for argument in argv:
        name, equals, value = argument.partition("=")
        header, colon, _ = argument.partition(":")
        if hide_next or _SECRET_SHAPES.match(argument):
            shown.append(REDACTED)
            hide_next = False
        elif "://" in name:
            shown.append(redact_url(argument))
        elif equals and (is_sensitive_header(name) or _SECRET_SHAPES.match(value)):
            shown.append(f"{name}={REDACTED}")
        elif equals and "://" in value:
            shown.append(f"{name}={redact_url(value)}")
        elif colon and " " not in header and is_sensitive_header(header):
            shown.append(f"{header}: {REDACTED}")
        else:
            shown.append(argument)
            hide_next = argument.startswith("-") and is_sensitive_header(argument)
    return shlex.join(shown)


def display_server(command: str) -> str:
    """A saved server command line, shown as `display_command` shows it."""
    try:
        argv = shlex.split(command)
    except ValueError:  # a quote left open: shown by whitespace, still redacted
        argv = command.split()
    return display_command(argv)

"""Keep credentials out of everything mcptask prints: wire logs, targets, messages."""

from __future__ import annotations

import shlex
from collections.abc import Iterable, Mapping
from urllib.parse import urlsplit, urlunsplit

_SENSITIVE_WORDS = ("auth", "token", "key", "secret", "cookie", "password", "session-token")


def is_sensitive_header(name: str) -> bool:
    """True for a header whose value may be a credential."""
    lowered = name.lower()
    return any(word in lowered for word in _SENSITIVE_WORDS)


def redact_headers(headers: Mapping[str, str]) -> dict[str, str]:
    """Headers with every credential-like value replaced by `<redacted>`."""
    return {
        name: "<redacted>" if is_sensitive_header(name) else value
        for name, value in headers.items()
    }


def scrub(text: str, secrets: Iterable[str | None]) -> str:
    """`text` with every occurrence of the given secrets replaced by `<redacted>`.

    For text a server wrote (an OAuth error description, say), which could quote back a
    credential it was sent.
    """
    for secret in sorted((s for s in secrets if s and len(s) >= 4), key=len, reverse=True):
        text = text.replace(secret, "<redacted>")
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


def display_command(argv: list[str]) -> str:
    """The command line with the values of credential-like options replaced by `<redacted>`.

    Covers `--token VALUE`, `--token=VALUE` and `API_KEY=VALUE` style arguments.
    """
    shown: list[str] = []
    hide_next = False
    for argument in argv:
        name, equals, _ = argument.partition("=")
        if hide_next:
            shown.append("<redacted>")
            hide_next = False
        elif equals and is_sensitive_header(name):
            shown.append(f"{name}=<redacted>")
        else:
            shown.append(argument)
            hide_next = argument.startswith("-") and is_sensitive_header(argument)
    return shlex.join(shown)

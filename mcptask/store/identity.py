"""Which server a recorded task belongs to: an HTTP server by its canonical URL, a stdio
server by a digest of its command line (its arguments may hold credentials)."""

from __future__ import annotations

import hashlib
import shlex
from dataclasses import dataclass
from urllib.parse import urlsplit, urlunsplit

_DEFAULT_PORTS = {"http": 80, "https": 443}


@dataclass(frozen=True)
class ServerIdentity:
    """The key a server's tasks are recorded under, and how to show it."""

    key: str
    label: str
    profile: str = ""
    """The profile it was reached through ('' for none): other credentials may see other tasks."""

    @classmethod
    def for_url(cls, url: str, profile: str = "") -> ServerIdentity:
        """A Streamable HTTP server, by its canonical URL."""
        canonical = canonical_url(url)
        return cls(canonical, canonical, profile)

    @classmethod
    def for_command(cls, command: str, label: str = "", profile: str = "") -> ServerIdentity:
        """A stdio server, by a digest of its command line as the shell would split it (`label`:
        the redacted form to show)."""
        try:
            argv = shlex.split(command)
        except ValueError:
            argv = [command]
        digest = hashlib.sha256(shlex.join(argv).encode("utf-8")).hexdigest()
        return cls(f"stdio:{digest[:32]}", label or "stdio server", profile)


def canonical_url(url: str) -> str:
    """`url` with scheme and host lowercased, no default port, no user info, query or fragment
    (they may carry credentials and name no other server); ValueError when unreadable."""
    parts = urlsplit(url.strip())
    scheme = parts.scheme.lower()
    host = (parts.hostname or "").lower()
    port = parts.port  # raises ValueError for a bad port
    if ":" in host:
        host = f"[{host}]"
    netloc = host if port is None or _DEFAULT_PORTS.get(scheme) == port else f"{host}:{port}"
    return urlunsplit((scheme, netloc, parts.path or "/", "", ""))

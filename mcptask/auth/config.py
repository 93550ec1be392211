"""How one invocation signs in (`AuthSettings`, and the client key file it names), how
requests to authorization servers are made (`HttpOptions`), the grants' names, where OAuth may
go (https, or loopback), and the MCP server as an RFC 8707 resource. Light: the command line
builds these on every run.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from mcptask.errors import AuthDiscoveryError, UsageError
from mcptask.store.identity import canonical_url

# The grants mcptask signs in with, by their RFC 6749 names (as the token cache keeps them).
CLIENT_CREDENTIALS = "client_credentials"
AUTHORIZATION_CODE = "authorization_code"

AUTH_METHODS = ("auto", "none", "client-credentials", "browser")
"""`--auth` values. auto: a cached token or MCPTASK_TOKEN, and on 401 the client credentials
grant when credentials are configured (and the server offers it), else the browser when a
person can use one, else exit 4 with a hint. none: send only what the line gives, never sign
in. client-credentials: the CI way, never a browser. browser: authorization code + PKCE."""


@dataclass(frozen=True)
class HttpOptions:
    """How mcptask's requests to authorization servers are made (as to the MCP server)."""

    verify: Any = True
    timeout: float = 30.0


@dataclass(frozen=True)
class AuthSettings:
    """The sign-in settings of one invocation (secrets already read from where they live)."""

    method: str = "auto"
    client_id: str | None = None
    client_secret: str | None = field(default=None, repr=False)
    """Never in the repr: the secret must not reach a traceback or a log."""
    client_key_file: Path | None = None
    """A PEM private key: the client authenticates with a JWT assertion (private_key_jwt)."""
    client_issuer: str | None = None
    """The authorization server (issuer) the configured client belongs to: its secret or key
    goes to that one only (`credentials_for`), whatever authorization server a URL names."""
    scope: str | None = None
    """Scopes to ask for instead of the challenge's or the resource metadata's."""
    client_metadata_url: str | None = None
    """A Client ID Metadata Document URL, used as client_id where the server supports it."""
    open_browser: bool = True
    """False with --no-browser: print the sign-in URL instead of opening a browser."""
    interactive: bool = False
    """A person can finish a browser sign-in (a terminal, or BROWSER is set)."""
    force_sign_in: bool = False
    """`mcptask login`: ignore cached tokens and sign in anew."""
    cache_path: Path | None = None
    """The token cache file (None: tokens are kept in memory only)."""
    sign_in_timeout: float = 300.0
    """How long the browser sign-in may take before mcptask gives up."""
    stopped: Callable[[], bool] = field(default=lambda: False, compare=False, repr=False)
    """Whether the user asked to stop (Ctrl-C, where it raises nothing: several servers'
    threads): a browser sign-in waiting for its turn or for its redirect gives up."""

    @property
    def has_client_credentials(self) -> bool:
        """A client id with a secret or a key: the client credentials grant can be used."""
        return self.client_id is not None and (
            self.client_secret is not None or self.client_key_file is not None
        )

    def credentials_for(self, issuer: str) -> bool:
        """Whether the configured secret or key may go to `issuer`: the one it is bound to
        (RFC 8414 issuer identifiers, a trailing slash aside)."""
        return (
            self.has_client_credentials
            and self.client_issuer is not None
            and self.client_issuer.rstrip("/") == issuer.rstrip("/")
        )


_LOCAL_NAMES = ("localhost", "localhost.localdomain")


def plain_remote(url: str) -> bool:
    """True for a plain http:// URL to a host that is not this machine (loopback: 127.0.0.0/8,
    ::1, localhost): nothing of OAuth goes there (the MCP authorization spec wants HTTPS)."""
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
    except ValueError:
        return False
    if parts.scheme.lower() != "http" or host.lower() in _LOCAL_NAMES:
        return False
    try:
        return not ipaddress.ip_address(host).is_loopback
    except ValueError:
        return True


def require_secure(url: str, what: str) -> None:
    """AuthDiscoveryError for a `plain_remote` URL: OAuth goes over https only."""
    if plain_remote(url):
        raise AuthDiscoveryError(
            f"refusing OAuth over plain http:// to {urlsplit(url).hostname} ({what}), which is "
            "not this machine: sign-in needs https://"
        )


def canonical_resource(server_url: str) -> str:
    """The server URL as an RFC 8707 resource: the canonical URL of `store.identity` (no
    user info, query or fragment, no default port), without a trailing slash.
    (A malformed URL comes back as it is: the transport refuses it with a usage error.)"""
    try:
        canonical = canonical_url(server_url)
    except ValueError:
        return server_url
    return canonical.rstrip("/")


def read_private_key(path: Path) -> str:
    """The PEM private key of --client-key-file; errors name the file, never its content."""
    try:
        text = path.expanduser().read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read the client key file {str(path)!r}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"the client key file {str(path)!r} is not PEM text") from None
    if "PRIVATE KEY-----" not in text:
        raise UsageError(f"the client key file {str(path)!r} holds no PEM private key")
    return text

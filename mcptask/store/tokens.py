"""The token cache: OAuth tokens (per MCP server, issuer, resource and client) and the clients
mcptask registered (RFC 7591, per issuer), one JSON file in the state directory:
`{"version": 1, "tokens": [...], "clients": [...]}`. Mode 0600, written atomically under a
lock. A file that cannot be read is taken as empty and replaced at the next write; as ssh
does for a key, one that is a symbolic link or open to other users is refused.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import time
from collections.abc import Iterable, Iterator
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from mcptask.errors import StateError
from mcptask.store.paths import exclusive, write_private
from mcptask.store.paths import tokens_path as tokens_path  # logout's way in

VERSION = 1
EXPIRY_LEEWAY_SECONDS = 30.0
"""A token this close to its expiry counts as expired (a quarter of its life, if shorter)."""


@dataclass(frozen=True)
class CachedToken:
    """One access token (and its refresh token) for one server, issuer, resource, client."""

    server: str
    issuer: str
    resource: str
    client_id: str
    grant: str
    access_token: str = field(repr=False)
    token_endpoint: str = field(repr=False)
    auth_method: str = field(repr=False)
    refresh_token: str | None = field(default=None, repr=False)
    expires_at: float | None = None
    scope: str | None = None
    issued_at: float | None = field(default=None, repr=False)

    def expired(self, now: float | None = None) -> bool:
        """True when the token has expired, or will within the leeway."""
        if self.expires_at is None:
            return False
        leeway = EXPIRY_LEEWAY_SECONDS
        if self.issued_at is not None:
            leeway = min(leeway, (self.expires_at - self.issued_at) / 4)
        return (now or time.time()) + leeway >= self.expires_at

    @property
    def slot(self) -> tuple[str, str, str, str]:
        """A newer token with the same slot replaces this one: server, issuer, resource, client."""
        return (self.server, self.issuer, self.resource, self.client_id)


@dataclass(frozen=True)
class CachedClient:
    """A client that mcptask registered with an authorization server."""

    issuer: str
    client_id: str
    auth_method: str
    client_secret: str | None = field(default=None, repr=False)
    redirect_uri: str | None = None


@dataclass(frozen=True)
class TokenCache:
    """Everything in the cache file."""

    tokens: tuple[CachedToken, ...] = ()
    clients: tuple[CachedClient, ...] = ()

    def for_server(self, server: str) -> list[CachedToken]:
        """The tokens obtained for this MCP server URL, newest first."""
        return [token for token in reversed(self.tokens) if token.server == server]

    def client(self, issuer: str) -> CachedClient | None:
        """The client registered with this issuer, if any."""
        return next((client for client in reversed(self.clients) if client.issuer == issuer), None)


def load(path: Path) -> TokenCache:
    """Read the cache (absent or unreadable: empty); StateError for a symbolic link or a file
    other users may read or write."""
    try:
        with os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW), "rb") as stream:
            mode = os.fstat(stream.fileno()).st_mode & 0o777
            if mode & 0o077:
                raise StateError(
                    f"the token cache {path} is open to other users (mode {mode:04o}): "
                    f"chmod 600 {path}"
                )
            document = json.loads(stream.read().decode("utf-8"))
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise StateError(
                f"the token cache {path} is a symbolic link, which mcptask does not follow: "
                f"rm {path} (mcptask writes a new one at the next sign-in)"
            ) from None
        return TokenCache()
    except (UnicodeDecodeError, ValueError):
        return TokenCache()
    if not isinstance(document, dict) or document.get("version") != VERSION:
        return TokenCache()
    return TokenCache(
        tuple(_entries(document.get("tokens"), CachedToken)),
        tuple(_entries(document.get("clients"), CachedClient)),
    )


def store_token(path: Path, token: CachedToken) -> None:
    """Add one token, replacing the entry of its server, issuer, resource and client."""
    with exclusive(path):
        cache = load(path)
        _write(path, [*(e for e in cache.tokens if e.slot != token.slot), token], cache.clients)


def drop_token(path: Path, token: CachedToken) -> None:
    """Remove one token (a refresh token that no longer works, say), unless another process
    has replaced it meanwhile (a rotated refresh token: the new one works)."""
    sent = (token.slot, token.access_token, token.refresh_token)
    with exclusive(path):
        cache = load(path)
        kept = [e for e in cache.tokens if (e.slot, e.access_token, e.refresh_token) != sent]
        _write(path, kept, cache.clients)


def store_client(path: Path, client: CachedClient) -> None:
    """Remember the client registered with an issuer."""
    with exclusive(path):
        cache = load(path)
        kept = [entry for entry in cache.clients if entry.issuer != client.issuer]
        _write(path, cache.tokens, [*kept, client])


def forget_server(path: Path, server: str) -> list[CachedToken]:
    """Remove every token for one server; return what was removed."""
    with exclusive(path):
        cache = load(path)
        _write(path, [entry for entry in cache.tokens if entry.server != server], cache.clients)
    return cache.for_server(server)


def forget_all(path: Path) -> list[CachedToken]:
    """Empty the cache (tokens and registered clients); return the tokens removed."""
    with exclusive(path):
        removed = list(load(path).tokens)
        _write(path, [], [])
    return removed


_FIELD_TYPES: dict[str, tuple[type, ...]] = {  # by field annotation; JSON has one number
    "str": (str,),
    "str | None": (str, type(None)),
    "float | None": (int, float, type(None)),
}


def _entries(raw: object, kind: Any) -> Iterator[Any]:
    """The entries of `raw` that make a `kind`; one with a field missing, unknown or of another
    type is skipped (it would fail a comparison or a request later)."""
    types = {spec.name: _FIELD_TYPES[str(spec.type)] for spec in fields(kind)}
    for item in raw if isinstance(raw, list) else ():
        # bool is an int, but no field is a flag: true is no expiry time.
        if isinstance(item, dict) and all(
            not isinstance(value, bool) and isinstance(value, types.get(name, ()))
            for name, value in item.items()
        ):
            with contextlib.suppress(TypeError):  # a field missing
                yield kind(**item)


def _write(path: Path, tokens: Iterable[CachedToken], clients: Iterable[CachedClient]) -> None:
    document = {
        "version": VERSION,
        "tokens": [asdict(token) for token in tokens],
        "clients": [asdict(client) for client in clients],
    }
    write_private(path, json.dumps(document, indent=1).encode("utf-8"))

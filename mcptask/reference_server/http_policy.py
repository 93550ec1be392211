"""HTTP request checks of the Streamable HTTP transport: Origin, bearer token, Accept."""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from urllib.parse import urlsplit

LOCAL_HOSTS = frozenset({"localhost", "127.0.0.1", "::1"})
REALM = "mcptask-reference"


@dataclass(frozen=True)
class AuthFailure:
    """A refused request: HTTP status, WWW-Authenticate challenge, and a message."""

    status: int
    challenge: str
    message: str


def origin_allowed(origin: str) -> bool:
    """True for http://localhost, http://127.0.0.1 or http://[::1], any port.

    Browsers send Origin on cross-site requests; refusing foreign origins is the DNS
    rebinding protection that the transport spec requires.
    """
    try:
        parts = urlsplit(origin)
        parts.port  # noqa: B018 - raises ValueError for a malformed port
    except ValueError:
        return False
    if parts.scheme != "http" or parts.username or parts.path or parts.query:
        return False
    return parts.hostname in LOCAL_HOSTS


def _bearer_token(authorization: str | None) -> str | None:
    if authorization is None:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


def auth_failure(
    authorization: str | None, require: str | None, forbid: str | None
) -> AuthFailure | None:
    """Check the Authorization header against --require-token / --forbid-token."""
    token = _bearer_token(authorization)
    if forbid is not None and token is not None and _same(token, forbid):
        return AuthFailure(
            403, 'Bearer error="insufficient_scope", scope="tasks"', "Insufficient scope"
        )
    if require is not None and (token is None or not _same(token, require)):
        return AuthFailure(
            401,
            f'Bearer realm="{REALM}", error="invalid_token"',
            "Missing or invalid bearer token",
        )
    return None


def accepted_types(accept: str | None) -> set[str]:
    """The media types listed in an Accept header, lower-case, without parameters."""
    if not accept:
        return set()
    return {part.split(";")[0].strip().lower() for part in accept.split(",")}

"""What the sign-in unit tests share: the MCP server they sign in to, and a token cached
for it."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from mcptask.store.tokens import CachedToken

URL = "https://server.test/mcp"
ISSUER = "https://as.test"


def cached_token(access_token: str, **fields: Any) -> CachedToken:
    """A token for URL from ISSUER's authorization-code grant to the public client "c",
    with `fields` changed."""
    token = CachedToken(
        server=URL,
        issuer=ISSUER,
        resource=URL,
        client_id="c",
        grant="authorization_code",
        access_token=access_token,
        token_endpoint=f"{ISSUER}/token",
        auth_method="none",
    )
    return replace(token, **fields)

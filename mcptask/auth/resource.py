"""The MCP server as an OAuth resource (RFC 8707): what tokens are asked for and cached by.

Kept free of heavy imports: every command with a --url server builds its sign-in flow, which
names the resource, and most never sign in.
"""

from __future__ import annotations

from mcptask.store.identity import canonical_url


def canonical_resource(server_url: str) -> str:
    """The server URL as an RFC 8707 resource: the canonical URL of `store.identity` (no
    user info, query or fragment, no default port), without a trailing slash.
    (A malformed URL comes back as it is: the transport refuses it with a usage error.)"""
    try:
        canonical = canonical_url(server_url)
    except ValueError:
        return server_url
    return canonical.rstrip("/")

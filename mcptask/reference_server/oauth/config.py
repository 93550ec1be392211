"""What `--oauth` and its options set."""

from __future__ import annotations

from dataclasses import dataclass, field

READ_SCOPE = "tasks:read"
WRITE_SCOPE = "tasks:write"
OFFLINE_SCOPE = "offline_access"
SCOPES = (READ_SCOPE, WRITE_SCOPE, OFFLINE_SCOPE)
# Methods that change tasks need the write scope; everything else the read scope.
WRITE_METHODS = frozenset({"tasks/cancel", "tasks/update", "tools/call"})


@dataclass(frozen=True)
class PreRegistered:
    """A client registered ahead of time (the CI way): a secret, or a public key."""

    client_id: str
    secret: str | None = None
    public_key_pem: str | None = None

    def __repr__(self) -> str:
        return f"PreRegistered(client_id={self.client_id!r}, <credentials redacted>)"


@dataclass(frozen=True)
class OAuthConfig:
    """The authorization server's settings."""

    token_ttl_seconds: int = 3600
    code_ttl_seconds: int = 120
    clients: tuple[PreRegistered, ...] = field(default=())

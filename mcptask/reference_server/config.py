"""The reference server's settings, as one immutable value built from the command line."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from mcptask.reference_server.oauth.config import OAuthConfig
from mcptask.reference_server.scripting import ScriptedTask


class CancelMode(enum.StrEnum):
    """How tasks/cancel behaves: the spec (strict) or one of two real-world variants."""

    STRICT = "strict"
    LENIENT = "lenient"
    COOPERATIVE = "cooperative"


class AnswerMode(enum.StrEnum):
    """How HTTP POST requests are answered: one JSON body, or an SSE stream."""

    JSON = "json"
    SSE = "sse"


class Scope(enum.StrEnum):
    """Who sees tasks created by tools/call: everyone, or only the creating session."""

    GLOBAL = "global"
    SESSION = "session"


class ProtocolEras(enum.StrEnum):
    """Which protocol eras the server speaks: 2025-11-25 (legacy), 2026-07-28 (modern), both."""

    LEGACY = "legacy"
    MODERN = "modern"
    BOTH = "both"

    @property
    def legacy(self) -> bool:
        """True when `initialize` and the 2025-11-25 semantics are served."""
        return self is not ProtocolEras.MODERN

    @property
    def modern(self) -> bool:
        """True when requests with per-request `_meta` (2026-07-28) are served."""
        return self is not ProtocolEras.LEGACY


# The eras served when --protocol-eras is not given: both, as current servers do, so that
# every client finds its era (selected per request by how the client opens).
DEFAULT_PROTOCOL_ERAS = ProtocolEras.BOTH


class Fault(enum.StrEnum):
    """A deliberate protocol violation applied to answers of tasks/* requests."""

    NOT_JSON = "not-json"
    NOT_JSONRPC = "not-jsonrpc"
    WRONG_CONTENT_TYPE = "wrong-content-type"
    WRONG_ID = "wrong-id"
    DROP = "drop"


@dataclass(frozen=True)
class ServerConfig:
    """Everything the command line can set; defaults match `mcptask reference-server`."""

    host: str = "127.0.0.1"
    port: int = 8765
    stdio: bool = False
    seed: tuple[tuple[str, int], ...] = ()
    scripted_tasks: tuple[ScriptedTask, ...] = ()
    page_size: int = 50
    scope: Scope = Scope.GLOBAL
    tasks_enabled: bool = True
    list_enabled: bool = True
    cancel_enabled: bool = True
    answer: AnswerMode = AnswerMode.SSE
    ttl_ms: int | None = None
    poll_interval_ms: int = 500
    cancel_mode: CancelMode = CancelMode.STRICT
    cancel_delay_ms: int = 1000
    # 2026-07-28: tasks/cancel only acknowledges; the task turns `cancelled` this much later
    # (negative: never). A real delay, so that clients must poll to see the outcome.
    modern_cancel_delay_ms: int = 300
    complete_on_cancel: frozenset[str] = field(default_factory=frozenset)
    latency_ms: int = 0
    require_token: str | None = None
    forbid_token: str | None = None
    drop_session_after: int | None = None
    fault: Fault | None = None
    notify: bool = True
    get_stream: bool = True
    server_name: str = "mcptask-reference"
    protocol_eras: ProtocolEras = DEFAULT_PROTOCOL_ERAS
    # Offer the fixture tools of the official MCP conformance runner (fixtures.py).
    conformance_fixtures: bool = False
    log_requests: bool = False
    # --oauth: /mcp is a protected resource of a built-in authorization server (oauth/).
    oauth: OAuthConfig | None = None
    # Not on the command line: tests shorten it to see heartbeats quickly.
    heartbeat_seconds: float = 15.0

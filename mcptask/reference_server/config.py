"""The reference server's settings, as one immutable value built from the command line, and
those of its OAuth demo (--oauth)."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mcptask.reference_server.scripting import ScriptedTask

if TYPE_CHECKING:
    from mcptask.reference_server.tools import ToolSet


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
        return self is not ProtocolEras.MODERN

    @property
    def modern(self) -> bool:
        return self is not ProtocolEras.LEGACY


class Fault(enum.StrEnum):
    """A deliberate protocol violation applied to answers of tasks/* requests."""

    NOT_JSON = "not-json"
    NOT_JSONRPC = "not-jsonrpc"
    WRONG_CONTENT_TYPE = "wrong-content-type"
    WRONG_ID = "wrong-id"
    DROP = "drop"


class FaultKind(enum.StrEnum):
    """A transient fault the fault switches inject into a share of the task requests."""

    BUSY = "busy"
    RATE_LIMITED = "rate-limited"
    RESET = "reset"
    LOST = "lost"
    SSE_CUT = "sse-cut"
    SLOW = "slow"
    OVERSIZED = "oversized"


# Kinds that only HTTP has (a status code, an SSE stream): refused with --stdio.
HTTP_ONLY_KINDS = frozenset({FaultKind.BUSY, FaultKind.RATE_LIMITED, FaultKind.SSE_CUT})
STDIO_KINDS = tuple(kind for kind in FaultKind if kind not in HTTP_ONLY_KINDS)
# Default of --fault-oversize: over mcptask's default bound on an answer (32 MiB).
DEFAULT_OVERSIZE_BYTES = 33 * 1024 * 1024


@dataclass(frozen=True)
class FaultSwitches:
    """--fault-rate and its companions, and --die-after: all off by default."""

    # The share of task requests (tasks/*) that get a fault; 0 turns the switches off.
    rate: float = 0.0
    kinds: tuple[FaultKind, ...] = tuple(FaultKind)
    # None: a random seed, logged at start so that the run can be repeated.
    seed: int | None = None
    retry_after_s: int = 0
    delay_ms: int = 2000
    oversize_bytes: int = DEFAULT_OVERSIZE_BYTES
    die_after: int | None = None

    @property
    def active(self) -> bool:
        return self.rate > 0 or self.die_after is not None


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
    # An HTTP connection with no request for this long is closed; a session unused for
    # this long is forgotten (then 404). 0: never.
    connection_idle_seconds: float = 60.0
    session_idle_seconds: float = 3600.0
    # 2025-11-25 sessions live behind a sticky load balancer: initialize sets AFFINITY_COOKIE,
    # and a request of the session without it is refused (400), as its node is not reached.
    affinity_cookie: bool = False
    fault: Fault | None = None
    fault_switches: FaultSwitches = field(default_factory=FaultSwitches)
    notify: bool = True
    get_stream: bool = True
    server_name: str = "mcptask-reference"
    # Both by default, as current servers do, so that every client finds its era (selected
    # per request by how the client opens).
    protocol_eras: ProtocolEras = ProtocolEras.BOTH
    # Tools offered besides long_job; not on the command line: the test suite gives the
    # conformance runner's fixture tools (tests/conformance/fixtures).
    tools: ToolSet | None = None
    log_requests: bool = False
    # --oauth: /mcp is a protected resource of a built-in authorization server (oauth/).
    oauth: OAuthConfig | None = None
    # Not on the command line: tests shorten it to see heartbeats quickly.
    heartbeat_seconds: float = 15.0


# -- --oauth: the authorization server's settings ------------------------------------------

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
    token_ttl_seconds: int = 3600
    code_ttl_seconds: int = 120
    clients: tuple[PreRegistered, ...] = field(default=())

"""The reference server's settings, as one immutable value built from the command line, and
those of its OAuth demo (--oauth), with the command line of who may reach the server and for
how long (bearer tokens, --oauth, idle timeouts).

Secrets on a command line are visible to every user of the machine (`ps`): each one given
as a flag can also come from a file or from the environment, which --help recommends.
"""

from __future__ import annotations

import argparse
import enum
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from mcptask.reference_server.oauth.clients import Client
from mcptask.reference_server.scripting import ScriptedTask, bounded

if TYPE_CHECKING:
    from mcptask.reference_server.scripting import ToolSet


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


@dataclass(frozen=True)
class OAuthConfig:
    token_ttl_seconds: int = 3600
    code_ttl_seconds: int = 120
    # Registered ahead of time (the CI way): with a secret, or a public key.
    clients: tuple[Client, ...] = field(default=())


# -- the command line of access ------------------------------------------------------------

REQUIRE_TOKEN_ENV = "MCPTASK_REFERENCE_REQUIRE_TOKEN"
OAUTH_CLIENTS_ENV = "MCPTASK_REFERENCE_OAUTH_CLIENTS"
VISIBLE = "visible to other users of this machine (ps); prefer"


SECONDS = bounded(float, 0, what="number of seconds >= 0")


def add_access_arguments(parser: argparse.ArgumentParser, add_http: Callable[..., object]) -> None:
    """Add the token and timeout options with `add_http` (the HTTP group's add_argument), and
    the OAuth group."""
    add_http(
        "--require-token",
        metavar="TOKEN",
        help=f"require Authorization: Bearer TOKEN (else 401); {VISIBLE} --require-token-file "
        f"or ${REQUIRE_TOKEN_ENV}",
    )
    add_http(
        "--require-token-file",
        metavar="FILE",
        help="like --require-token, the token being the first line of FILE",
    )
    add_http("--forbid-token", metavar="TOKEN", help="answer 403 to this bearer token")
    add_http(
        "--connection-idle-timeout",
        type=SECONDS,
        dest="connection_idle_seconds",
        metavar="SECONDS",
        help="close a connection that sends no request for this long; 0: never "
        f"(default {ServerConfig.connection_idle_seconds:g})",
    )
    add_http(
        "--session-idle-timeout",
        type=SECONDS,
        dest="session_idle_seconds",
        metavar="SECONDS",
        help="forget a 2025-11-25 session unused for this long (then 404); an open GET "
        f"stream keeps it in use; 0: never (default {ServerConfig.session_idle_seconds:g})",
    )

    group = parser.add_argument_group(
        "OAuth (HTTP only)",
        "A demo authorization server, for trying sign-in and testing clients, not for "
        "protecting anything: it registers any client and approves every authorization "
        "request at once, with no user and no consent page. It does check what a client "
        "must prove: the authorization code is single-use, short-lived and bound to its "
        "client, redirect_uri and PKCE (S256) challenge; tokens are bound to this server "
        "and to the client, whose tasks no other client sees.",
    )
    group.add_argument(
        "--oauth",
        action="store_true",
        help="protect /mcp with a built-in OAuth 2.1 authorization server on the same origin "
        "(try: mcptask login URL); scopes tasks:read, tasks:write (cancel, tools/call)",
    )
    group.add_argument(
        "--oauth-token-ttl",
        type=int,
        default=OAuthConfig.token_ttl_seconds,
        metavar="SECONDS",
        help=f"lifetime of access tokens (default {OAuthConfig.token_ttl_seconds}); refresh "
        "tokens renew them",
    )
    group.add_argument(
        "--oauth-client",
        action="append",
        default=[],
        metavar="ID:SECRET",
        help="pre-register a confidential client (client credentials, or browser sign-in); "
        f"{VISIBLE} --oauth-clients-file or ${OAUTH_CLIENTS_ENV}",
    )
    group.add_argument(
        "--oauth-clients-file",
        metavar="FILE",
        help="pre-register the confidential clients of FILE, one ID:SECRET a line (# starts "
        f"a comment); ${OAUTH_CLIENTS_ENV} may hold such entries too, separated by spaces",
    )
    group.add_argument(
        "--oauth-client-key",
        action="append",
        default=[],
        metavar="ID=PUBLIC_KEY_PEM",
        help="pre-register a client that signs in with a JWT assertion (private_key_jwt)",
    )


def _read(option: str, path: str) -> str:
    try:
        return Path(path).expanduser().read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"{option}: cannot read {path}: {exc}") from None


def required_token(args: argparse.Namespace) -> str | None:
    """--require-token, its file or its variable; ValueError for bad values."""
    if args.require_token is not None and args.require_token_file is not None:
        raise ValueError("give --require-token or --require-token-file, not both")
    if args.require_token_file is not None:
        lines = _read("--require-token-file", args.require_token_file).splitlines()
        token = lines[0].strip() if lines else ""
        if not token:
            raise ValueError(f"--require-token-file: {args.require_token_file} is empty")
        return token
    if args.require_token is not None:
        return str(args.require_token)
    return os.environ.get(REQUIRE_TOKEN_ENV) or None


def _client_entries(args: argparse.Namespace) -> list[tuple[str, str]]:
    """(where, ID:SECRET) of every pre-registered confidential client."""
    entries = [("--oauth-client", value) for value in args.oauth_client]
    if args.oauth_clients_file is not None:
        text = _read("--oauth-clients-file", args.oauth_clients_file)
        for line in text.splitlines():
            line = line.split("#", 1)[0].strip()
            if line:
                entries.append(("--oauth-clients-file", line))
    entries += [("$" + OAUTH_CLIENTS_ENV, v) for v in os.environ.get(OAUTH_CLIENTS_ENV, "").split()]
    return entries


def oauth_config(args: argparse.Namespace) -> OAuthConfig | None:
    """The OAuth demo's settings (None without --oauth); ValueError for bad values."""
    if not args.oauth:
        if args.oauth_client or args.oauth_client_key or args.oauth_clients_file:
            raise ValueError(
                "--oauth-client, --oauth-clients-file and --oauth-client-key go with --oauth"
            )
        return None
    if args.oauth_token_ttl < 1:
        raise ValueError("--oauth-token-ttl must be at least 1 second")
    clients: list[Client] = []
    for where, value in _client_entries(args):
        client_id, separator, secret = value.partition(":")
        if not separator or not client_id or not secret:
            raise ValueError(f"{where} takes ID:SECRET")
        clients.append(Client(client_id, "client_secret_basic", secret, preregistered=True))
    for value in args.oauth_client_key:
        client_id, separator, path = value.partition("=")
        if not separator or not client_id or not path:
            raise ValueError("--oauth-client-key takes ID=PUBLIC_KEY_PEM_FILE")
        pem = _read("--oauth-client-key", path)
        if "PUBLIC KEY-----" not in pem:
            raise ValueError(f"--oauth-client-key: {path} holds no PEM public key")
        clients.append(Client(client_id, "private_key_jwt", public_key_pem=pem, preregistered=True))
    return OAuthConfig(token_ttl_seconds=args.oauth_token_ttl, clients=tuple(clients))

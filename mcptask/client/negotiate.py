"""Choose the protocol era with a server: `server/discover` (2026-07-28), `initialize`
(2025-11-25), or discover with a fallback to initialize (`--protocol auto`). The one place
that compares version strings."""

from __future__ import annotations

from mcptask.client.eras import LEGACY, MODERN, Era
from mcptask.client.error_codes import result_of
from mcptask.client.exchange import Exchange
from mcptask.errors import (
    EndpointNotFound,
    HttpStatusError,
    McptaskError,
    ProtocolViolation,
    ResponseTimeout,
    SessionExpired,
    UnsupportedError,
    UnsupportedVersionError,
)
from mcptask.protocol.handshake import (
    CLIENT_INFO,
    LEGACY_VERSION,
    MODERN_VERSION,
    ServerInfo,
    TaskSupport,
)
from mcptask.protocol.jsonrpc import MODERN_ERROR_CODES

# Versions released before tasks existed: a server that negotiates one of them is reachable
# but has no tasks, which is a capability answer (exit 5), not a protocol violation.
PRE_TASK_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18")

# How long a stdio server gets at most to answer the `server/discover` probe (less when
# --timeout is shorter): some legacy servers ignore requests that come before `initialize`
# instead of answering with an error, and their silence should not cost all of --timeout.
DISCOVER_PROBE_SECONDS = 5.0

META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

Negotiated = tuple[ServerInfo, Era]


def negotiate(wire: Exchange, *, protocol: str, prefer_legacy: bool) -> Negotiated:
    """The handshake `protocol` asks for (auto: discover, and a legacy server's answer leads
    to initialize). `prefer_legacy`: a dual-era server is spoken to in 2025-11-25 (the
    command needs a list or a session)."""
    if protocol == LEGACY_VERSION:
        return initialize(wire)
    fallback = protocol == "auto"
    wire.transport.protocol_version = MODERN_VERSION
    params, headers = MODERN.stamp("server/discover", None)
    stdio = wire.transport.kind == "stdio"
    probe = min(DISCOVER_PROBE_SECONDS, wire.transport.timeout) if stdio else None

    def not_modern(reason: str) -> Negotiated:
        if fallback:
            return _fall_back(wire)
        raise UnsupportedError(f"the server does not speak {MODERN_VERSION}{reason}")

    try:
        # The stdio probe is not retried: a legacy server's silence is its answer.
        answer = wire.request(
            "server/discover", params, headers=headers, timeout=probe, retried=probe is None
        )
    except (HttpStatusError, EndpointNotFound, ResponseTimeout) as exc:
        # A 4xx without a modern error body, or silence on stdio: a legacy server.
        return not_modern(f": {exc.message}")
    error = answer.get("error")
    if isinstance(error, dict) and error.get("code") not in MODERN_ERROR_CODES:
        return not_modern(f" (server/discover: {error.get('code')} {error.get('message', '')})")
    try:
        result = result_of(answer, "server/discover")
    except UnsupportedVersionError as exc:
        if fallback and LEGACY_VERSION in exc.supported:
            return _fall_back(wire)
        raise
    listed = result.get("supportedVersions")
    if not isinstance(listed, list):
        # Not a discover result at all: some lenient legacy servers answer any unknown
        # method with an empty result.
        return not_modern(" (its server/discover result lists no supportedVersions)")
    supported = tuple(version for version in listed if isinstance(version, str))
    # Preferring 2025-11-25 is for auto mode only: a pinned 2026-07-28 stays pinned.
    wants_legacy = fallback and prefer_legacy and LEGACY_VERSION in supported
    if MODERN_VERSION not in supported or wants_legacy:
        if fallback and LEGACY_VERSION in supported:
            return _fall_back(wire)
        raise UnsupportedError(
            f"the server supports protocol versions {', '.join(supported) or 'none'}, "
            f"not {MODERN_VERSION}"
        )
    capabilities = result.get("capabilities")
    if not isinstance(capabilities, dict):
        raise ProtocolViolation("the server's server/discover result has no capabilities")
    info = result.get("serverInfo")
    if not isinstance(info, dict):
        meta = result.get("_meta")
        info = meta.get(META_SERVER_INFO) if isinstance(meta, dict) else None
    support = TaskSupport.from_modern_capabilities(capabilities)
    server = ServerInfo.from_result(result, info, MODERN.name, MODERN_VERSION, support, supported)
    return server, MODERN


def initialize(wire: Exchange) -> Negotiated:
    """The 2025-11-25 handshake: initialize, then notifications/initialized."""
    params = {
        "protocolVersion": LEGACY_VERSION,
        # Elicitation, as in 2026-07-28: a task of this session may ask for input, which
        # `mcptask answer` gives (form or URL) on the stream of tasks/result.
        "capabilities": {"tasks": {}, "elicitation": {"form": {}, "url": {}}},
        "clientInfo": dict(CLIENT_INFO),
    }
    answer = wire.request("initialize", params)
    result = result_of(answer, "initialize")
    version = result.get("protocolVersion")
    if not isinstance(version, str):
        raise ProtocolViolation("the server's initialize result has no protocolVersion")
    if version != LEGACY_VERSION and version not in PRE_TASK_VERSIONS:
        raise UnsupportedError(
            f"the server speaks protocol version {version!r}, which mcptask does not know"
        )
    capabilities = result.get("capabilities")
    if not isinstance(capabilities, dict):
        raise ProtocolViolation("the server's initialize result has no capabilities object")
    wire.transport.protocol_version = version
    try:
        wire.notify("notifications/initialized")
    except SessionExpired:
        raise ProtocolViolation(
            "the server dropped the session it had just created (HTTP 404)"
        ) from None
    support = (
        TaskSupport.from_legacy_capabilities(capabilities)
        if version == LEGACY_VERSION
        else TaskSupport()
    )
    server = ServerInfo.from_result(result, result.get("serverInfo"), LEGACY.name, version, support)
    return server, LEGACY


def survey(wire: Exchange, primary: ServerInfo) -> tuple[list[ServerInfo], list[str]]:
    """What a dual-era server offers in 2025-11-25 when 2026-07-28 was negotiated, and any
    problem met asking; the transport is left as it was."""
    listed = primary.supported_versions
    if primary.protocol_version != MODERN_VERSION or LEGACY_VERSION not in listed:
        return [], []
    wire.transport.protocol_version = None
    try:
        legacy, _ = initialize(wire)
    except McptaskError as exc:
        # It listed the version but will not speak it: the primary era still stands.
        return [], [f"the server lists {LEGACY_VERSION} but its initialize failed: {exc.message}"]
    finally:
        wire.transport.end_session()
        wire.transport.reset_session()
        wire.transport.protocol_version = MODERN_VERSION
    return [legacy], []


def _fall_back(wire: Exchange) -> Negotiated:
    wire.transport.protocol_version = None
    wire.transport.reset_session()
    return initialize(wire)

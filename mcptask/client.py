"""The MCP client: handshake, negotiated capabilities, the capability gate, typed task calls."""

from __future__ import annotations

import itertools
import secrets
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from mcptask.errors import (
    HttpStatusError,
    ProtocolViolation,
    ResponseTimeout,
    RpcError,
    SessionGone,
    UnsupportedError,
    UsageError,
)
from mcptask.protocol import (
    CLIENT_INFO,
    HEADER_MISMATCH,
    LEGACY_ERA,
    LEGACY_VERSION,
    METHOD_NOT_FOUND,
    MISSING_CLIENT_CAPABILITY,
    MODERN_ERA,
    MODERN_ERROR_CODES,
    MODERN_VERSION,
    UNSUPPORTED_PROTOCOL_VERSION,
    JsonObject,
    Task,
    TaskPage,
    TaskSupport,
    encode_header_value,
    modern_meta,
    notification_message,
    request_message,
)
from mcptask.transport import NotificationHandler, SessionExpired, Transport
from mcptask.transport.http import HttpTransport

# Versions released before tasks existed: a server that negotiates one of them is reachable
# but has no tasks, which is a capability answer (exit 5), not a protocol violation.
PRE_TASK_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18")

# How long a stdio server gets to answer the `server/discover` probe: some legacy servers
# ignore requests that come before `initialize` instead of answering with an error.
DISCOVER_PROBE_SECONDS = 5.0

META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"

Operation = Literal["get", "list", "cancel"]
_METHOD_OF: dict[Operation, str] = {
    "get": "tasks/get",
    "list": "tasks/list",
    "cancel": "tasks/cancel",
}


class UnsupportedVersionError(UnsupportedError):
    """The server rejected our protocol version; `supported` lists the ones it speaks."""

    def __init__(self, message: str, *, supported: tuple[str, ...]) -> None:
        super().__init__(message)
        self.supported = supported


@dataclass(frozen=True)
class ServerInfo:
    """What the handshake told us about the server."""

    name: str
    version: str
    protocol_version: str
    era: str
    capabilities: JsonObject
    task_support: TaskSupport
    instructions: str | None = None
    title: str | None = None
    supported_versions: tuple[str, ...] = ()

    @classmethod
    def from_result(
        cls,
        result: JsonObject,
        info: object,
        *,
        protocol_version: str,
        era: str,
        capabilities: JsonObject,
        task_support: TaskSupport,
        supported_versions: tuple[str, ...] = (),
    ) -> ServerInfo:
        """Read the server's identity and instructions from a handshake result."""
        identity: JsonObject = info if isinstance(info, dict) else {}
        title = identity.get("title")
        instructions = result.get("instructions")
        return cls(
            name=str(identity.get("name", "")),
            version=str(identity.get("version", "")),
            title=title if isinstance(title, str) else None,
            protocol_version=protocol_version,
            era=era,
            capabilities=capabilities,
            task_support=task_support,
            instructions=instructions if isinstance(instructions, str) else None,
            supported_versions=supported_versions,
        )

    @property
    def extensions(self) -> tuple[str, ...]:
        """The extension identifiers the server advertises (modern era)."""
        extensions = self.capabilities.get("extensions")
        return tuple(extensions) if isinstance(extensions, dict) else ()


class McpClient:
    """One connection to one MCP server, over any transport."""

    def __init__(
        self, transport: Transport, *, protocol: str = "auto", needs_list: bool = False
    ) -> None:
        self.transport = transport
        self.protocol = protocol
        """`auto` (discover, fall back to initialize), or the one version to speak."""
        self.needs_list = needs_list
        """The command reads `tasks/list`: in auto mode, a dual-era server is then spoken to
        in 2025-11-25, the era that has a list."""
        self._counter = itertools.count(1)
        self._id_prefix: str | None = None
        self._server: ServerInfo | None = None
        self._joined_session: str | None = None

    # -- connection -----------------------------------------------------------------------------

    def connect(self, *, join_session: str | None = None) -> ServerInfo:
        """Perform the handshake; with `join_session`, then move into that existing session.

        The capabilities are learned in a short session of our own (which we end again),
        because joining a session skips its initialize.
        """
        if join_session is not None and not isinstance(self.transport, HttpTransport):
            raise UsageError("--session-id needs a Streamable HTTP server (--url)")
        if self.protocol == LEGACY_VERSION:
            server = self._handshake()
        else:
            # A session to join, or a list to read, exist only in 2025-11-25: a dual-era
            # server is then spoken to in that era.
            prefer_legacy = self.needs_list or join_session is not None
            server = self._discover(fallback=self.protocol == "auto", prefer_legacy=prefer_legacy)
        if join_session is not None and server.era == MODERN_ERA:
            raise UsageError(
                "--session-id applies to 2025-11-25 servers; this one speaks 2026-07-28, "
                "which has no sessions"
            )
        if join_session is not None:
            assert isinstance(self.transport, HttpTransport)
            self.transport.end_session()
            self.transport.join_session(join_session)
            self._joined_session = join_session
            # The session's owner numbers its requests 1, 2, 3... too, and servers match
            # answers by id within a session: ids of our own keep both sides' answers apart.
            self._id_prefix = f"mcptask-{secrets.token_hex(4)}-"
        return server

    @property
    def server(self) -> ServerInfo:
        """The server met in the handshake (connect first)."""
        if self._server is None:
            raise RuntimeError("connect() has not been called")
        return self._server

    def set_notification_handler(self, handler: NotificationHandler | None) -> None:
        """Receive the server's notifications (status pushes) as they arrive."""
        self.transport.set_notification_handler(handler)

    def follow_status_pushes(self, task_ids: list[str], stop: threading.Event) -> None:
        """Ask the server to push task status changes, until `stop` (blocks on HTTP).

        2025-11-25 over HTTP: the session's GET stream. 2026-07-28: `subscriptions/listen`
        for `task_ids`. stdio in 2025-11-25 needs nothing: pushes arrive on stdout anyway.
        Pushes reach the notification handler; failures are silent (polling is the baseline).
        """
        if self.server.era == MODERN_ERA:
            if not task_ids:
                return
            params, headers = _modern_request(
                "subscriptions/listen", {"notifications": {"taskIds": list(task_ids)}}
            )
            message = request_message(self._next_id(), "subscriptions/listen", params)
            self.transport.subscribe(message, headers=headers, stop=stop)
        elif isinstance(self.transport, HttpTransport) and self._joined_session is None:
            # Not in a joined session: each message goes to one stream, and the session's
            # owner may be listening on its own.
            self.transport.listen(stop)

    def close(self) -> None:
        """End the session if we created it and release the transport."""
        self.transport.close()

    # -- the capability gate --------------------------------------------------------------------

    def require(self, operation: Operation) -> None:
        """Stop before sending anything when the server did not offer `operation`."""
        server = self.server
        support = server.task_support
        if not support.tasks:
            raise UnsupportedError(
                f"the server offers no tasks (protocol {server.protocol_version}, "
                "no tasks capability)"
            )
        if operation == "get" or getattr(support, operation):
            return
        if operation == "list" and server.era == MODERN_ERA:
            raise UnsupportedError(
                "this server speaks MCP 2026-07-28, where tasks have no list (there is no "
                "tasks/list); give task ids as arguments, with --from-file FILE, or '-' for stdin"
            )
        offered = ", ".join(support.offered()) or "nothing"
        raise UnsupportedError(
            f"the server does not offer {_METHOD_OF[operation]} "
            f"(its tasks capability offers: {offered})"
        )

    # -- task calls -----------------------------------------------------------------------------

    def get_task(self, task_id: str) -> Task:
        """`tasks/get` for one task."""
        self.require("get")
        result = self.call("tasks/get", {"taskId": task_id})
        return Task.from_result(result, method="tasks/get")

    def iter_tasks(self) -> Iterator[Task]:
        """Every task from `tasks/list`, following `nextCursor` page after page."""
        self.require("list")
        cursor: str | None = None
        seen_cursors: set[str] = set()
        while True:
            page = TaskPage.from_result(
                self.call("tasks/list", {"cursor": cursor} if cursor else {})
            )
            yield from page.tasks
            if page.next_cursor is None:
                return
            if page.next_cursor in seen_cursors:
                raise ProtocolViolation("the server's tasks/list cursors loop back on themselves")
            seen_cursors.add(page.next_cursor)
            cursor = page.next_cursor

    def cancel_task(self, task_id: str) -> Task | None:
        """`tasks/cancel` for one task: the task as the server says it now is (2025-11-25),
        or None for a bare acknowledgement (2026-07-28), whose outcome only polling tells."""
        self.require("cancel")
        result = self.call("tasks/cancel", {"taskId": task_id})
        if "taskId" not in result and not isinstance(result.get("task"), dict):
            return None
        return Task.from_result(result, method="tasks/cancel")

    # -- JSON-RPC -------------------------------------------------------------------------------

    def call(self, method: str, params: JsonObject | None = None) -> JsonObject:
        """Send a request and return its result; a lost session is re-initialized once."""
        try:
            return self._call_once(method, params)
        except SessionExpired:
            if self._joined_session is not None:
                raise SessionGone(
                    f"session {self._joined_session} has ended on the server "
                    "(its tasks ended with it)"
                ) from None
            self.transport.reset_session()
            self._handshake()
            try:
                return self._call_once(method, params)
            except SessionExpired:
                raise ProtocolViolation(
                    "the server dropped the new session at once (HTTP 404 again)"
                ) from None

    def _next_id(self) -> int | str:
        number = next(self._counter)
        return number if self._id_prefix is None else f"{self._id_prefix}{number}"

    def _call_once(self, method: str, params: JsonObject | None) -> JsonObject:
        headers: dict[str, str] | None = None
        if self._server is not None and self._server.era == MODERN_ERA:
            params, headers = _modern_request(method, params)
        answer = self.transport.request(
            request_message(self._next_id(), method, params), headers=headers
        )
        return _result_of(answer, method)

    def _discover(self, *, fallback: bool, prefer_legacy: bool = False) -> ServerInfo:
        """The 2026-07-28 way in: `server/discover`; with `fallback`, a legacy server's
        answer leads to the `initialize` handshake instead."""
        self.transport.protocol_version = MODERN_VERSION
        params, headers = _modern_request("server/discover", None)
        message = request_message(self._next_id(), "server/discover", params)
        probe = DISCOVER_PROBE_SECONDS if self.transport.kind == "stdio" else None
        try:
            answer = self.transport.request(message, headers=headers, timeout=probe)
        except (HttpStatusError, ResponseTimeout) as exc:
            # A 4xx without a modern error body, or silence on stdio: a legacy server.
            if fallback:
                return self._fall_back()
            raise UnsupportedError(
                f"the server does not speak {MODERN_VERSION}: {exc.message}"
            ) from None
        error = answer.get("error")
        if isinstance(error, dict) and error.get("code") not in MODERN_ERROR_CODES:
            if fallback:
                return self._fall_back()
            raise UnsupportedError(
                f"the server does not speak {MODERN_VERSION} (server/discover: "
                f"{error.get('code')} {error.get('message', '')})"
            )
        try:
            result = _result_of(answer, "server/discover")
        except UnsupportedVersionError as exc:
            if fallback and LEGACY_VERSION in exc.supported:
                return self._fall_back()
            raise
        listed = result.get("supportedVersions")
        listed = listed if isinstance(listed, list) else []
        supported = tuple(version for version in listed if isinstance(version, str))
        if MODERN_VERSION not in supported or (prefer_legacy and LEGACY_VERSION in supported):
            if fallback and LEGACY_VERSION in supported:
                return self._fall_back()
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
        self._server = ServerInfo.from_result(
            result,
            info,
            protocol_version=MODERN_VERSION,
            era=MODERN_ERA,
            capabilities=capabilities,
            task_support=TaskSupport.from_modern_capabilities(capabilities),
            supported_versions=supported,
        )
        return self._server

    def _fall_back(self) -> ServerInfo:
        """Forget the modern attempt and perform the legacy handshake."""
        self.transport.protocol_version = None
        self.transport.reset_session()
        return self._handshake()

    def _handshake(self) -> ServerInfo:
        """The 2025-11-25 handshake: initialize, read the answer, notifications/initialized."""
        result = self._call_once(
            "initialize",
            {
                "protocolVersion": LEGACY_VERSION,
                "capabilities": {"tasks": {}},
                "clientInfo": dict(CLIENT_INFO),
            },
        )
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
        support = (
            TaskSupport.from_legacy_capabilities(capabilities)
            if version == LEGACY_VERSION
            else TaskSupport(tasks=False, list=False, cancel=False, tool_calls=False)
        )
        self.transport.protocol_version = version
        try:
            self.transport.notify(notification_message("notifications/initialized"))
        except SessionExpired:
            raise ProtocolViolation(
                "the server dropped the session it had just created (HTTP 404)"
            ) from None
        self._server = ServerInfo.from_result(
            result,
            result.get("serverInfo"),
            protocol_version=version,
            era=LEGACY_ERA,
            capabilities=capabilities,
            task_support=support,
        )
        return self._server


def _modern_request(method: str, params: JsonObject | None) -> tuple[JsonObject, dict[str, str]]:
    """Params with the modern `_meta`, and the HTTP headers that mirror the body."""
    params = dict(params or {})
    meta = params.get("_meta")
    params["_meta"] = {**(meta if isinstance(meta, dict) else {}), **modern_meta()}
    headers = {"Mcp-Method": method}
    name = params.get("taskId") if method.startswith("tasks/") else params.get("name")
    if isinstance(name, str) and (method.startswith("tasks/") or method == "tools/call"):
        headers["Mcp-Name"] = encode_header_value(name)
    return params, headers


def _result_of(answer: JsonObject, method: str) -> JsonObject:
    """The result of an answer, or the error it carries as the right mcptask error."""
    error = answer.get("error")
    if isinstance(error, dict):
        code = error.get("code")
        message = str(error.get("message", ""))
        data = error.get("data")
        if code == METHOD_NOT_FOUND and method.startswith("tasks/"):
            raise UnsupportedError(f"the server does not support {method} ({code}: {message})")
        if code == UNSUPPORTED_PROTOCOL_VERSION:
            listed = data.get("supported") if isinstance(data, dict) else None
            supported = tuple(str(v) for v in listed) if isinstance(listed, list) else ()
            asked = data.get("requested") if isinstance(data, dict) else None
            raise UnsupportedVersionError(
                f"the server does not support protocol version {asked or 'asked for'} "
                f"({method}); it supports: {', '.join(supported) or 'nothing it named'}",
                supported=supported,
            )
        if code == MISSING_CLIENT_CAPABILITY:
            raise UnsupportedError(
                f"the server requires client capabilities mcptask does not have for {method}: "
                f"{data.get('requiredCapabilities') if isinstance(data, dict) else message}"
            )
        if code == HEADER_MISMATCH:
            raise ProtocolViolation(
                f"the server says the HTTP headers do not match the {method} request: {message}"
            )
        raise RpcError(int(code) if isinstance(code, int) else 0, message, data)
    result = answer.get("result")
    if not isinstance(result, dict):
        raise ProtocolViolation(f"the server's result for {method} is not an object")
    return result

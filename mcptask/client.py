"""The MCP client: handshake, negotiated capabilities, the capability gate, typed task calls."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Literal

from mcptask.errors import (
    ProtocolViolation,
    RpcError,
    SessionGone,
    UnsupportedError,
    UsageError,
)
from mcptask.protocol import (
    CLIENT_INFO,
    LEGACY_ERA,
    LEGACY_VERSION,
    METHOD_NOT_FOUND,
    JsonObject,
    Task,
    TaskPage,
    TaskSupport,
    notification_message,
    request_message,
)
from mcptask.transport import NotificationHandler, SessionExpired, Transport
from mcptask.transport.http import HttpTransport

# Versions released before tasks existed: a server that negotiates one of them is reachable
# but has no tasks, which is a capability answer (exit 5), not a protocol violation.
PRE_TASK_VERSIONS = ("2024-11-05", "2025-03-26", "2025-06-18")

Operation = Literal["get", "list", "cancel"]
_METHOD_OF: dict[Operation, str] = {
    "get": "tasks/get",
    "list": "tasks/list",
    "cancel": "tasks/cancel",
}


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
    raw_server_info: JsonObject = field(default_factory=dict)


class McpClient:
    """One connection to one MCP server, over any transport."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self._ids = itertools.count(1)
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
        server = self._handshake()
        if join_session is not None:
            assert isinstance(self.transport, HttpTransport)
            self.transport.end_session()
            self.transport.join_session(join_session)
            self._joined_session = join_session
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

    def cancel_task(self, task_id: str) -> Task:
        """`tasks/cancel` for one task; the task as the server says it now is."""
        self.require("cancel")
        result = self.call("tasks/cancel", {"taskId": task_id})
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

    def _call_once(self, method: str, params: JsonObject | None) -> JsonObject:
        answer = self.transport.request(request_message(next(self._ids), method, params))
        error = answer.get("error")
        if isinstance(error, dict):
            code = error.get("code")
            message = str(error.get("message", ""))
            if code == METHOD_NOT_FOUND and method.startswith("tasks/"):
                raise UnsupportedError(f"the server does not support {method} ({code}: {message})")
            raise RpcError(int(code) if isinstance(code, int) else 0, message, error.get("data"))
        result = answer.get("result")
        if not isinstance(result, dict):
            raise ProtocolViolation(f"the server's result for {method} is not an object")
        return result

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
        info = result.get("serverInfo")
        info = info if isinstance(info, dict) else {}
        support = (
            TaskSupport.from_legacy_capabilities(capabilities)
            if version == LEGACY_VERSION
            else TaskSupport(tasks=False, list=False, cancel=False, tool_calls=False)
        )
        self.transport.protocol_version = version
        self.transport.notify(notification_message("notifications/initialized"))
        instructions = result.get("instructions")
        self._server = ServerInfo(
            name=str(info.get("name", "")),
            version=str(info.get("version", "")),
            title=str(info["title"]) if isinstance(info.get("title"), str) else None,
            protocol_version=version,
            era=LEGACY_ERA,
            capabilities=capabilities,
            task_support=support,
            instructions=instructions if isinstance(instructions, str) else None,
            raw_server_info=info,
        )
        return self._server

"""The two protocol eras as strategies: everything that differs between 2025-11-25 and 2026-07-28.

The era is chosen once, at negotiation (`negotiate.py`), and kept by the client. It stamps
every request (the 2026-07-28 `_meta` and mirroring headers), reads what the server's
capabilities offer, reads the answer to a cancel, says why an operation is missing, joins
sessions (2025-11-25 only) and follows status pushes. Nothing above the client asks which era
it speaks.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, Literal

from mcptask.errors import UnsupportedError, UsageError
from mcptask.protocol import (
    LEGACY_ERA,
    LEGACY_VERSION,
    MODERN_ERA,
    MODERN_VERSION,
    CancelAnswer,
    JsonObject,
    Task,
    TaskSupport,
    encode_header_value,
    modern_meta,
)
from mcptask.transport import Transport

if TYPE_CHECKING:
    from mcptask.client.session import McpClient

Operation = Literal["get", "list", "cancel"]
METHOD_OF: dict[Operation, str] = {
    "get": "tasks/get",
    "list": "tasks/list",
    "cancel": "tasks/cancel",
}

Stamped = tuple[JsonObject | None, dict[str, str] | None]
"""A request's params and per-request HTTP headers, as the era sends them."""


class Era(ABC):
    """How one protocol era speaks to a server, after the handshake chose it."""

    name: str
    """`legacy` or `modern`, for display."""

    def __init__(self, version: str) -> None:
        self.version = version
        """The negotiated protocol version."""

    @abstractmethod
    def stamp(self, method: str, params: JsonObject | None) -> Stamped:
        """The params and headers with which `method` goes out in this era."""

    @abstractmethod
    def task_support(self, capabilities: JsonObject) -> TaskSupport:
        """Which task operations the negotiated capabilities offer."""

    def read_cancel(self, task_id: str, result: JsonObject) -> CancelAnswer:
        """The answer to an accepted `tasks/cancel`, read tolerantly in both eras: the task
        when the answer carries one (flat, or wrapped in `task`), else an acknowledgement."""
        if "taskId" not in result and not isinstance(result.get("task"), dict):
            return CancelAnswer(task_id, None)
        return CancelAnswer(task_id, Task.from_result(result, method="tasks/cancel"))

    def missing(self, operation: Operation, support: TaskSupport) -> UnsupportedError:
        """The error for an operation the server's tasks capability does not offer."""
        offered = ", ".join(support.offered()) or "nothing"
        return UnsupportedError(
            f"the server does not offer {METHOD_OF[operation]} "
            f"(its tasks capability offers: {offered})"
        )

    @abstractmethod
    def join_session(self, transport: Transport, session_id: str) -> None:
        """Move into an existing session (ending the short one of our own handshake)."""

    @abstractmethod
    def follow_status_pushes(
        self, client: McpClient, task_ids: list[str], stop: threading.Event
    ) -> None:
        """Have the server push status changes of `task_ids` to the client, until `stop`."""


class LegacyEra(Era):
    """MCP 2025-11-25: initialize, sessions, tasks in the core protocol, `tasks/list`.

    Also stands for the versions before tasks existed (2024-11-05 to 2025-06-18), which the
    handshake may negotiate: the server is reachable but offers no tasks.
    """

    name = LEGACY_ERA

    def stamp(self, method: str, params: JsonObject | None) -> Stamped:
        """Requests go out as they are: the session carries the version."""
        return params, None

    def task_support(self, capabilities: JsonObject) -> TaskSupport:
        """`capabilities.tasks` and its sub-capabilities (none before 2025-11-25)."""
        if self.version != LEGACY_VERSION:
            return TaskSupport(tasks=False, list=False, cancel=False, tool_calls=False)
        return TaskSupport.from_legacy_capabilities(capabilities)

    def join_session(self, transport: Transport, session_id: str) -> None:
        """End our handshake's session, then send later requests in the given one."""
        transport.end_session()
        transport.join_session(session_id)

    def follow_status_pushes(
        self, client: McpClient, task_ids: list[str], stop: threading.Event
    ) -> None:
        """`notifications/tasks/status` arrive on the transport's own stream."""
        client.listen(stop)


class ModernEra(Era):
    """MCP 2026-07-28 with the `io.modelcontextprotocol/tasks` extension: stateless requests
    that carry their version and capabilities in `_meta`; no sessions and no `tasks/list`."""

    name = MODERN_ERA

    def __init__(self, version: str = MODERN_VERSION) -> None:
        super().__init__(version)

    def stamp(self, method: str, params: JsonObject | None) -> Stamped:
        """Params with the modern `_meta`, and the HTTP headers that mirror the body."""
        stamped = dict(params or {})
        meta = stamped.get("_meta")
        stamped["_meta"] = {**(meta if isinstance(meta, dict) else {}), **modern_meta()}
        headers = {"Mcp-Method": method}
        name = stamped.get("taskId") if method.startswith("tasks/") else stamped.get("name")
        if isinstance(name, str) and (method.startswith("tasks/") or method == "tools/call"):
            headers["Mcp-Name"] = encode_header_value(name)
        return stamped, headers

    def task_support(self, capabilities: JsonObject) -> TaskSupport:
        """The tasks extension among `capabilities.extensions`."""
        return TaskSupport.from_modern_capabilities(capabilities)

    def missing(self, operation: Operation, support: TaskSupport) -> UnsupportedError:
        """A missing list is this era's design, not the server's choice: say so."""
        if operation == "list":
            return UnsupportedError(
                "this server speaks MCP 2026-07-28, where tasks have no list (there is no "
                "tasks/list); give task ids as arguments, with --from-file FILE, or '-' for stdin"
            )
        return super().missing(operation, support)

    def join_session(self, transport: Transport, session_id: str) -> None:
        """There are no sessions to join in this era."""
        raise UsageError(
            "--session-id applies to 2025-11-25 servers; this one speaks 2026-07-28, "
            "which has no sessions"
        )

    def follow_status_pushes(
        self, client: McpClient, task_ids: list[str], stop: threading.Event
    ) -> None:
        """`subscriptions/listen` for the given tasks; `notifications/tasks` come back."""
        if task_ids:
            client.subscribe(
                "subscriptions/listen", {"notifications": {"taskIds": list(task_ids)}}, stop
            )

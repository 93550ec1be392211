"""The two protocol eras as strategies: everything that differs between 2025-11-25 and 2026-07-28.

The era is chosen once, at negotiation (`negotiate.py`), and kept by the client. An era
describes requests and reads answers; it never sends anything itself. Nothing above the
client asks which era it speaks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from mcptask.errors import NoTaskList, TaskCallForbidden, UnsupportedError
from mcptask.protocol.handshake import (
    LEGACY_ERA,
    MODERN_ERA,
    TaskSupport,
    encode_header_value,
    modern_meta,
)
from mcptask.protocol.jsonrpc import JsonObject
from mcptask.protocol.tasks import (
    TASK_SUPPORT_OPTIONAL,
    TASK_SUPPORT_REQUIRED,
    Task,
    TaskOutcome,
    ToolCallAnswer,
    ToolInfo,
)

Operation = Literal["get", "list", "cancel", "tool_calls", "update"]
METHOD_OF: dict[Operation, str] = {
    "get": "tasks/get",
    "list": "tasks/list",
    "cancel": "tasks/cancel",
    "tool_calls": "task-augmented tools/call",
    "update": "tasks/update",
}

Stamped = tuple[JsonObject | None, dict[str, str] | None]
"""A request's params and per-request HTTP headers, as the era sends them."""

GIVE_IDS = "give task ids as arguments, with --from-file FILE, or '-' for stdin"
"""What to do instead of listing, in both eras' refusals."""


class _Shared:
    """What both eras do alike; `by_design` and the other attributes are set per era."""

    by_design: Mapping[Operation, str] = {}
    """Why this era has no such operation at all: its design, not the server's choice."""
    asks_by_request = False
    """How a task that waits for input asks: in its `tasks/get` (`inputRequests`, answered by
    `tasks/update`), or (True) with requests of its own that the server sends the client."""
    ttl_note: str | None = None
    """Why a requested ttl cannot be sent in this era, if it cannot."""
    result_method: str | None = None
    """The request that fetches a finished task's outcome, None when the task carries it."""
    join_refusal: str | None = None
    """Why an existing session cannot be joined in this era, None when it can."""

    def read_cancel(self, result: JsonObject) -> Task | None:
        """The task an accepted `tasks/cancel` answered with (flat, or wrapped in `task`), or
        None for an acknowledgement only (2026-07-28), whose outcome polling tells."""
        if "taskId" not in result and not isinstance(result.get("task"), dict):
            return None
        return Task.from_result(result, method="tasks/cancel")

    def missing(self, operation: Operation, support: TaskSupport) -> UnsupportedError:
        """The error for an operation the server's tasks capability does not offer."""
        message = self.by_design.get(operation)
        if message is None:
            offered = ", ".join(support.offered()) or "nothing"
            message = (
                f"the server does not offer {METHOD_OF[operation]} "
                f"(its tasks capability offers: {offered})"
            )
            if operation == "list":
                message = f"{message}; {GIVE_IDS}"
        return NoTaskList(message) if operation == "list" else UnsupportedError(message)

    def read_tool_call(self, result: JsonObject) -> ToolCallAnswer:
        """The answer to a task-augmented `tools/call`: a task (wrapped in `task` as in
        2025-11-25, or flat with `resultType: "task"` as in 2026-07-28: either is read in
        either era), else the tool's own result, run at once."""
        if isinstance(result.get("task"), dict) or (
            result.get("resultType") == "task" and "taskId" in result
        ):
            return ToolCallAnswer(Task.from_result(result, method="tools/call"), None)
        return ToolCallAnswer(None, result)

    def inline_outcome(self, task: Task) -> TaskOutcome:
        """How a finished task ended, read from the task itself (its `result` or `error`)."""
        result, error = task.extra.get("result"), task.extra.get("error")
        return TaskOutcome(
            task.taskId,
            task.status,
            result if isinstance(result, dict) else None,
            error if isinstance(error, dict) else None,
        )


class LegacyEra(_Shared):
    """MCP 2025-11-25: initialize, sessions, tasks in the core protocol, `tasks/list`; also
    the versions before tasks existed, which the handshake may negotiate (then no tasks)."""

    name = LEGACY_ERA
    handle_generation = "v1"
    """The generation of this era's task handles in the official tasks library (ext-tasks)."""
    by_design: Mapping[Operation, str] = {
        "update": (
            "this server speaks MCP 2025-11-25, where a task asks for input with requests of "
            "its own (elicitation/create), answered by JSON-RPC responses, not tasks/update"
        )
    }
    asks_by_request = True
    result_method = "tasks/result"

    def stamp(self, method: str, params: JsonObject | None) -> Stamped:
        return params, None  # as they are: the session carries the version

    def task_call_params(self, name: str, arguments: JsonObject, ttl_ms: int | None) -> JsonObject:
        """`params.task` asks for a task, with the requested ttl (else the server's)."""
        task: JsonObject = {} if ttl_ms is None else {"ttl": ttl_ms}
        return {"name": name, "arguments": arguments, "task": task}

    def check_tool(self, tool: ToolInfo) -> None:
        """`execution.taskSupport` must be `optional` or `required`; absent means forbidden."""
        if tool.task_support in (TASK_SUPPORT_OPTIONAL, TASK_SUPPORT_REQUIRED):
            return
        said = tool.task_support or "absent, which means forbidden"
        raise TaskCallForbidden(
            f"tool {tool.name!r} does not take task-augmented calls "
            f"(its execution.taskSupport: {said}); nothing was sent"
        )

    def push_request(self, task_ids: list[str]) -> tuple[str, JsonObject] | None:
        """The request after which the server pushes status changes of `task_ids`, None when
        they arrive unasked on the session's own stream (2025-11-25)."""
        return None


class ModernEra(_Shared):
    """MCP 2026-07-28 with the `io.modelcontextprotocol/tasks` extension: stateless requests
    that carry their version and capabilities in `_meta`; no sessions and no `tasks/list`."""

    name = MODERN_ERA
    handle_generation = "v2"
    by_design: Mapping[Operation, str] = {
        "list": (
            "this server speaks MCP 2026-07-28, where tasks have no list (there is no "
            f"tasks/list); {GIVE_IDS}"
        )
    }
    join_refusal = (
        "--session-id applies to 2025-11-25 servers; this one speaks 2026-07-28, "
        "which has no sessions"
    )
    ttl_note = "2026-07-28 has no way to ask for a ttl (the server decides): --ttl was not sent"

    def stamp(self, method: str, params: JsonObject | None) -> Stamped:
        """With the modern `_meta`, and the HTTP headers that mirror the body."""
        stamped = dict(params or {})
        meta = stamped.get("_meta")
        stamped["_meta"] = {**(meta if isinstance(meta, dict) else {}), **modern_meta()}
        headers = {"Mcp-Method": method}
        name = stamped.get("taskId") if method.startswith("tasks/") else stamped.get("name")
        if isinstance(name, str) and (method.startswith("tasks/") or method == "tools/call"):
            headers["Mcp-Name"] = encode_header_value(name)
        return stamped, headers

    def task_call_params(self, name: str, arguments: JsonObject, ttl_ms: int | None) -> JsonObject:
        """A plain call: declaring the extension (in `_meta`) is the whole request for a task;
        the server decides per call whether to make one, and its ttl."""
        return {"name": name, "arguments": arguments}

    def check_tool(self, tool: ToolInfo) -> None:
        """Nothing to check: tools carry no task support here; the server decides per call."""

    def push_request(self, task_ids: list[str]) -> tuple[str, JsonObject] | None:
        return "subscriptions/listen", {"notifications": {"taskIds": list(task_ids)}}


Era = LegacyEra | ModernEra
"""How one protocol era speaks to a server, after the handshake chose it."""
LEGACY, MODERN = LegacyEra(), ModernEra()

"""The two protocol eras: everything that differs between 2025-11-25 and 2026-07-28. An era
describes requests and reads answers; it never sends anything. Nothing above the client asks
which era it speaks."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
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
from mcptask.protocol.tasks import Task, TaskOutcome, ToolCallAnswer, ToolInfo

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


@dataclass(frozen=True)
class Era:
    """How one protocol era speaks to a server, after the handshake chose it."""

    name: str
    handle_generation: str  # of task handles in the official tasks library (ext-tasks)
    stateless: bool
    """Requests carry their version and capabilities in `_meta` (2026-07-28), not a session."""
    by_design: Mapping[Operation, str]
    """Why this era has no such operation at all (not the server's choice)."""
    asks_by_request: bool = False
    """How a task that waits for input asks: in its `tasks/get` (`inputRequests`, answered by
    `tasks/update`), or (True) with requests of its own that the server sends the client."""
    ttl_note: str | None = None  # why a requested ttl cannot be sent, if it cannot
    result_method: str | None = None
    """The request that fetches a finished task's outcome, None when the task carries it."""
    join_refusal: str | None = None  # why an existing session cannot be joined, if it cannot

    def stamp(self, method: str, params: JsonObject | None) -> Stamped:
        """2026-07-28: with the modern `_meta`, and the HTTP headers that mirror the body;
        2025-11-25: as they are (the session carries the version)."""
        if not self.stateless:
            return params, None
        stamped = dict(params or {})
        meta = stamped.get("_meta")
        stamped["_meta"] = {**(meta if isinstance(meta, dict) else {}), **modern_meta()}
        headers = {"Mcp-Method": method}
        name = stamped.get("taskId") if method.startswith("tasks/") else stamped.get("name")
        if isinstance(name, str) and (method.startswith("tasks/") or method == "tools/call"):
            headers["Mcp-Name"] = encode_header_value(name)
        return stamped, headers

    def task_call_params(self, name: str, arguments: JsonObject, ttl_ms: int | None) -> JsonObject:
        """2025-11-25: `params.task` asks for a task, with the requested ttl (else the
        server's). 2026-07-28: a plain call; declaring the extension (in `_meta`) is the whole
        request for a task, and the server decides per call whether to make one, and its ttl."""
        params: JsonObject = {"name": name, "arguments": arguments}
        if not self.stateless:
            params["task"] = {} if ttl_ms is None else {"ttl": ttl_ms}
        return params

    def check_tool(self, tool: ToolInfo) -> None:
        """2025-11-25: `execution.taskSupport` must be `optional` or `required`; absent means
        forbidden. 2026-07-28 tools carry no task support: the server decides per call."""
        if self.stateless or tool.task_support in ("optional", "required"):
            return
        said = tool.task_support or "absent, which means forbidden"
        raise TaskCallForbidden(
            f"tool {tool.name!r} does not take task-augmented calls "
            f"(its execution.taskSupport: {said}); nothing was sent"
        )

    def push_request(self, task_ids: list[str]) -> tuple[str, JsonObject] | None:
        """The request after which the server pushes status changes of `task_ids`, None when
        they arrive unasked on the session's own stream (2025-11-25)."""
        if not self.stateless:
            return None
        return "subscriptions/listen", {"notifications": {"taskIds": list(task_ids)}}

    def read_cancel(self, result: JsonObject) -> Task | None:
        """The task an accepted `tasks/cancel` answered with (flat, or wrapped in `task`), or
        None for an acknowledgement only (2026-07-28), whose outcome polling tells."""
        if "taskId" not in result and not isinstance(result.get("task"), dict):
            return None
        return Task.from_result(result, method="tasks/cancel")

    def missing(self, operation: Operation, support: TaskSupport) -> UnsupportedError:
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
        """How a finished task ended, read from its `result` or `error`."""
        result, error = task.extra.get("result"), task.extra.get("error")
        return TaskOutcome(
            task.taskId,
            task.status,
            result if isinstance(result, dict) else None,
            error if isinstance(error, dict) else None,
        )


LEGACY = Era(
    # MCP 2025-11-25: initialize, sessions, tasks in the core protocol, `tasks/list`; also the
    # versions before tasks existed, which the handshake may negotiate (then no tasks).
    name=LEGACY_ERA,
    handle_generation="v1",
    stateless=False,
    by_design={
        "update": (
            "this server speaks MCP 2025-11-25, where a task asks for input with requests of "
            "its own (elicitation/create), answered by JSON-RPC responses, not tasks/update"
        )
    },
    asks_by_request=True,
    result_method="tasks/result",
)
MODERN = Era(
    # MCP 2026-07-28 with the `io.modelcontextprotocol/tasks` extension: stateless requests;
    # no sessions and no `tasks/list`.
    name=MODERN_ERA,
    handle_generation="v2",
    stateless=True,
    by_design={
        "list": (
            "this server speaks MCP 2026-07-28, where tasks have no list (there is no "
            f"tasks/list); {GIVE_IDS}"
        )
    },
    ttl_note="2026-07-28 has no way to ask for a ttl (the server decides): --ttl was not sent",
    join_refusal=(
        "--session-id applies to 2025-11-25 servers; this one speaks 2026-07-28, "
        "which has no sessions"
    ),
)

"""Wire models of tool calls: `tools/list` entries, the answer to a task-augmented
`tools/call`, and how a finished task ended."""

from __future__ import annotations

from dataclasses import dataclass

from mcptask.errors import ProtocolViolation
from mcptask.protocol.jsonrpc import JsonObject
from mcptask.protocol.tasks import CANCELLED, FAILED, Task

TASK_SUPPORT_OPTIONAL = "optional"
TASK_SUPPORT_REQUIRED = "required"


@dataclass(frozen=True)
class ToolInfo:
    """One tool as `tools/list` describes it: what `start` needs to gate and validate a call."""

    name: str
    input_schema: JsonObject | None
    task_support: str | None
    """`execution.taskSupport` as sent, None when absent."""

    @classmethod
    def from_wire(cls, value: object) -> ToolInfo:
        """Read one entry of `tools/list`, tolerating a missing schema or execution block."""
        if not isinstance(value, dict) or not isinstance(value.get("name"), str):
            raise ProtocolViolation("the server's tools/list has a tool without a name")
        schema = value.get("inputSchema")
        execution = value.get("execution")
        support = execution.get("taskSupport") if isinstance(execution, dict) else None
        return cls(
            name=value["name"],
            input_schema=schema if isinstance(schema, dict) else None,
            task_support=support if isinstance(support, str) else None,
        )


@dataclass(frozen=True)
class ToolCallAnswer:
    """What a task-augmented `tools/call` came back with: `task`, or else `result`, the
    CallToolResult of a call the server ran at once."""

    task: Task | None
    result: JsonObject | None


@dataclass(frozen=True)
class TaskOutcome:
    """How a finished task ended: its CallToolResult, or the JSON-RPC error object its request
    ended in, exactly as sent (None when the server gave none)."""

    task_id: str
    status: str
    result: JsonObject | None
    error: JsonObject | None

    @property
    def kind(self) -> str:
        """`completed`, `tool-error`, `failed` or `cancelled`: what the exit codes
        distinguish (docs/reference/exit-codes.md), the same in both eras."""
        if self.status == CANCELLED:
            return "cancelled"
        # `isError: true`: 2025-11-25 ends such a task `failed`, 2026-07-28 `completed`.
        if self.result is not None and self.result.get("isError") is True:
            return "tool-error"
        if self.status == FAILED or self.error is not None:
            return "failed"
        return "completed"

"""Start a task: the gate, the tool's schema, then a task-augmented `tools/call`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from mcptask.client.session import McpClient
from mcptask.errors import ExitCode, UsageError
from mcptask.operations.schema_check import check_against
from mcptask.protocol.jsonrpc import JsonObject
from mcptask.protocol.tasks import Task, ToolInfo

MAX_TOOLS_NAMED = 20  # in an unknown tool's message


@dataclass(frozen=True)
class StartRequest:
    tool: str
    arguments: JsonObject
    ttl_ms: int | None = None


@dataclass(frozen=True)
class StartReport:
    """`task` when the server made a task; else `result`, the CallToolResult of a call it ran
    at once."""

    tool: str
    task: Task | None
    result: JsonObject | None
    session_id: str | None = None  # kept open for the task; later commands rejoin it
    notes: list[str] = field(default_factory=list)  # an unsent ttl, arguments not checked
    interrupted: bool = False  # before the call was sent: nothing was started

    @property
    def exit_code(self) -> ExitCode:
        """A task was made (0); the server ran the call at once: as `result` would (0 or 9)."""
        if self.interrupted:
            return ExitCode.INTERRUPTED
        is_error = self.result is not None and self.result.get("isError") is True
        return ExitCode.RESULT_IS_ERROR if is_error else ExitCode.OK


def start_task(
    client: McpClient, request: StartRequest, *, stop: Callable[[], bool] = lambda: False
) -> StartReport:
    client.require("tool_calls")
    tool = find_tool(client, request.tool)
    client.era.check_tool(tool)
    notes = check_arguments(tool, request.arguments)
    if request.ttl_ms is not None and client.era.ttl_note:
        notes.append(client.era.ttl_note)
    if stop():
        return StartReport(tool.name, None, None, notes=notes, interrupted=True)
    answer = client.call_tool_as_task(tool.name, request.arguments, ttl_ms=request.ttl_ms)
    return StartReport(
        tool=tool.name,
        task=answer.task,
        result=answer.result,
        session_id=client.kept_session,
        notes=notes,
    )


def find_tool(client: McpClient, name: str) -> ToolInfo:
    """The tool called `name`, or a usage error naming the tools."""
    names: list[str] = []
    for tool in client.iter_tools():
        if tool.name == name:
            return tool
        names.append(tool.name)
    shown = ", ".join(names[:MAX_TOOLS_NAMED]) + (", ..." if len(names) > MAX_TOOLS_NAMED else "")
    raise UsageError(
        f"the server has no tool {name!r} (its tools: {shown or 'none'}); nothing was sent"
    )


def check_arguments(tool: ToolInfo, arguments: JsonObject) -> list[str]:
    """A mismatch with the tool's `inputSchema` is a UsageError; a schema that cannot be used
    is a note (the server then judges the arguments)."""
    schema = tool.input_schema
    if schema is None:
        return [f"tool {tool.name!r} has no inputSchema: its arguments were not checked"]
    check = check_against(schema, arguments)
    if check.unusable is not None:
        return [
            f"the inputSchema of tool {tool.name!r} cannot be used ({check.unusable}): its "
            "arguments were not checked"
        ]
    if check.problem is None:
        return []
    more = f" (and {check.more} more problem(s))" if check.more else ""
    raise UsageError(
        f"the arguments do not match the inputSchema of tool {tool.name!r}: "
        f"{check.where or '(the arguments)'}: {check.problem}{more}; nothing was sent"
    )

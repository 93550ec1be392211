"""tools/list and tools/call as both eras serve them: long_job, and tools given in code.

Besides long_job, the server offers the tools of `ServerConfig.tools` (never set on the
command line: the test suite gives the conformance runner's fixture tools, see
tests/conformance/fixtures). Such a Tool's `run` takes the ToolCall (as the dispatcher of its
era saw it) and returns an Outcome: a complete result, a request for input (2026-07-28 multi
round-trip), or a task whose work runs in a thread of its own and moves the task through a
TaskHandle. What differs per era (whether a call becomes a task, the answer's shape,
tool-level task negotiation) stays in the dispatchers; the rest is here once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from mcptask.reference_server.records import TaskView
from mcptask.reference_server.rpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    JsonObject,
    JsonRpcError,
    notification,
)
from mcptask.reference_server.store import TaskStore
from mcptask.reference_server.tools import LONG_JOB, LongJob, parse_long_job, tool_definitions

Era = Literal["legacy", "modern"]
TaskSupport = Literal["forbidden", "optional", "required"]
Emit = Callable[[JsonObject], None]

# Logging levels in increasing severity (RFC 5424 names, as MCP uses them).
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")

log = logging.getLogger("mcptask.reference_server")


def _no_emit(message: JsonObject) -> None:
    """Drop a notification (a call that cannot carry any)."""


@dataclass(frozen=True)
class ToolCall:
    """One tools/call of a Tool, as the dispatcher of its era saw it."""

    name: str
    arguments: JsonObject
    era: Era
    # The call may be answered with a task: 2025-11-25, params.task was given; 2026-07-28,
    # the request declared the tasks extension.
    as_task: bool
    # 2026-07-28 multi round-trip requests: the answers sent with this retry, and the state
    # the previous round handed out (verified by the dispatcher).
    input_responses: Mapping[str, object] = field(default_factory=dict)
    state: JsonObject | None = None
    progress_token: str | int | None = None
    # The lowest level of log messages the client wants for this call (None: none).
    log_level: str | None = None
    emit: Emit = _no_emit

    def log(self, level: str, data: str) -> None:
        """Send notifications/message if the client asked for this level."""
        if self.log_level is None or self.log_level not in LOG_LEVELS:
            return
        if LOG_LEVELS.index(level) < LOG_LEVELS.index(self.log_level):
            return
        self.emit(
            notification(
                "notifications/message", {"level": level, "logger": self.name, "data": data}
            )
        )

    def progress(self, progress: float, total: float, message: str | None = None) -> None:
        """Send notifications/progress if the request carried a progress token."""
        if self.progress_token is None:
            return
        params: JsonObject = {
            "progressToken": self.progress_token,
            "progress": progress,
            "total": total,
        }
        if message is not None:
            params["message"] = message
        self.emit(notification("notifications/progress", params))


class TaskHandle:
    """What a task's work may do: wait, ask for input, and end the task.

    Waits are counted on the store's clock from the moment the task was launched (then from
    the end of the previous wait or question), not from whenever the work's thread gets to
    run: like script steps, a late thread does not stretch the work, and a manual clock
    moved right after the call still means "this much later".
    """

    def __init__(self, store: TaskStore, task_id: str) -> None:
        self.store = store
        self.task_id = task_id
        self._resume_at = store.clock.monotonic()

    def sleep(self, seconds: float) -> bool:
        """Wait; False as soon as the task ended meanwhile (cancelled, expired): stop then."""
        self._resume_at += seconds
        return self.store.wait_active(self.task_id, self._resume_at)

    def ask(self, requests: Mapping[str, JsonObject], message: str) -> dict[str, object] | None:
        """Park the task in input_required with these requests; the answers by name, or
        None when the task ended before all of them arrived."""
        answers = self.store.request_input(self.task_id, requests, message)
        self._resume_at = self.store.clock.monotonic()
        return answers

    def complete(self, result: JsonObject, message: str) -> None:
        """End the task `completed` with this CallToolResult."""
        self.store.finish(self.task_id, "completed", message, result=result)

    def fail(self, code: int, message: str) -> None:
        """End the task `failed` with a JSON-RPC error."""
        self.store.finish(
            self.task_id, "failed", f"Failed: {message}", error={"code": code, "message": message}
        )


Work = Callable[[TaskHandle], None]


@dataclass(frozen=True)
class Complete:
    """The call is answered with this CallToolResult."""

    result: JsonObject


@dataclass(frozen=True)
class NeedInput:
    """The call needs answers first (2026-07-28 InputRequiredResult): the requests by key,
    and the state the retry must bring back (handed out as a signed requestState)."""

    requests: dict[str, JsonObject]
    state: JsonObject | None = None


@dataclass(frozen=True)
class StartTask:
    """The call is answered with a task; `work` runs in its own thread."""

    message: str
    work: Work


Outcome = Complete | NeedInput | StartTask


@dataclass(frozen=True)
class Tool:
    """A tool given to the server in code (ServerConfig.tools)."""

    name: str
    title: str
    description: str
    input_schema: JsonObject
    run: Callable[[ToolCall], Outcome]
    task_support: TaskSupport = "forbidden"
    # The eras that offer the tool: those that ask for input the 2026-07-28 way
    # (inputRequests) are modern only; one that needs resumable streams is legacy only.
    eras: tuple[Era, ...] = ("legacy", "modern")
    # Sends elicitation requests: the client must declare the elicitation capability.
    needs_elicitation: bool = False
    # 2025-11-25 over HTTP with SSE answers: the server closes the call's SSE stream after
    # the priming event and delivers the result when the client resumes the stream (GET
    # with Last-Event-ID), as SEP-1699 allows.
    closes_stream: bool = False

    def definition(self, *, modern: bool, tasks_enabled: bool) -> JsonObject:
        """The tools/list entry (2025-11-25: with execution.taskSupport when tasks are on)."""
        tool: JsonObject = {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": self.input_schema,
        }
        if not modern and tasks_enabled and self.task_support != "forbidden":
            tool["execution"] = {"taskSupport": self.task_support}
        return tool


Tools = Mapping[str, Tool]


def tools_of_era(tools: Iterable[Tool], era: Era, tasks_enabled: bool) -> dict[str, Tool]:
    """The tools an era offers, by name, in the given order; without tasks (--no-tasks) not
    those that require task support, which could never run."""
    return {
        tool.name: tool
        for tool in tools
        if era in tool.eras and (tasks_enabled or tool.task_support != "required")
    }


def launch(store: TaskStore, task_id: str, work: Work) -> threading.Thread:
    """Run a task's work in a daemon thread; an exception fails the task (-32603)."""

    handle = TaskHandle(store, task_id)  # here, so that its waits count from the launch

    def target() -> None:
        try:
            work(handle)
        except Exception:
            log.exception("task %s: the work of a tool failed", task_id)
            handle.fail(INTERNAL_ERROR, "Internal error")

    thread = threading.Thread(target=target, name=f"tool-task-{task_id}", daemon=True)
    thread.start()
    return thread


def tool_list(tools: Tools, tasks_enabled: bool, *, modern: bool) -> list[JsonObject]:
    """The tools/list entries: long_job, then the tools the era offers."""
    entries = tool_definitions(tasks_enabled, modern=modern)
    entries += [
        tool.definition(modern=modern, tasks_enabled=tasks_enabled) for tool in tools.values()
    ]
    return entries


def resolve_tool(params: JsonObject, tools: Tools) -> Tool | LongJob:
    """The Tool a tools/call names, or its parsed long_job arguments; -32602 for an unknown
    tool or bad long_job arguments."""
    name = params.get("name")
    tool = tools.get(name) if isinstance(name, str) else None
    if tool is not None:
        return tool
    if name != LONG_JOB:
        raise JsonRpcError(INVALID_PARAMS, f"Unknown tool: {name}")
    try:
        return parse_long_job(params.get("arguments"))
    except ValueError as exc:
        raise JsonRpcError(INVALID_PARAMS, f"Invalid arguments for {LONG_JOB}: {exc}") from None


def start_long_job(
    store: TaskStore, job: LongJob, *, ttl_ms: int | None, owner: str | None = None
) -> TaskView:
    """The task of a long_job call: it follows the job's script from now."""
    return store.create(
        status_message=job.start_message,
        ttl_ms=ttl_ms,
        owner=owner,
        steps=job.steps,
        on_cancel=job.on_cancel,
        await_input=job.await_input,
    )


def tool_arguments(params: JsonObject) -> JsonObject:
    """params.arguments of a Tool's call (default {}); -32602 unless an object."""
    arguments = params.get("arguments", {})
    if not isinstance(arguments, dict):
        raise JsonRpcError(INVALID_PARAMS, "arguments must be an object")
    return arguments


def progress_token(meta: object) -> str | int | None:
    """The progressToken of a request's _meta, when it is a valid one."""
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    return token if isinstance(token, str | int) and not isinstance(token, bool) else None


def start_tool_task(
    store: TaskStore, outcome: StartTask, *, ttl_ms: int | None, owner: str | None = None
) -> TaskView:
    """The task a Tool answered with; its work starts in a thread of its own."""
    view = store.create(status_message=outcome.message, ttl_ms=ttl_ms, owner=owner)
    launch(store, view.task_id, outcome.work)
    return view

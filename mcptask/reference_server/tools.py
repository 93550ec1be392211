"""The server's one tool, `long_job` (its definition, argument parsing and results), and
ToolSet, the tools given in code besides it (ServerConfig.tools, never on the command line:
the test suite's conformance fixtures)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Literal, Protocol

from mcptask.reference_server.records import TaskView
from mcptask.reference_server.scripting import (
    MAX_SECONDS,
    TERMINAL_STATUSES,
    ScriptedTask,
    Step,
    parse_script,
    parse_seconds,
    parse_steps,
)
from mcptask.reference_server.wire import INVALID_PARAMS, JsonObject, JsonRpcError

if TYPE_CHECKING:
    from mcptask.reference_server.config import ServerConfig
    from mcptask.reference_server.eras.legacy import LegacyDispatcher
    from mcptask.reference_server.eras.modern import ModernDispatcher
    from mcptask.reference_server.eras.modern_wire import ModernRequest

Era = Literal["legacy", "modern"]
# Sends a notification that belongs to the request (before its response on an SSE answer).
Emit = Callable[[JsonObject], None]

LONG_JOB = "long_job"
DEFAULT_SECONDS = 30.0
RELATED_TASK_META = "io.modelcontextprotocol/related-task"


def tool_list(config: ServerConfig, era: Era) -> list[JsonObject]:
    """The tools/list entries: long_job, then the tools of config.tools the era offers."""
    tool: JsonObject = {
        "name": LONG_JOB,
        "title": "Long job",
        "description": (
            "Simulates long-running work that is 'working' and then ends with the outcome "
            "after `seconds`. 2025-11-25: call it with params.task to get a task. "
            "2026-07-28: declare the io.modelcontextprotocol/tasks extension and the call "
            "answers with a task."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "seconds": {
                    "type": "number",
                    "minimum": 0,
                    "maximum": MAX_SECONDS,
                    "default": DEFAULT_SECONDS,
                },
                "outcome": {"type": "string", "enum": ["completed", "failed"]},
                "message": {"type": "string"},
                "steps": {
                    "type": "array",
                    "description": "[[delaySeconds, status, message], ...]; overrides "
                    "seconds and outcome",
                    "items": {"type": "array"},
                },
                "onCancel": {
                    "type": "string",
                    "description": "cancel | complete | ignore | delay:MS",
                },
                "awaitInput": {
                    "type": "boolean",
                    "description": "a step into input_required waits for its answer",
                },
                "askUrl": {
                    "type": "string",
                    "description": "with awaitInput: ask to visit this URL (URL mode), not a form",
                },
            },
        },
    }
    # In 2026-07-28 the server decides per call whether to answer with a task.
    if config.tasks_enabled and era == "legacy":
        tool["execution"] = {"taskSupport": "optional"}
    if config.tools is None:
        return [tool]
    return [tool, *config.tools.definitions(era, config.tasks_enabled)]


def parse_long_job(arguments: object) -> ScriptedTask:
    """Validate long_job arguments; raise ValueError with a reason for the client."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ValueError("arguments must be an object")
    job = parse_script(arguments, "message")
    if "steps" in arguments:
        steps = parse_steps(arguments["steps"])
    else:
        seconds = parse_seconds(arguments.get("seconds", DEFAULT_SECONDS), "seconds")
        outcome = arguments.get("outcome", "completed")
        if outcome not in ("completed", "failed"):
            raise ValueError("outcome must be 'completed' or 'failed'")
        steps = (Step(seconds, outcome, f"long_job {outcome} after {seconds:g} s"),)
    return replace(job, steps=steps, status_message=job.status_message or "long_job is working")


def run_script(job: ScriptedTask) -> tuple[str, str]:
    """Run the job's steps in the calling thread: the final (status, message), `completed`
    for a script that stops while working or waiting for input."""
    status, message = "completed", "long_job completed"
    for step in job.steps:
        time.sleep(step.delay)
        status, message = step.status, step.message or message
        if status in TERMINAL_STATUSES:
            break
    if status not in TERMINAL_STATUSES:
        status = "completed"
    return status, message


def task_result(view: TaskView) -> JsonObject:
    """What tasks/result returns for a terminal task: its CallToolResult, tagged by task."""
    return {**view.call_result(), "_meta": {RELATED_TASK_META: {"taskId": view.task_id}}}


class ToolSet(Protocol):
    """Tools offered besides long_job. Each era's dispatcher asks the set first about a
    tools/call: the result, or None when the tool is not one of the set's."""

    def definitions(self, era: Era, tasks_enabled: bool) -> list[JsonObject]: ...

    def closes_stream(self, name: str, tasks_enabled: bool) -> bool:
        """True for a 2025-11-25 tool whose SSE answer stream the HTTP transport closes
        after its priming event, delivering the response on the resumed stream (SEP-1699)."""

    def call_legacy(
        self, dispatcher: LegacyDispatcher, params: JsonObject, session_id: str | None, emit: Emit
    ) -> JsonObject | None: ...

    def call_modern(
        self, dispatcher: ModernDispatcher, request: ModernRequest
    ) -> JsonObject | None: ...


def resolve_long_job(params: JsonObject) -> ScriptedTask:
    """The long_job of a tools/call; -32602 for an unknown tool or bad arguments."""
    name = params.get("name")
    if name != LONG_JOB:
        raise JsonRpcError(INVALID_PARAMS, f"Unknown tool: {name}")
    try:
        return parse_long_job(params.get("arguments"))
    except ValueError as exc:
        raise JsonRpcError(INVALID_PARAMS, f"Invalid arguments for {LONG_JOB}: {exc}") from None

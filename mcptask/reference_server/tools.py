"""The server's one tool, `long_job`: its definition, argument parsing, and results."""

from __future__ import annotations

import time
from dataclasses import dataclass

from mcptask.reference_server.jsonrpc import JsonObject
from mcptask.reference_server.scripting import (
    TERMINAL_STATUSES,
    OnCancel,
    Step,
    parse_on_cancel,
    parse_steps,
)
from mcptask.reference_server.store import TaskView

LONG_JOB = "long_job"
DEFAULT_SECONDS = 30.0
RELATED_TASK_META = "io.modelcontextprotocol/related-task"


@dataclass(frozen=True)
class LongJob:
    """A parsed long_job call: the script it follows and how it reacts to a cancel."""

    steps: tuple[Step, ...]
    start_message: str
    on_cancel: OnCancel | None


def tool_definitions(tasks_enabled: bool) -> list[JsonObject]:
    """The tools/list entries; `execution.taskSupport` only when tasks are offered."""
    tool: JsonObject = {
        "name": LONG_JOB,
        "title": "Long job",
        "description": (
            "Simulates long-running work. Call it with params.task to get a task that is "
            "'working' and then ends with the outcome after `seconds`."
        ),
        "inputSchema": {
            "type": "object",
            "properties": {
                "seconds": {"type": "number", "minimum": 0, "default": DEFAULT_SECONDS},
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
            },
        },
    }
    if tasks_enabled:
        tool["execution"] = {"taskSupport": "optional"}
    return [tool]


def parse_long_job(arguments: object) -> LongJob:
    """Validate long_job arguments; raise ValueError with a reason for the client."""
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        raise ValueError("arguments must be an object")
    message = arguments.get("message")
    if message is not None and not isinstance(message, str):
        raise ValueError("message must be a string")
    on_cancel_arg = arguments.get("onCancel")
    on_cancel = None if on_cancel_arg is None else parse_on_cancel(on_cancel_arg)
    if "steps" in arguments:
        steps = parse_steps(arguments["steps"])
    else:
        seconds = arguments.get("seconds", DEFAULT_SECONDS)
        if isinstance(seconds, bool) or not isinstance(seconds, int | float) or seconds < 0:
            raise ValueError("seconds must be a non-negative number")
        outcome = arguments.get("outcome", "completed")
        if outcome not in ("completed", "failed"):
            raise ValueError("outcome must be 'completed' or 'failed'")
        final = f"long_job {outcome} after {seconds:g} s"
        steps = (Step(float(seconds), outcome, final),)
    return LongJob(steps=steps, start_message=message or "long_job is working", on_cancel=on_cancel)


def call_result(status: str, message: str | None) -> JsonObject:
    """The CallToolResult of a job that ended in `status` (isError unless completed)."""
    text = message or f"long_job ended: {status}"
    return {"content": [{"type": "text", "text": text}], "isError": status != "completed"}


def run_inline(job: LongJob) -> JsonObject:
    """Run the job in the calling thread (a tools/call without params.task)."""
    status, message = "completed", "long_job completed"
    for step in job.steps:
        time.sleep(step.delay)
        status, message = step.status, step.message or message
        if status in TERMINAL_STATUSES:
            break
    if status not in TERMINAL_STATUSES:
        status = "completed"  # a script that stops while working still returns a result
    return call_result(status, message)


def task_result(view: TaskView) -> JsonObject:
    """What tasks/result returns for a terminal task: the CallToolResult, tagged by task."""
    result = call_result(view.status, view.status_message)
    result["_meta"] = {RELATED_TASK_META: {"taskId": view.task_id}}
    return result

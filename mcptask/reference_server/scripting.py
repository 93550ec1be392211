"""Task scripts: timed status steps, per-task cancel behaviour, the --tasks-file format, and
the server's one tool, `long_job`, which runs a script (its definition, argument parsing and
results), with ToolSet, the tools given in code besides it (ServerConfig.tools, never on the
command line: the test suite's conformance fixtures).

The same step syntax is used by `--tasks-file` entries and by the `steps` argument of the
`long_job` tool, so tests can script a task's life either at start-up or at run time.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal, Protocol

from mcptask.reference_server.wire import INVALID_PARAMS, JsonObject, JsonRpcError

if TYPE_CHECKING:
    from mcptask.reference_server.config import ServerConfig
    from mcptask.reference_server.eras.legacy import LegacyDispatcher
    from mcptask.reference_server.eras.modern import ModernDispatcher
    from mcptask.reference_server.eras.modern_wire import ModernRequest
    from mcptask.reference_server.records import TaskView

STATUSES = ("working", "input_required", "completed", "failed", "cancelled")
TERMINAL_STATUSES = frozenset({"completed", "failed", "cancelled"})

# Ids are `<status>-<NNN>`; beyond 999 they simply grow a digit, which stays unique.
MAX_SEED_PER_STATUS = 100_000

OnCancelKind = Literal["cancel", "complete", "ignore", "delay"]


@dataclass(frozen=True)
class Step:
    """Move the task to `status` (with `message`) `delay` seconds after the previous step."""

    delay: float
    status: str
    message: str | None


@dataclass(frozen=True)
class OnCancel:
    """How one task reacts to tasks/cancel, overriding the server's --cancel-mode.

    cancel: cancel at once; complete: the task completes as the cancel arrives (the race
    "finished between list and cancel"); ignore: acknowledge, never change; delay: turn
    `cancelled` after `delay_ms` (negative: never).
    """

    kind: OnCancelKind
    delay_ms: int = 0


@dataclass(frozen=True)
class ScriptedTask:
    """A task that follows its steps: an entry of --tasks-file, or a long_job call."""

    task_id: str | None
    status: str
    status_message: str | None
    steps: tuple[Step, ...]
    on_cancel: OnCancel | None
    # None with has_ttl=False: use the server's --ttl; None with has_ttl=True: unlimited.
    ttl_ms: int | None
    has_ttl: bool = False
    # True: a step into input_required pauses the script until tasks/update answers it.
    await_input: bool = False
    # With await_input: the question is this URL to visit (URL-mode elicitation), not a form.
    ask_url: str | None = None


def bounded(
    convert: Callable[[str], float], low: float, high: float | None = None, what: str = ""
) -> type:
    """An argparse type: `convert`, refusing values out of [low, high] (and nan, inf); its
    name is what argparse's error message calls it."""

    def parse(text: str) -> float:
        value = convert(text)
        if not math.isfinite(value) or value < low or (high is not None and value > high):
            raise ValueError(text)
        return value

    parse.__name__ = what or f"integer >= {low}"
    return parse  # type: ignore[return-value]


MAX_SECONDS = 86_400.0
"""The longest wait a call may ask for (a day): past it a sleep overflows, or holds a thread."""


def parse_seconds(value: object, what: str) -> float:
    """A number of seconds from 0 to `MAX_SECONDS` (JSON's NaN and Infinity are refused)."""
    # bool is an int subclass; reject it so `true` is not read as 1 second.
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise ValueError(f"{what} must be a number, got {value!r}")
    if value < 0:
        raise ValueError(f"{what} must not be negative, got {value!r}")
    if value > MAX_SECONDS:
        raise ValueError(f"{what} must be at most {MAX_SECONDS:g}, got {value!r}")
    return float(value)


def parse_status(value: object, what: str = "status") -> str:
    if value not in STATUSES:
        raise ValueError(f"{what} must be one of {', '.join(STATUSES)}; got {value!r}")
    return str(value)


def parse_steps(value: object) -> tuple[Step, ...]:
    """Parse `[[delaySeconds, status, message?], ...]`; raise ValueError when malformed."""
    if not isinstance(value, list):
        raise ValueError("steps must be a list of [delaySeconds, status, message]")
    steps: list[Step] = []
    for index, item in enumerate(value):
        where = f"steps[{index}]"
        if not isinstance(item, list) or not 2 <= len(item) <= 3:
            raise ValueError(f"{where} must be [delaySeconds, status, message]")
        delay = parse_seconds(item[0], f"{where} delay")
        status = parse_status(item[1], f"{where} status")
        message = item[2] if len(item) == 3 else None
        if message is not None and not isinstance(message, str):
            raise ValueError(f"{where} message must be a string")
        steps.append(Step(delay, status, message))
    return tuple(steps)


def parse_on_cancel(value: object) -> OnCancel:
    """Parse `cancel`, `complete`, `ignore` or `delay:MS`; raise ValueError otherwise."""
    if value in ("cancel", "complete", "ignore"):
        return OnCancel(kind=value)
    if isinstance(value, str) and value.startswith("delay:"):
        try:
            return OnCancel(kind="delay", delay_ms=int(value.removeprefix("delay:")))
        except ValueError:
            pass
    raise ValueError(f"onCancel must be cancel, complete, ignore or delay:MS; got {value!r}")


def parse_ttl(value: object, what: str = "ttl") -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ValueError(f"{what} must be a non-negative integer (milliseconds) or null")
    return value


def parse_script(entry: dict[str, object], message_key: str) -> ScriptedTask:
    """What a --tasks-file entry and long_job's arguments spell alike (the message under
    `message_key`, onCancel, awaitInput, askUrl): a working task, for the caller to complete."""
    message = entry.get(message_key)
    if message is not None and not isinstance(message, str):
        raise ValueError(f"{message_key} must be a string")
    await_input = entry.get("awaitInput", False)
    if not isinstance(await_input, bool):
        raise ValueError("awaitInput must be true or false")
    on_cancel = entry.get("onCancel")
    on_cancel = None if on_cancel is None else parse_on_cancel(on_cancel)
    ask_url = entry.get("askUrl")
    if ask_url is not None and (not isinstance(ask_url, str) or not ask_url):
        raise ValueError("askUrl must be a non-empty string")
    return ScriptedTask(
        task_id=None,
        status="working",
        status_message=message,
        steps=(),
        on_cancel=on_cancel,
        ttl_ms=None,
        await_input=await_input,
        ask_url=ask_url,
    )


def _scripted_task(entry: object, index: int) -> ScriptedTask:
    where = f"task #{index + 1}"
    if not isinstance(entry, dict):
        raise ValueError(f"{where} must be an object")
    try:
        task_id = entry.get("taskId")
        if task_id is not None and (not isinstance(task_id, str) or not task_id):
            raise ValueError("taskId must be a non-empty string")
        return replace(
            parse_script(entry, "statusMessage"),
            task_id=task_id,
            status=parse_status(entry.get("status", "working")),
            steps=parse_steps(entry.get("steps", [])),
            ttl_ms=parse_ttl(entry.get("ttl")),
            has_ttl="ttl" in entry,
        )
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


def parse_tasks_file(text: str) -> tuple[ScriptedTask, ...]:
    """Parse the JSON list of --tasks-file; raise ValueError with a one-line reason."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON ({exc.msg} at line {exc.lineno})") from None
    if not isinstance(data, list):
        raise ValueError("must be a JSON list of task objects")
    tasks = tuple(_scripted_task(entry, index) for index, entry in enumerate(data))
    ids = [task.task_id for task in tasks if task.task_id is not None]
    duplicates = sorted({task_id for task_id in ids if ids.count(task_id) > 1})
    if duplicates:
        raise ValueError(f"duplicate taskId {duplicates[0]!r}")
    return tasks


def parse_seed(spec: str) -> tuple[tuple[str, int], ...]:
    """Parse `working=20,completed=5,...` into (status, count) pairs, in the given order."""
    counts: dict[str, int] = {}
    for part in spec.split(","):
        part = part.strip()
        if not part:
            continue
        status, sep, count_text = part.partition("=")
        status = status.strip()
        if not sep:
            raise ValueError(f"expected STATUS=COUNT, got {part!r}")
        parse_status(status)
        if status in counts:
            raise ValueError(f"status {status!r} given twice")
        try:
            count = int(count_text.strip())
        except ValueError:
            raise ValueError(
                f"count for {status!r} must be an integer, got {count_text!r}"
            ) from None
        if not 0 <= count <= MAX_SEED_PER_STATUS:
            raise ValueError(f"count for {status!r} must be between 0 and {MAX_SEED_PER_STATUS}")
        counts[status] = count
    return tuple(counts.items())


# -- the long_job tool, and the tools given in code ------------------------------------------

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

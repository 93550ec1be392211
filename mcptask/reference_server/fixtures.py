"""The conformance fixture tools, offered with --conformance-fixtures.

The official MCP conformance runner (@modelcontextprotocol/conformance) tests a server by
calling tools of fixed names with fixed behaviours. This module implements them on top of the
reference server's task store, so that the runner can test the server's protocol handling
(task creation, polling, input requests, cancel, errors, content types, notifications)
rather than merely find that its tools are missing. They are off by default so that the
normal tool list stays `long_job` alone.

Runner 0.2.0 (2026-07-28 with the tasks extension), in both eras unless noted:

- `greet(name)`: synchronous, "Hello, {name}!"; never a task.
- `slow_compute(seconds, label)`: task support optional; sleeps, then completes. Cancel
  turns it `cancelled`.
- `failing_job`: task support required; completes with a tool error (`isError: true`).
- `protocol_error_job`: task support optional; ends in a JSON-RPC error (task `failed`).
- `confirm_delete(filename)`, `multi_input`: 2026-07-28 only; ask for input (one, then two
  elicitations at once) as task `inputRequests` answered by `tasks/update`, or, without the
  tasks extension, as multi round-trip requests (InputRequiredResult) on the call itself.
- `test_tool_with_task`: 2026-07-28 only, task support required; one multi round-trip
  round asks for `user_name`, then the call answers with a task whose result greets the
  name.

Runner 0.1.16 (2025-11-25): `test_simple_text`, `test_image_content`, `test_audio_content`,
`test_embedded_resource`, `test_multiple_content_types`, `test_error_handling`,
`test_tool_with_logging` (log messages), `test_tool_with_progress` (progress notifications,
given a progress token) and `json_schema_2020_12_tool`, in both eras; `test_reconnection`,
2025-11-25 only: over HTTP with SSE answers the transport closes the call's stream after its
priming event and delivers the result on the stream the client resumes (SEP-1699).

Notifications of a call (progress, log messages) travel before the response on an SSE
answer; a JSON answer, and stdio in the 2025-11-25 era, carry none. 2026-07-28 log messages
need the request's `_meta` logLevel; 2025-11-25 ones go out like the server's other log
messages (at every level).

A tool returns an Outcome: a complete result, a request for input (multi round-trip), or a
task whose work runs in a thread of its own and moves the task through a TaskHandle.
"""

from __future__ import annotations

import base64
import io
import json
import logging
import math
import struct
import threading
import time
import wave
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Literal

from mcptask.reference_server.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    JsonObject,
    JsonRpcError,
    notification,
)
from mcptask.reference_server.store import TaskStore

Era = Literal["legacy", "modern"]
TaskSupport = Literal["forbidden", "optional", "required"]
Emit = Callable[[JsonObject], None]

ELICITATION_CREATE = "elicitation/create"
# Logging levels in increasing severity (RFC 5424 names, as MCP uses them).
LOG_LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")
MAX_SECONDS = 3600.0

log = logging.getLogger("mcptask.reference_server")


def _no_emit(message: JsonObject) -> None:
    """Drop a notification (a call that cannot carry any)."""


@dataclass(frozen=True)
class ToolCall:
    """One tools/call of a fixture tool, as the dispatcher of its era saw it."""

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
class FixtureTool:
    """A tool of the conformance runner's fixture set."""

    name: str
    title: str
    description: str
    input_schema: JsonObject
    run: Callable[[ToolCall], Outcome]
    task_support: TaskSupport = "forbidden"
    # The eras that offer the tool: those that ask for input the 2026-07-28 way
    # (inputRequests) are modern only; test_reconnection needs resumable streams (legacy).
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


def launch(store: TaskStore, task_id: str, work: Work) -> threading.Thread:
    """Run a task's work in a daemon thread; an exception fails the task (-32603)."""

    handle = TaskHandle(store, task_id)  # here, so that its waits count from the launch

    def target() -> None:
        try:
            work(handle)
        except Exception:
            log.exception("task %s: the work of a fixture tool failed", task_id)
            handle.fail(INTERNAL_ERROR, "Internal error")

    thread = threading.Thread(target=target, name=f"fixture-task-{task_id}", daemon=True)
    thread.start()
    return thread


# -- arguments and content ----------------------------------------------------------------


def _invalid(call: ToolCall, reason: str) -> JsonRpcError:
    return JsonRpcError(INVALID_PARAMS, f"Invalid arguments for {call.name}: {reason}")


def _string(call: ToolCall, key: str, default: str | None = None) -> str:
    value = call.arguments.get(key, default)
    if not isinstance(value, str) or not value:
        raise _invalid(call, f"{key} must be a non-empty string")
    return value


def _seconds(call: ToolCall, default: float) -> float:
    value = call.arguments.get("seconds", default)
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not 0 <= value <= MAX_SECONDS
    ):
        raise _invalid(call, f"seconds must be a number from 0 to {MAX_SECONDS:g}")
    return float(value)


def text(value: str) -> JsonObject:
    """A text content block."""
    return {"type": "text", "text": value}


def tool_result(*content: JsonObject, is_error: bool = False) -> JsonObject:
    """A CallToolResult."""
    return {"content": list(content), "isError": is_error}


def _png_pixel() -> bytes:
    """A 1x1 red PNG, built with zlib (no image library needed)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)  # 8-bit RGB
    pixels = zlib.compress(b"\x00\xff\x00\x00")  # filter byte, then one red pixel
    return (
        b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    )


def _wav_silence() -> bytes:
    """A tenth of a second of 8 kHz mono silence as a WAV file."""
    buffer = io.BytesIO()
    with wave.open(buffer, "wb") as out:
        out.setnchannels(1)
        out.setsampwidth(1)
        out.setframerate(8000)
        out.writeframes(b"\x80" * 800)
    return buffer.getvalue()


PNG_BASE64 = base64.b64encode(_png_pixel()).decode("ascii")
WAV_BASE64 = base64.b64encode(_wav_silence()).decode("ascii")


def image() -> JsonObject:
    """An image content block (the 1x1 PNG)."""
    return {"type": "image", "data": PNG_BASE64, "mimeType": "image/png"}


def _elicitation(message: str, properties: JsonObject, required: list[str]) -> JsonObject:
    """An elicitation/create input request with a form."""
    return {
        "method": ELICITATION_CREATE,
        "params": {
            "mode": "form",
            "message": message,
            "requestedSchema": {"type": "object", "properties": properties, "required": required},
        },
    }


def accepted_content(response: object) -> JsonObject | None:
    """The form content of an ElicitResult that accepted, else None (declined, cancelled,
    or not an ElicitResult at all)."""
    if not isinstance(response, dict) or response.get("action") != "accept":
        return None
    content = response.get("content")
    return content if isinstance(content, dict) else {}


# -- runner 0.2.0: the tasks fixtures -------------------------------------------------------


def _greet(call: ToolCall) -> Outcome:
    return Complete(tool_result(text(f"Hello, {_string(call, 'name')}!")))


def _slow_compute(call: ToolCall) -> Outcome:
    seconds = _seconds(call, 1.0)
    label = _string(call, "label", "slow_compute")
    result = tool_result(text(f"slow_compute {label}: done after {seconds:g} s"))
    if not call.as_task:
        time.sleep(seconds)
        return Complete(result)

    def work(task: TaskHandle) -> None:
        if task.sleep(seconds):
            task.complete(result, f"Computed {label}")

    return StartTask(f"Computing {label} ({seconds:g} s)", work)


def _failing_job(call: ToolCall) -> Outcome:
    seconds = _seconds(call, 1.0)
    result = tool_result(
        text("failing_job: the job failed (a simulated tool error)"), is_error=True
    )

    def work(task: TaskHandle) -> None:
        if task.sleep(seconds):
            task.complete(result, "The job reported a tool error")

    return StartTask("failing_job is working", work)


PROTOCOL_ERROR_MESSAGE = "protocol_error_job: simulated internal failure"


def _protocol_error_job(call: ToolCall) -> Outcome:
    seconds = _seconds(call, 0.5)
    if not call.as_task:
        time.sleep(seconds)
        raise JsonRpcError(INTERNAL_ERROR, PROTOCOL_ERROR_MESSAGE)

    def work(task: TaskHandle) -> None:
        if task.sleep(seconds):
            task.fail(INTERNAL_ERROR, PROTOCOL_ERROR_MESSAGE)

    return StartTask("protocol_error_job is working", work)


def _confirm_request(filename: str) -> JsonObject:
    return _elicitation(
        f"Delete {filename}?",
        {"confirm": {"type": "boolean", "title": "Delete", "description": f"Delete {filename}"}},
        ["confirm"],
    )


def _confirm_result(filename: str, answer: object) -> JsonObject:
    content = accepted_content(answer)
    if content is not None and content.get("confirm") is True:
        return tool_result(text(f"Deleted {filename}"))
    return tool_result(text(f"Kept {filename}: the deletion was not confirmed"))


def _confirm_delete(call: ToolCall) -> Outcome:
    filename = _string(call, "filename")
    request = _confirm_request(filename)
    if not call.as_task:
        if "confirm" in call.input_responses:
            return Complete(_confirm_result(filename, call.input_responses["confirm"]))
        return NeedInput({"confirm": request})

    def work(task: TaskHandle) -> None:
        answers = task.ask({"confirm": request}, f"Waiting for confirmation to delete {filename}")
        if answers is not None:
            task.complete(_confirm_result(filename, answers["confirm"]), f"Asked about {filename}")

    return StartTask(f"Asking whether to delete {filename}", work)


MULTI_INPUT_REQUESTS: dict[str, JsonObject] = {
    "name": _elicitation(
        "What name should the job use?",
        {"name": {"type": "string", "title": "Name"}},
        ["name"],
    ),
    "confirm": _elicitation(
        "Go ahead with the job?",
        {"confirm": {"type": "boolean", "title": "Confirm"}},
        ["confirm"],
    ),
}


def _multi_input_result(answers: Mapping[str, object]) -> JsonObject:
    named = accepted_content(answers.get("name")) or {}
    confirmed = accepted_content(answers.get("confirm")) or {}
    name = named.get("name") if isinstance(named.get("name"), str) else "(none)"
    return tool_result(
        text(f"multi_input: name={name}, confirm={confirmed.get('confirm') is True}")
    )


def _multi_input(call: ToolCall) -> Outcome:
    if not call.as_task:
        # Multi round-trip: answers given so far travel in the (signed) requestState, so a
        # client may answer the two requests in separate retries.
        earlier = (call.state or {}).get("answers")
        answers: dict[str, object] = dict(earlier) if isinstance(earlier, dict) else {}
        answers.update({k: v for k, v in call.input_responses.items() if k in MULTI_INPUT_REQUESTS})
        missing = {k: v for k, v in MULTI_INPUT_REQUESTS.items() if k not in answers}
        if missing:
            return NeedInput(missing, {"answers": answers} if answers else None)
        return Complete(_multi_input_result(answers))

    def work(task: TaskHandle) -> None:
        answers = task.ask(MULTI_INPUT_REQUESTS, "Waiting for 2 answers")
        if answers is not None:
            task.complete(_multi_input_result(answers), "Both answers received")

    return StartTask("multi_input is starting", work)


USER_NAME_REQUEST = _elicitation(
    "What is your name?", {"name": {"type": "string", "title": "Your name"}}, ["name"]
)


def _test_tool_with_task(call: ToolCall) -> Outcome:
    if "user_name" not in call.input_responses:
        return NeedInput({"user_name": USER_NAME_REQUEST}, {"asked": "user_name"})
    content = accepted_content(call.input_responses["user_name"])
    name = content.get("name") if content is not None else None
    if not isinstance(name, str) or not name.strip():
        return Complete(
            tool_result(text("test_tool_with_task: no user_name was given"), is_error=True)
        )
    result = tool_result(text(f"Hello, {name}! Your task is done."))

    def work(task: TaskHandle) -> None:
        if task.sleep(0.2):
            task.complete(result, f"Greeted {name}")

    return StartTask(f"Working for {name}", work)


# -- runner 0.1.16: content, errors, notifications -------------------------------------------


def _fixed(result: JsonObject) -> Callable[[ToolCall], Outcome]:
    def run(call: ToolCall) -> Outcome:
        return Complete(result)

    return run


def _with_logging(call: ToolCall) -> Outcome:
    call.log("info", "Tool execution started")
    time.sleep(0.05)
    call.log("info", "Tool processing data")
    time.sleep(0.05)
    call.log("info", "Tool execution completed")
    return Complete(tool_result(text("Logging test completed: 3 log messages sent")))


def _with_progress(call: ToolCall) -> Outcome:
    call.progress(0, 100, "Starting")
    time.sleep(0.05)
    call.progress(50, 100, "Half way")
    time.sleep(0.05)
    call.progress(100, 100, "Done")
    return Complete(tool_result(text("Progress test completed")))


def _reconnection(call: ToolCall) -> Outcome:
    # The transport has closed the call's SSE stream by now (closes_stream); the result is
    # ready a moment later, for the client that resumes the stream.
    time.sleep(0.2)
    return Complete(tool_result(text("Reconnection test completed successfully")))


JSON_SCHEMA_2020_12: JsonObject = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "$defs": {
        "address": {
            "type": "object",
            "properties": {"street": {"type": "string"}, "city": {"type": "string"}},
        }
    },
    "properties": {"name": {"type": "string"}, "address": {"$ref": "#/$defs/address"}},
    "additionalProperties": False,
}


def _json_schema_tool(call: ToolCall) -> Outcome:
    unexpected = sorted(set(call.arguments) - {"name", "address"})
    if unexpected:
        raise _invalid(call, f"unexpected property {unexpected[0]!r}")
    if "name" in call.arguments and not isinstance(call.arguments["name"], str):
        raise _invalid(call, "name must be a string")
    address = call.arguments.get("address", {})
    if not isinstance(address, dict) or not all(
        isinstance(address.get(key, ""), str) for key in ("street", "city")
    ):
        raise _invalid(call, "address must be an object with string street and city")
    return Complete(tool_result(text(f"Received: {json.dumps(call.arguments, sort_keys=True)}")))


NO_ARGUMENTS: JsonObject = {"type": "object", "properties": {}}
MIXED_RESOURCE_TEXT = json.dumps({"test": "data", "value": 123}, separators=(",", ":"))

FIXTURES: tuple[FixtureTool, ...] = (
    FixtureTool(
        name="greet",
        title="Greet",
        description="Returns 'Hello, {name}!' at once; never a task.",
        input_schema={
            "type": "object",
            "properties": {"name": {"type": "string", "description": "Who to greet"}},
            "required": ["name"],
        },
        run=_greet,
    ),
    FixtureTool(
        name="slow_compute",
        title="Slow compute",
        description="Sleeps `seconds`, then returns a result naming `label`. A task when the "
        "client supports tasks; cancelling it ends it `cancelled`.",
        input_schema={
            "type": "object",
            "properties": {
                "seconds": {"type": "number", "minimum": 0, "maximum": MAX_SECONDS, "default": 1},
                "label": {"type": "string"},
            },
        },
        run=_slow_compute,
        task_support="optional",
    ),
    FixtureTool(
        name="failing_job",
        title="Failing job",
        description="Needs task support; after `seconds` (default 1) the task completes "
        "with a tool error (isError: true).",
        input_schema={
            "type": "object",
            "properties": {"seconds": {"type": "number", "minimum": 0, "default": 1}},
        },
        run=_failing_job,
        task_support="required",
    ),
    FixtureTool(
        name="protocol_error_job",
        title="Protocol error job",
        description="Ends in a JSON-RPC error (-32603) after `seconds` (default 0.5): the "
        "task turns `failed`, or, without a task, the call answers with the error.",
        input_schema={
            "type": "object",
            "properties": {"seconds": {"type": "number", "minimum": 0, "default": 0.5}},
        },
        run=_protocol_error_job,
        task_support="optional",
    ),
    FixtureTool(
        name="confirm_delete",
        title="Confirm delete",
        description="Asks the user to confirm deleting `filename` (an elicitation), then "
        "reports what it did. Nothing is deleted.",
        input_schema={
            "type": "object",
            "properties": {"filename": {"type": "string"}},
            "required": ["filename"],
        },
        run=_confirm_delete,
        task_support="optional",
        eras=("modern",),
        needs_elicitation=True,
    ),
    FixtureTool(
        name="multi_input",
        title="Multi input",
        description="Asks two questions at once (two elicitations) and reports the answers.",
        input_schema=NO_ARGUMENTS,
        run=_multi_input,
        task_support="optional",
        eras=("modern",),
        needs_elicitation=True,
    ),
    FixtureTool(
        name="test_tool_with_task",
        title="Input, then a task",
        description="Needs task support. Asks for user_name (a multi round-trip request on "
        "the call), then answers with a task whose result greets that name.",
        input_schema=NO_ARGUMENTS,
        run=_test_tool_with_task,
        task_support="required",
        eras=("modern",),
        needs_elicitation=True,
    ),
    FixtureTool(
        name="test_simple_text",
        title="Simple text",
        description="Returns one text content block.",
        input_schema=NO_ARGUMENTS,
        run=_fixed(tool_result(text("This is a simple text response for testing."))),
    ),
    FixtureTool(
        name="test_image_content",
        title="Image content",
        description="Returns an image content block (a 1x1 PNG).",
        input_schema=NO_ARGUMENTS,
        run=_fixed(tool_result(image())),
    ),
    FixtureTool(
        name="test_audio_content",
        title="Audio content",
        description="Returns an audio content block (0.1 s of silence, WAV).",
        input_schema=NO_ARGUMENTS,
        run=_fixed(tool_result({"type": "audio", "data": WAV_BASE64, "mimeType": "audio/wav"})),
    ),
    FixtureTool(
        name="test_embedded_resource",
        title="Embedded resource",
        description="Returns an embedded text resource.",
        input_schema=NO_ARGUMENTS,
        run=_fixed(
            tool_result(
                {
                    "type": "resource",
                    "resource": {
                        "uri": "test://embedded-resource",
                        "mimeType": "text/plain",
                        "text": "This is an embedded resource content.",
                    },
                }
            )
        ),
    ),
    FixtureTool(
        name="test_multiple_content_types",
        title="Multiple content types",
        description="Returns text, image and embedded resource content together.",
        input_schema=NO_ARGUMENTS,
        run=_fixed(
            tool_result(
                text("Multiple content types test:"),
                image(),
                {
                    "type": "resource",
                    "resource": {
                        "uri": "test://mixed-content-resource",
                        "mimeType": "application/json",
                        "text": MIXED_RESOURCE_TEXT,
                    },
                },
            )
        ),
    ),
    FixtureTool(
        name="test_error_handling",
        title="Error handling",
        description="Always returns a tool error (isError: true).",
        input_schema=NO_ARGUMENTS,
        run=_fixed(
            tool_result(text("This tool intentionally returns an error for testing"), is_error=True)
        ),
    ),
    FixtureTool(
        name="test_tool_with_logging",
        title="Logging",
        description="Sends three info log messages about 50 ms apart, then returns.",
        input_schema=NO_ARGUMENTS,
        run=_with_logging,
    ),
    FixtureTool(
        name="test_tool_with_progress",
        title="Progress",
        description="Reports progress 0, 50 and 100 of 100 (given a progress token), then returns.",
        input_schema=NO_ARGUMENTS,
        run=_with_progress,
    ),
    FixtureTool(
        name="test_reconnection",
        title="Reconnection",
        description="Over HTTP with SSE answers, closes the call's stream after its priming "
        "event (with a retry delay) and answers on the stream the client resumes with "
        "Last-Event-ID.",
        input_schema=NO_ARGUMENTS,
        run=_reconnection,
        eras=("legacy",),
        closes_stream=True,
    ),
    FixtureTool(
        name="json_schema_2020_12_tool",
        title="JSON Schema 2020-12",
        description="Has an input schema with JSON Schema 2020-12 keywords ($schema, $defs, "
        "$ref, additionalProperties); echoes its arguments.",
        input_schema=JSON_SCHEMA_2020_12,
        run=_json_schema_tool,
    ),
)


def fixture_tools(era: Era, tasks_enabled: bool = True) -> dict[str, FixtureTool]:
    """The fixture tools an era offers, by name, in listing order; without tasks (--no-tasks)
    not those that require task support, which could never run."""
    return {
        tool.name: tool
        for tool in FIXTURES
        if era in tool.eras and (tasks_enabled or tool.task_support != "required")
    }

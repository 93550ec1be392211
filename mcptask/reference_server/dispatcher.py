"""Protocol logic of the 2025-11-25 ("legacy") era: one JSON-RPC message in, a reply out.

Transports (HTTP, stdio) parse bytes, manage sessions and write answers; everything that the
MCP specification says about methods, capabilities and task semantics lives here. The
2026-07-28 ModernDispatcher (modern.py) sits beside this one and shares the TaskStore; the
transports pick one of the two per message.
"""

from __future__ import annotations

import base64
import binascii
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from mcptask import __version__
from mcptask.reference_server.config import Scope, ServerConfig
from mcptask.reference_server.fixtures import (
    Complete,
    FixtureTool,
    StartTask,
    ToolCall,
    fixture_tools,
    launch,
)
from mcptask.reference_server.jsonrpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    JsonObject,
    JsonRpcError,
    MessageKind,
    classify,
    error_response,
    notification,
    request_id,
    result_response,
)
from mcptask.reference_server.records import (
    CancelPolicy,
    TaskNotFoundError,
    TaskTerminalError,
    TaskView,
)
from mcptask.reference_server.scripting import parse_ttl
from mcptask.reference_server.store import TaskStore
from mcptask.reference_server.tools import (
    LONG_JOB,
    parse_long_job,
    run_inline,
    task_result,
    tool_definitions,
)

PROTOCOL_VERSION = "2025-11-25"
SUPPORTED_VERSIONS = frozenset({PROTOCOL_VERSION})
STATUS_NOTIFICATION = "notifications/tasks/status"
LOGGER_NAME = "mcptask-reference"

log = logging.getLogger("mcptask.reference_server")


@dataclass
class Reply:
    """What a message produced: the response (None for notifications) and notifications
    that belong to the request (sent before the response on an SSE answer)."""

    response: JsonObject | None
    related: list[JsonObject] = field(default_factory=list)


def iso_utc(moment: datetime) -> str:
    """ISO 8601 in UTC with a `Z` suffix, to the millisecond."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


Handler = Callable[[JsonObject, str | None], JsonObject]


class LegacyDispatcher:
    """Answers MCP 2025-11-25 messages against a shared TaskStore.

    `session_id` identifies the caller: it scopes task visibility (--scope session) and is
    None only for callers outside any session.
    """

    protocol_version = PROTOCOL_VERSION

    def __init__(self, config: ServerConfig, store: TaskStore) -> None:
        self.config = config
        self.store = store
        self._cancel_policy = CancelPolicy(config.cancel_mode, config.cancel_delay_ms)
        # Cursors carry this nonce so that a cursor from another server run is rejected.
        self._cursor_nonce = secrets.token_hex(4)
        self._fixtures = (
            fixture_tools("legacy", config.tasks_enabled) if config.conformance_fixtures else {}
        )
        self._methods: dict[str, Handler] = {
            "initialize": self._initialize,
            "ping": lambda params, session: {},
            "logging/setLevel": lambda params, session: {},
            "tools/list": self._tools_list,
            "tools/call": self._tools_call,
        }
        if config.tasks_enabled:
            self._methods["tasks/get"] = self._tasks_get
            self._methods["tasks/result"] = self._tasks_result
            if config.list_enabled:
                self._methods["tasks/list"] = self._tasks_list
            if config.cancel_enabled:
                self._methods["tasks/cancel"] = self._tasks_cancel

    # -- entry points ---------------------------------------------------------------------

    def handle(self, message: object, session_id: str | None) -> Reply:
        """Process one decoded JSON-RPC message and return the reply."""
        kind = classify(message)
        if kind is MessageKind.INVALID:
            return Reply(
                error_response(request_id(message), INVALID_REQUEST, "Invalid JSON-RPC message")
            )
        if kind is not MessageKind.REQUEST:
            # notifications/initialized, notifications/cancelled and client responses need
            # no answer; this server sends no requests, so there is nothing to match.
            return Reply(None)
        assert isinstance(message, dict)
        method: str = message["method"]
        msg_id = message["id"]
        related = [
            notification(
                "notifications/message",
                {"level": "info", "logger": LOGGER_NAME, "data": f"handling {method}"},
            )
        ]
        return Reply(
            self._answer(method, message.get("params"), msg_id, session_id, related.append),
            related,
        )

    def may_block(self, message: object) -> bool:
        """True when answering `message` may take long (tasks/result, an inline tool call).

        Transports without a thread per request answer such messages from a thread of
        their own, so one slow call does not hold up the others.
        """
        if classify(message) is not MessageKind.REQUEST:
            return False
        assert isinstance(message, dict)
        if message["method"] == "tasks/result":
            return True
        if message["method"] == "tools/call":
            params = message.get("params")
            task_augmented = isinstance(params, dict) and params.get("task") is not None
            return not (task_augmented and self.config.tasks_enabled)
        return False

    def closes_stream(self, message: object) -> bool:
        """True for a call of a tool whose SSE answer stream the transport closes early, to
        deliver the response on the resumed stream (the fixture test_reconnection)."""
        if classify(message) is not MessageKind.REQUEST:
            return False
        assert isinstance(message, dict)
        params = message.get("params")
        if message["method"] != "tools/call" or not isinstance(params, dict):
            return False
        name = params.get("name")
        tool = self._fixtures.get(name) if isinstance(name, str) else None
        return tool is not None and tool.closes_stream

    def task_wire(self, view: TaskView) -> JsonObject:
        """The Task object exactly as the 2025-11-25 schema spells it."""
        task: JsonObject = {"taskId": view.task_id, "status": view.status}
        if view.status_message is not None:
            task["statusMessage"] = view.status_message
        task["createdAt"] = iso_utc(view.created_at)
        task["lastUpdatedAt"] = iso_utc(view.last_updated_at)
        task["ttl"] = view.ttl_ms
        task["pollInterval"] = self.config.poll_interval_ms
        return task

    def status_notification(self, view: TaskView) -> JsonObject:
        """The notifications/tasks/status message for a changed task (Task fields, flat)."""
        return notification(STATUS_NOTIFICATION, self.task_wire(view))

    # -- request plumbing -----------------------------------------------------------------

    def _answer(
        self,
        method: str,
        params: object,
        msg_id: str | int,
        session_id: str | None,
        emit: Callable[[JsonObject], None],
    ) -> JsonObject:
        handler = self._methods.get(method)
        if handler is None:
            return error_response(msg_id, METHOD_NOT_FOUND, f"Method not found: {method}")
        if method.startswith("tasks/") and self.config.latency_ms > 0:
            time.sleep(self.config.latency_ms / 1000)
        if params is None:
            params = {}
        if not isinstance(params, dict):
            return error_response(msg_id, INVALID_PARAMS, "params must be an object")
        try:
            if method == "tools/call":
                # Tools may send notifications that belong to the call (progress, logs).
                return result_response(msg_id, self._tools_call(params, session_id, emit))
            return result_response(msg_id, handler(params, session_id))
        except JsonRpcError as exc:
            return error_response(msg_id, exc.code, exc.message, exc.data)
        except (TaskNotFoundError, TaskTerminalError) as exc:
            return error_response(msg_id, INVALID_PARAMS, str(exc))
        except Exception:
            log.exception("internal error while handling %s", method)
            return error_response(msg_id, INTERNAL_ERROR, "Internal error")

    @staticmethod
    def _task_id(params: JsonObject) -> str:
        task_id = params.get("taskId")
        if not isinstance(task_id, str):
            raise JsonRpcError(INVALID_PARAMS, "taskId must be a string")
        return task_id

    # -- lifecycle and tools --------------------------------------------------------------

    def capabilities(self) -> JsonObject:
        """ServerCapabilities, without the parts switched off on the command line."""
        capabilities: JsonObject = {}
        if self.config.tasks_enabled:
            tasks: JsonObject = {}
            if self.config.list_enabled:
                tasks["list"] = {}
            if self.config.cancel_enabled:
                tasks["cancel"] = {}
            tasks["requests"] = {"tools": {"call": {}}}
            capabilities["tasks"] = tasks
        capabilities["tools"] = {}
        # The server sends notifications/message on SSE answers; the spec requires servers
        # that emit log messages to declare the logging capability.
        capabilities["logging"] = {}
        return capabilities

    def _initialize(self, params: JsonObject, session_id: str | None) -> JsonObject:
        requested = params.get("protocolVersion")
        # Version negotiation: echo a supported version, otherwise offer our own.
        version = requested if requested in SUPPORTED_VERSIONS else PROTOCOL_VERSION
        return {
            "protocolVersion": version,
            "capabilities": self.capabilities(),
            "serverInfo": {"name": self.config.server_name, "version": __version__},
            "instructions": (
                "mcptask reference server: a demo and test target for MCP tasks. Call the "
                "long_job tool with params.task to create a task; list, get and cancel tasks "
                "with the tasks/* methods."
            ),
        }

    def _tools_list(self, params: JsonObject, session_id: str | None) -> JsonObject:
        tools = tool_definitions(self.config.tasks_enabled)
        tools += [
            tool.definition(modern=False, tasks_enabled=self.config.tasks_enabled)
            for tool in self._fixtures.values()
        ]
        return {"tools": tools}

    def _tools_call(
        self,
        params: JsonObject,
        session_id: str | None,
        emit: Callable[[JsonObject], None] | None = None,
    ) -> JsonObject:
        name = params.get("name")
        fixture = self._fixtures.get(name) if isinstance(name, str) else None
        if fixture is not None:
            return self._call_fixture(fixture, params, session_id, emit)
        if name != LONG_JOB:
            raise JsonRpcError(INVALID_PARAMS, f"Unknown tool: {name}")
        try:
            job = parse_long_job(params.get("arguments"))
        except ValueError as exc:
            raise JsonRpcError(INVALID_PARAMS, f"Invalid arguments for {LONG_JOB}: {exc}") from None
        task_params = params.get("task")
        # Without the tasks capability, task metadata is ignored and the call runs normally
        # (spec: receivers that do not declare it process the request as usual).
        if task_params is None or not self.config.tasks_enabled:
            return run_inline(job)
        if not isinstance(task_params, dict):
            raise JsonRpcError(INVALID_PARAMS, "task must be an object")
        try:
            ttl = parse_ttl(task_params.get("ttl", self.config.ttl_ms), "task.ttl")
        except ValueError as exc:
            raise JsonRpcError(INVALID_PARAMS, str(exc)) from None
        owner = session_id if self.config.scope is Scope.SESSION else None
        view = self.store.create(
            status_message=job.start_message,
            ttl_ms=ttl,
            owner=owner,
            steps=job.steps,
            on_cancel=job.on_cancel,
            await_input=job.await_input,
        )
        return {"task": self.task_wire(view)}

    def _call_fixture(
        self,
        tool: FixtureTool,
        params: JsonObject,
        session_id: str | None,
        emit: Callable[[JsonObject], None] | None,
    ) -> JsonObject:
        """tools/call of a conformance fixture tool, with the tool-level task negotiation of
        2025-11-25: -32601 for a task-augmented call of a tool that forbids it, and for a
        plain call of a tool that requires it."""
        task_params = params.get("task")
        # Without the tasks capability, task metadata is ignored (as for long_job).
        as_task = task_params is not None and self.config.tasks_enabled
        if as_task and tool.task_support == "forbidden":
            raise JsonRpcError(
                METHOD_NOT_FOUND, f"Tool {tool.name} does not support task-augmented calls"
            )
        if not as_task and tool.task_support == "required":
            raise JsonRpcError(
                METHOD_NOT_FOUND,
                f"Tool {tool.name} must be called as a task (execution.taskSupport: required)",
            )
        ttl = self.config.ttl_ms
        if as_task:
            if not isinstance(task_params, dict):
                raise JsonRpcError(INVALID_PARAMS, "task must be an object")
            try:
                ttl = parse_ttl(task_params.get("ttl", self.config.ttl_ms), "task.ttl")
            except ValueError as exc:
                raise JsonRpcError(INVALID_PARAMS, str(exc)) from None
        arguments = params.get("arguments", {})
        if not isinstance(arguments, dict):
            raise JsonRpcError(INVALID_PARAMS, "arguments must be an object")
        meta = params.get("_meta")
        token = meta.get("progressToken") if isinstance(meta, dict) else None
        call = ToolCall(
            name=tool.name,
            arguments=arguments,
            era="legacy",
            as_task=as_task,
            progress_token=(
                token if isinstance(token, str | int) and not isinstance(token, bool) else None
            ),
            # Like the server's other log messages, the tools' go out at every level.
            log_level="debug",
            emit=emit or (lambda message: None),
        )
        outcome = tool.run(call)
        if isinstance(outcome, Complete):
            return outcome.result
        if not isinstance(outcome, StartTask) or not as_task:
            raise JsonRpcError(INTERNAL_ERROR, f"{tool.name} gave an answer 2025-11-25 lacks")
        owner = session_id if self.config.scope is Scope.SESSION else None
        view = self.store.create(status_message=outcome.message, ttl_ms=ttl, owner=owner)
        launch(self.store, view.task_id, outcome.work)
        return {"task": self.task_wire(view)}

    # -- tasks ----------------------------------------------------------------------------

    def _tasks_get(self, params: JsonObject, session_id: str | None) -> JsonObject:
        return self.task_wire(self.store.get(self._task_id(params), session_id))

    def _tasks_cancel(self, params: JsonObject, session_id: str | None) -> JsonObject:
        view = self.store.cancel(self._task_id(params), session_id, self._cancel_policy)
        return self.task_wire(view)

    def _tasks_result(self, params: JsonObject, session_id: str | None) -> JsonObject:
        view = self.store.wait_terminal(self._task_id(params), session_id)
        if view.status == "failed" and view.error is not None:
            # The underlying request ended in a JSON-RPC error: tasks/result answers it.
            error = view.error
            raise JsonRpcError(
                error.get("code", INTERNAL_ERROR),
                str(error.get("message", "")),
                error.get("data"),
            )
        return task_result(view)

    def _tasks_list(self, params: JsonObject, session_id: str | None) -> JsonObject:
        cursor = params.get("cursor")
        after = None if cursor is None else self._decode_cursor(cursor)
        views, more = self.store.page(session_id, after, self.config.page_size)
        result: JsonObject = {"tasks": [self.task_wire(view) for view in views]}
        if more and views:
            result["nextCursor"] = self._encode_cursor(views[-1].sort_key)
        return result

    def _encode_cursor(self, key: tuple[int, int]) -> str:
        raw = f"{self._cursor_nonce}:{key[0]}:{key[1]}".encode()
        return base64.urlsafe_b64encode(raw).decode("ascii")

    def _decode_cursor(self, cursor: object) -> tuple[int, int]:
        try:
            if not isinstance(cursor, str):
                raise ValueError("not a string")
            raw = base64.urlsafe_b64decode(cursor.encode("ascii")).decode("ascii")
            nonce, micros, seq = raw.split(":")
            if nonce != self._cursor_nonce:
                raise ValueError("from another server run")
            return int(micros), int(seq)
        except (ValueError, UnicodeError, binascii.Error):
            raise JsonRpcError(INVALID_PARAMS, f"Invalid cursor: {cursor!r}") from None

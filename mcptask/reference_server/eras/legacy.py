"""Protocol logic of the 2025-11-25 ("legacy") era: one JSON-RPC message in, a reply out
(transports parse bytes, keep sessions and write answers)."""

from __future__ import annotations

import base64
import binascii
import secrets
from collections.abc import Callable
from functools import partial

from mcptask.reference_server.config import CancelMode, Scope, ServerConfig
from mcptask.reference_server.eras.asking import ClientQuestions
from mcptask.reference_server.records import SortKey, TaskView
from mcptask.reference_server.scripting import (
    TERMINAL_STATUSES,
    Emit,
    OnCancel,
    parse_ttl,
    resolve_long_job,
    run_script,
    task_result,
    tool_list,
)
from mcptask.reference_server.store import TaskStore
from mcptask.reference_server.wire import (
    INTERNAL_ERROR,
    INVALID_MESSAGE,
    INVALID_PARAMS,
    INVALID_REQUEST,
    LEGACY_TASK,
    LEGACY_VERSION,
    METHOD_NOT_FOUND,
    JsonObject,
    JsonRpcError,
    MessageKind,
    Reply,
    as_jsonrpc_error,
    call_result,
    classify,
    error_response,
    notification,
    request_id,
    result_response,
    server_info,
    simulate_latency,
    task_id_param,
)

STATUS_NOTIFICATION = "notifications/tasks/status"
LOGGER_NAME = "mcptask-reference"
INSTRUCTIONS = (
    "mcptask reference server: a demo and test target for MCP tasks. Call the long_job tool "
    "with params.task to create a task; list, get and cancel tasks with the tasks/* methods."
)


Handler = Callable[[JsonObject, str | None, Emit], JsonObject]


class LegacyDispatcher:
    """Answers MCP 2025-11-25 messages against a shared TaskStore.

    `session_id` identifies the caller: it scopes task visibility (--scope session) and is
    None only for callers outside any session. With --oauth the transport names the client
    each session belongs to (`principal_of`): in global scope, that client owns the tasks
    the session creates, and only its sessions see them.
    """

    def __init__(self, config: ServerConfig, store: TaskStore) -> None:
        self.config = config
        self.store = store
        # The client (OAuth principal) a session speaks for; None: nobody in particular.
        self.principal_of: Callable[[str | None], str | None] = lambda session_id: None
        # What a cancel does to a task without an onCancel of its own (--cancel-mode).
        self._cancel_default = OnCancel(kind="cancel")
        if config.cancel_mode is CancelMode.COOPERATIVE:
            self._cancel_default = OnCancel(kind="delay", delay_ms=config.cancel_delay_ms)
        # Cursors carry this nonce so that a cursor from another server run is rejected.
        self._cursor_nonce = secrets.token_hex(4)
        # Asking the client, when a task waits for input.
        self.asking = ClientQuestions(store)
        self._methods: dict[str, Handler] = {
            "initialize": self._initialize,
            "ping": lambda params, session, emit: {},
            "logging/setLevel": lambda params, session, emit: {},
            "tools/list": self._tools_list,
            # Tools may send notifications that belong to the call (progress, logs).
            "tools/call": self._tools_call,
        }
        if config.tasks_enabled:
            self._methods["tasks/get"] = self._tasks_get
            self._methods["tasks/result"] = self._tasks_result
            if config.list_enabled:
                self._methods["tasks/list"] = self._tasks_list
            if config.cancel_enabled:
                self._methods["tasks/cancel"] = self._tasks_cancel

    def handle(self, message: object, session_id: str | None, ask: Emit | None = None) -> Reply:
        """Answer `message` of a session. `ask` sends a request to the client on the stream
        of this request's answer, before the response (tasks/result asks there what its task
        asks); None: this answer cannot carry one."""
        kind = classify(message)
        if kind is MessageKind.INVALID:
            return Reply(error_response(request_id(message), INVALID_REQUEST, INVALID_MESSAGE))
        if kind is MessageKind.RESPONSE:
            assert isinstance(message, dict)
            self.asking.take_answer(message, session_id, self.owner(session_id))
            return Reply(None)
        if kind is not MessageKind.REQUEST:
            # notifications/initialized and notifications/cancelled need no answer.
            return Reply(None)
        assert isinstance(message, dict)
        method: str = message["method"]
        related = [
            notification(
                "notifications/message",
                {"level": "info", "logger": LOGGER_NAME, "data": f"handling {method}"},
            )
        ]
        response = self._answer(
            method, message.get("params"), message["id"], session_id, related.append, ask
        )
        return Reply(response, related)

    def closes_stream(self, message: object) -> bool:
        """True for a call of a tool whose SSE answer stream the transport closes early, to
        deliver the response on the resumed stream (ToolSet.closes_stream)."""
        tools = self.config.tools
        if tools is None or classify(message) is not MessageKind.REQUEST:
            return False
        assert isinstance(message, dict)
        params = message.get("params")
        if message["method"] != "tools/call" or not isinstance(params, dict):
            return False
        name = params.get("name")
        return isinstance(name, str) and tools.closes_stream(name, self.config.tasks_enabled)

    def task_wire(self, view: TaskView) -> JsonObject:
        return LEGACY_TASK.render(view, self.config.poll_interval_ms)

    def status_notification(self, view: TaskView) -> JsonObject:
        return notification(STATUS_NOTIFICATION, self.task_wire(view))

    def _answer(
        self,
        method: str,
        params: object,
        msg_id: str | int,
        session_id: str | None,
        emit: Emit,
        ask: Emit | None,
    ) -> JsonObject:
        handler = self._methods.get(method)
        if handler is not None and method == "tasks/result":
            handler = partial(self._tasks_result, ask=ask)
        if handler is None:
            return error_response(msg_id, METHOD_NOT_FOUND, f"Method not found: {method}")
        simulate_latency(self.config, method)
        if params is None:
            params = {}
        if not isinstance(params, dict):
            return error_response(msg_id, INVALID_PARAMS, "params must be an object")
        try:
            return result_response(msg_id, handler(params, session_id, emit))
        except Exception as exc:
            error = as_jsonrpc_error(exc, method)
            return error_response(msg_id, error.code, error.message, error.data)

    def owner(self, session_id: str | None) -> str | None:
        """Who owns a task the session creates, and which owned tasks it sees besides the
        shared ones: the session under --scope session, else its client (--oauth)."""
        if self.config.scope is Scope.SESSION:
            return session_id
        return self.principal_of(session_id)

    def requested_ttl(self, task_params: object) -> int | None:
        """The ttl a task-augmented call asks for (params.task.ttl), else the server's."""
        if not isinstance(task_params, dict):
            raise JsonRpcError(INVALID_PARAMS, "task must be an object")
        try:
            return parse_ttl(task_params.get("ttl", self.config.ttl_ms), "task.ttl")
        except ValueError as exc:
            raise JsonRpcError(INVALID_PARAMS, str(exc)) from None

    def capabilities(self) -> JsonObject:
        """ServerCapabilities, without the parts switched off on the command line (logging:
        the server sends notifications/message on SSE answers)."""
        capabilities: JsonObject = {}
        config = self.config
        if config.tasks_enabled:
            tasks: JsonObject = {
                name: {}
                for name, on in (("list", config.list_enabled), ("cancel", config.cancel_enabled))
                if on
            }
            capabilities["tasks"] = {**tasks, "requests": {"tools": {"call": {}}}}
        return {**capabilities, "tools": {}, "logging": {}}

    def _initialize(self, params: JsonObject, session_id: str | None, emit: Emit) -> JsonObject:
        self.asking.declared(session_id, params.get("capabilities"))
        # Version negotiation: this era speaks one version, whichever the client asked for.
        return {
            "protocolVersion": LEGACY_VERSION,
            "capabilities": self.capabilities(),
            "serverInfo": server_info(self.config),
            "instructions": INSTRUCTIONS,
        }

    def _tools_list(self, params: JsonObject, session_id: str | None, emit: Emit) -> JsonObject:
        return {"tools": tool_list(self.config, "legacy")}

    def _tools_call(self, params: JsonObject, session_id: str | None, emit: Emit) -> JsonObject:
        tools = self.config.tools
        answer = None if tools is None else tools.call_legacy(self, params, session_id, emit)
        if answer is not None:
            return answer
        job = resolve_long_job(params)
        task_params = params.get("task")
        # Without the tasks capability, task metadata is ignored and the call runs normally
        # (spec: receivers that do not declare it process the request as usual).
        if task_params is None or not self.config.tasks_enabled:
            return call_result(*run_script(job))
        ttl = self.requested_ttl(task_params)
        view = self.store.start(job, ttl, self.owner(session_id))
        self.asking.created(view.task_id, session_id)
        return {"task": self.task_wire(view)}

    def _tasks_get(self, params: JsonObject, session_id: str | None, emit: Emit) -> JsonObject:
        return self.task_wire(self.store.get(task_id_param(params), self.owner(session_id)))

    def _tasks_cancel(self, params: JsonObject, session_id: str | None, emit: Emit) -> JsonObject:
        strict = self.config.cancel_mode is not CancelMode.LENIENT
        view = self.store.cancel(
            task_id_param(params), self.owner(session_id), self._cancel_default, strict=strict
        )
        return self.task_wire(view)

    def _tasks_result(
        self, params: JsonObject, session_id: str | None, emit: Emit, ask: Emit | None = None
    ) -> JsonObject:
        """Block until the task ends; meanwhile ask the client, on this answer's stream,
        whatever the task asks (spec: a client calls tasks/result on input_required)."""
        task_id, owner = task_id_param(params), self.owner(session_id)
        asked: set[str] = set()

        def new_question(view: TaskView) -> bool:
            return ask is not None and bool(self.asking.askable(view, session_id) - asked)

        while (view := self.store.wait_terminal(task_id, owner, new_question)).status not in (
            TERMINAL_STATUSES
        ):
            assert ask is not None
            for key, request in self.asking.questions(view, session_id, asked):
                asked.add(key)
                ask(request)
        if view.status == "failed" and (error := view.call_error()) is not None:
            # The underlying request ended in a JSON-RPC error: tasks/result answers it.
            raise JsonRpcError(
                error.get("code", INTERNAL_ERROR),
                str(error.get("message", "")),
                error.get("data"),
            )
        return task_result(view)

    def _tasks_list(self, params: JsonObject, session_id: str | None, emit: Emit) -> JsonObject:
        cursor = params.get("cursor")
        after = None if cursor is None else self._decode_cursor(cursor)
        views, more = self.store.page(self.owner(session_id), after, self.config.page_size)
        result: JsonObject = {"tasks": [self.task_wire(view) for view in views]}
        if more and views:
            result["nextCursor"] = self._encode_cursor(views[-1].sort_key)
        return result

    def _encode_cursor(self, key: SortKey) -> str:
        raw = f"{self._cursor_nonce}:{key[0]}:{key[1]}".encode()
        return base64.urlsafe_b64encode(raw).decode("ascii")

    def _decode_cursor(self, cursor: object) -> SortKey:
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

"""Protocol logic of the 2026-07-28 ("modern") era with the tasks extension (SEP-2663).

Modern requests are stateless: each carries its protocol version and the client's capabilities
in `params._meta`. Without sessions they are served as viewer None, which sees the shared tasks
and never one of a legacy session (--scope session); tasks created here are shared. With
--oauth the viewer is the client of the request's token (`caller`), owner of what it creates.

The HTTP transport passes its header checks in as a validator, so that the checks run in the
order the specification implies: envelope, headers, version, capabilities, method.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from mcptask.reference_server.config import ServerConfig
from mcptask.reference_server.eras.modern_wire import (
    ACKNOWLEDGED_NOTIFICATION,
    LISTEN,
    META_SERVER_INFO,
    SUBSCRIPTION_ID_META,
    TASK_METHODS,
    TASK_NOTIFICATION,
    TASKS_EXTENSION,
    ModernError,
    ModernRequest,
    Subscription,
    SubscriptionHub,
    Validator,
    check_request,
    http_status_for,
    missing_tasks_capability,
    parse_request,
)
from mcptask.reference_server.records import TaskNotFoundError, TaskView
from mcptask.reference_server.scripting import (
    LONG_JOB,
    OnCancel,
    resolve_long_job,
    run_script,
    tool_list,
)
from mcptask.reference_server.store import TaskStore
from mcptask.reference_server.wire import (
    INTERNAL_ERROR,
    INVALID_MESSAGE,
    INVALID_PARAMS,
    INVALID_REQUEST,
    LEGACY_VERSION,
    METHOD_NOT_FOUND,
    MODERN_TASK,
    MODERN_VERSION,
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

Handler = Callable[[ModernRequest], JsonObject]

INSTRUCTIONS = (
    "mcptask reference server: a demo and test target for MCP tasks. Declare the "
    f"{TASKS_EXTENSION} extension and call the {LONG_JOB} tool to get a task; "
    "follow it with tasks/get or subscriptions/listen, answer its input with "
    "tasks/update, cancel it with tasks/cancel."
)


class ModernDispatcher:
    """Answers MCP 2026-07-28 messages (with the tasks extension) against a shared TaskStore."""

    def __init__(self, config: ServerConfig, store: TaskStore) -> None:
        self.config = config
        self.store = store
        versions = [MODERN_VERSION]
        if config.protocol_eras.legacy:
            versions.append(LEGACY_VERSION)
        self.supported_versions = versions
        self.hub = SubscriptionHub(
            lambda view: notification(TASK_NOTIFICATION, self.detailed_task(view))
        )
        if config.notify and config.tasks_enabled:
            # A subscription hears only of the tasks its listen agreed, which were visible
            # to its caller: a task of a legacy session or of another client never is.
            store.add_listener(self.hub.publish)
        self._default_cancel = OnCancel(kind="delay", delay_ms=config.modern_cancel_delay_ms)
        # ping was removed from 2026-07-28; it is kept here so that simple liveness probes
        # work in both eras.
        self._methods: dict[str, Handler] = {
            "server/discover": self._discover,
            "ping": lambda request: {"resultType": "complete"},
            "tools/list": self._tools_list,
            "tools/call": self._tools_call,
        }
        if config.tasks_enabled:
            self._methods["tasks/get"] = self._tasks_get
            self._methods["tasks/update"] = self._tasks_update
            if config.cancel_enabled:
                self._methods["tasks/cancel"] = self._tasks_cancel

    def handle(
        self, message: object, validate: Validator | None = None, caller: str | None = None
    ) -> Reply:
        """Process one decoded JSON-RPC message; `validate` adds transport checks; `caller`
        is who sends it (--oauth: the client of its token)."""
        kind = classify(message)
        if kind is MessageKind.INVALID:
            return Reply(
                error_response(request_id(message), INVALID_REQUEST, INVALID_MESSAGE),
                http_status=400,
            )
        if kind is not MessageKind.REQUEST:  # notifications and client responses: no answer
            return Reply(None, http_status=202)
        assert isinstance(message, dict)
        msg_id = message["id"]
        method: str = message["method"]
        try:
            request = parse_request(
                msg_id, method, message.get("params"), self.supported_versions, caller
            )
            if validate is not None:
                validate(request)
            check_request(request, self.supported_versions)
            if method == LISTEN:
                return self._listen(request)
            handler = self._methods.get(method)
            if handler is None:
                raise ModernError(METHOD_NOT_FOUND, f"Method not found: {method}")
            if method in TASK_METHODS and not request.declares_tasks:
                raise missing_tasks_capability()
            simulate_latency(self.config, method)
            result = handler(request)
            return Reply(result_response(msg_id, result), request.related)
        except Exception as exc:
            error = as_jsonrpc_error(exc, method)
            status = (
                error.http_status if isinstance(error, ModernError) else http_status_for(error.code)
            )
            response = error_response(msg_id, error.code, error.message, error.data)
            return Reply(response, http_status=status)

    def listen_closed(self, subscription: Subscription) -> JsonObject:
        """The response that ends a subscription the server tears down (at shutdown)."""
        return result_response(
            subscription.id,
            {"resultType": "complete", "_meta": {SUBSCRIPTION_ID_META: subscription.id}},
        )

    def task_wire(self, view: TaskView) -> JsonObject:
        return MODERN_TASK.render(view, self.config.poll_interval_ms)

    def detailed_task(self, view: TaskView) -> JsonObject:
        """The DetailedTask: the Task plus what its status carries inline (in this era
        `failed` means the request ended in a JSON-RPC error, its `error`)."""
        task = self.task_wire(view)
        if view.status == "completed":
            task["result"] = {"resultType": "complete", **view.call_result()}
        elif view.status == "failed":
            message = view.status_message or f"{LONG_JOB} failed"
            task["error"] = view.call_error() or {"code": INTERNAL_ERROR, "message": message}
        elif asked := view.questions():
            task["inputRequests"] = asked
        return task

    def capabilities(self) -> JsonObject:
        capabilities: JsonObject = {"tools": {}}
        if self.config.tasks_enabled:
            capabilities["extensions"] = {TASKS_EXTENSION: {}}
        return capabilities

    def _discover(self, request: ModernRequest) -> JsonObject:
        info = server_info(self.config)
        return {
            "resultType": "complete",
            "supportedVersions": list(self.supported_versions),
            "capabilities": self.capabilities(),
            # The schema puts the server's identity in _meta; the discover page's example
            # shows it in the result: both are given.
            "serverInfo": info,
            "instructions": INSTRUCTIONS,
            "ttlMs": 0,
            "cacheScope": "public",
            "_meta": {META_SERVER_INFO: info},
        }

    def _tools_list(self, request: ModernRequest) -> JsonObject:
        tools = tool_list(self.config, "modern")
        return {"resultType": "complete", "tools": tools, "ttlMs": 0, "cacheScope": "public"}

    def _tools_call(self, request: ModernRequest) -> JsonObject:
        tools = self.config.tools
        answer = None if tools is None else tools.call_modern(self, request)
        if answer is not None:
            return answer
        job = resolve_long_job(request.params)
        if self.config.tasks_enabled and request.declares_tasks:
            # The server decides: with the extension declared, long_job is always a task.
            view = self.store.start(job, self.config.ttl_ms, request.caller)
            return {"resultType": "task", **self.task_wire(view)}
        # Without the extension the call runs inline (the spec forbids a CreateTaskResult
        # for a client that did not declare it). `failed` is a JSON-RPC error in this era.
        status, message = run_script(job)
        if status == "failed":
            raise JsonRpcError(INTERNAL_ERROR, message)
        return {"resultType": "complete", **call_result(status, message)}

    def _tasks_get(self, request: ModernRequest) -> JsonObject:
        view = self.store.get(task_id_param(request.params), request.caller)
        return {"resultType": "complete", **self.detailed_task(view)}

    def _tasks_update(self, request: ModernRequest) -> JsonObject:
        task_id = task_id_param(request.params)
        responses = request.params.get("inputResponses")
        if not isinstance(responses, dict):
            raise JsonRpcError(INVALID_PARAMS, "inputResponses must be an object")
        self.store.provide_input(task_id, request.caller, responses)
        return {"resultType": "complete"}

    def _tasks_cancel(self, request: ModernRequest) -> JsonObject:
        task_id = task_id_param(request.params)
        self.store.cancel(task_id, request.caller, self._default_cancel, strict=False)
        return {"resultType": "complete"}

    def _listen(self, request: ModernRequest) -> Reply:
        notifications = request.params.get("notifications")
        if not isinstance(notifications, dict):
            raise JsonRpcError(INVALID_PARAMS, "notifications must be an object")
        agreed: JsonObject = {}
        requested = notifications.get("taskIds")
        if requested is not None and self.config.tasks_enabled:
            if not isinstance(requested, list) or not all(isinstance(t, str) for t in requested):
                raise JsonRpcError(
                    INVALID_PARAMS, "notifications.taskIds must be a list of strings"
                )
            if not request.declares_tasks:
                raise missing_tasks_capability()
            agreed["taskIds"] = (
                self._agreed_task_ids(requested, request.caller) if self.config.notify else []
            )
        # Other notification types (tools list changes, resources) are not offered: they
        # are left out of the acknowledgement, as the spec asks.
        subscription = self.hub.open(request.msg_id, frozenset(agreed.get("taskIds", ())))
        acknowledged = notification(
            ACKNOWLEDGED_NOTIFICATION,
            {"_meta": {SUBSCRIPTION_ID_META: request.msg_id}, "notifications": agreed},
        )
        return Reply(None, [acknowledged], subscription=subscription)

    def _agreed_task_ids(self, requested: list[str], caller: str | None) -> list[str]:
        """The requested ids of tasks this caller can see, once each."""
        agreed: list[str] = []
        for task_id in dict.fromkeys(requested):
            with contextlib.suppress(TaskNotFoundError):
                self.store.get(task_id, caller)
                agreed.append(task_id)
        return agreed

"""Protocol logic of the 2026-07-28 ("modern") era with the tasks extension (SEP-2663).

Modern requests are stateless: each carries its protocol version and the client's capabilities
in `params._meta`, and is answered on its own. There are no sessions, so the session scope of
the legacy era does not exist here: modern requests are served as viewer None, which sees the
shared tasks (seeded, scripted, created in global scope, or created by modern requests) and
never a task owned by a legacy session (--scope session). Tasks created here are shared, so
legacy sessions see them too. The TaskStore is the same one the LegacyDispatcher uses.

Transports pick the era per message (`is_modern_message`) and pass HTTP header checks in as a
validator, so that the checks run in the order the specification implies: envelope, headers,
version, capabilities, method.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import logging
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from mcptask import __version__
from mcptask.reference_server.config import ServerConfig
from mcptask.reference_server.dispatcher import PROTOCOL_VERSION as LEGACY_VERSION
from mcptask.reference_server.dispatcher import iso_utc
from mcptask.reference_server.fixtures import (
    Complete,
    FixtureTool,
    NeedInput,
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
from mcptask.reference_server.records import TaskNotFoundError, TaskView
from mcptask.reference_server.scripting import OnCancel
from mcptask.reference_server.store import TaskStore
from mcptask.reference_server.subscriptions import (
    SUBSCRIPTION_ID_META,
    Subscription,
    SubscriptionHub,
)
from mcptask.reference_server.tools import (
    LONG_JOB,
    call_result,
    parse_long_job,
    run_script,
    tool_definitions,
)

MODERN_VERSION = "2026-07-28"
META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
TASK_NOTIFICATION = "notifications/tasks"
ACKNOWLEDGED_NOTIFICATION = "notifications/subscriptions/acknowledged"
LISTEN = "subscriptions/listen"

# Error codes the 2026-07-28 specification defines (basic/index.mdx, "Error Codes").
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022

# Methods that exist only in the modern era: a request for one is modern even without _meta
# (and is then rejected for the missing _meta rather than answered as an unknown method).
MODERN_ONLY_METHODS = frozenset({"server/discover", LISTEN, "tasks/update"})
TASK_METHODS = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})

log = logging.getLogger("mcptask.reference_server")


def is_modern_message(message: object) -> bool:
    """True for a message the modern era serves: it carries
    `params._meta["io.modelcontextprotocol/protocolVersion"]`, or names a modern-only method."""
    if not isinstance(message, dict):
        return False
    if message.get("method") in MODERN_ONLY_METHODS:
        return True
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and META_PROTOCOL_VERSION in meta


def http_status_for(code: int) -> int:
    """The HTTP status of a modern error answer (404 for unknown methods, 400 for the
    modern protocol errors); other JSON-RPC errors travel in a 200 answer."""
    if code == METHOD_NOT_FOUND:
        return 404
    if code in (HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION):
        return 400
    return 200


class ModernError(JsonRpcError):
    """A JSON-RPC error with the HTTP status it is answered with."""

    def __init__(
        self, code: int, message: str, data: object = None, http_status: int | None = None
    ) -> None:
        super().__init__(code, message, data)
        self.http_status = http_status_for(code) if http_status is None else http_status


@dataclass(frozen=True)
class ModernRequest:
    """A request whose _meta declared a protocol version (not yet checked against ours)."""

    msg_id: str | int
    method: str
    params: JsonObject
    version: str
    capabilities: JsonObject | None
    # Notifications that belong to this request (progress, log messages): sent before its
    # response on an SSE answer.
    related: list[JsonObject] = field(default_factory=list, compare=False)

    @property
    def declares_tasks(self) -> bool:
        """True when the client declared the tasks extension on this request."""
        extensions = (self.capabilities or {}).get("extensions")
        return isinstance(extensions, dict) and isinstance(extensions.get(TASKS_EXTENSION), dict)

    @property
    def declares_elicitation(self) -> bool:
        """True when the client can answer form elicitations (an `elicitation` object,
        empty or with `form`)."""
        elicitation = (self.capabilities or {}).get("elicitation")
        if not isinstance(elicitation, dict):
            return False
        return not elicitation or isinstance(elicitation.get("form"), dict)


@dataclass
class ModernReply:
    """What a modern message produced.

    `response` is None for notifications (HTTP 202) and for an opened subscription, whose
    `related` holds the acknowledgement and whose later notifications come from
    `subscription`; the response of a subscription is sent only when the server ends it.
    """

    response: JsonObject | None
    http_status: int = 200
    related: list[JsonObject] = field(default_factory=list)
    subscription: Subscription | None = None


# Checks a transport adds (HTTP headers); raises ModernError.
Validator = Callable[[ModernRequest], None]
Handler = Callable[[ModernRequest], JsonObject]


class ModernDispatcher:
    """Answers MCP 2026-07-28 messages (with the tasks extension) against a shared TaskStore."""

    protocol_version = MODERN_VERSION

    def __init__(self, config: ServerConfig, store: TaskStore) -> None:
        self.config = config
        self.store = store
        versions = [MODERN_VERSION]
        if config.protocol_eras.legacy:
            versions.append(LEGACY_VERSION)
        self.supported_versions = versions
        self.hub = SubscriptionHub(self.task_notification)
        if config.notify and config.tasks_enabled:
            store.add_listener(self._publish)
        self._default_cancel = OnCancel(kind="delay", delay_ms=config.modern_cancel_delay_ms)
        self._fixtures = (
            fixture_tools("modern", config.tasks_enabled) if config.conformance_fixtures else {}
        )
        # Signs the requestState handed out by multi round-trip requests: the state comes
        # back from the client and must not be forged.
        self._state_key = secrets.token_bytes(32)
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

    # -- entry points ---------------------------------------------------------------------

    def handle(self, message: object, validate: Validator | None = None) -> ModernReply:
        """Process one decoded JSON-RPC message; `validate` adds transport checks."""
        kind = classify(message)
        if kind is MessageKind.INVALID:
            return ModernReply(
                error_response(request_id(message), INVALID_REQUEST, "Invalid JSON-RPC message"),
                400,
            )
        if kind is not MessageKind.REQUEST:
            return ModernReply(None, 202)  # notifications and client responses: nothing to do
        assert isinstance(message, dict)
        msg_id = message["id"]
        method: str = message["method"]
        try:
            request = self._parse(msg_id, method, message.get("params"))
            if validate is not None:
                validate(request)
            self._check_request(request)
            if method == LISTEN:
                return self._listen(request)
            handler = self._methods.get(method)
            if handler is None:
                raise ModernError(METHOD_NOT_FOUND, f"Method not found: {method}")
            if method in TASK_METHODS and not request.declares_tasks:
                raise _missing_tasks_capability()
            if method.startswith("tasks/") and self.config.latency_ms > 0:
                time.sleep(self.config.latency_ms / 1000)
            result = handler(request)
            return ModernReply(result_response(msg_id, result), related=request.related)
        except ModernError as exc:
            return ModernReply(
                error_response(msg_id, exc.code, exc.message, exc.data), exc.http_status
            )
        except JsonRpcError as exc:
            return ModernReply(
                error_response(msg_id, exc.code, exc.message, exc.data),
                http_status_for(exc.code),
            )
        except TaskNotFoundError as exc:
            return ModernReply(error_response(msg_id, INVALID_PARAMS, str(exc)))
        except Exception:
            log.exception("internal error while handling %s", method)
            return ModernReply(error_response(msg_id, INTERNAL_ERROR, "Internal error"))

    def may_block(self, message: object) -> bool:
        """True when answering takes long: a tools/call run inline (no task)."""
        if classify(message) is not MessageKind.REQUEST:
            return False
        assert isinstance(message, dict)
        if message["method"] != "tools/call":
            return False
        params = message.get("params")
        meta = params.get("_meta") if isinstance(params, dict) else None
        capabilities = meta.get(META_CLIENT_CAPABILITIES) if isinstance(meta, dict) else None
        request = ModernRequest(
            message["id"],
            "tools/call",
            {},
            MODERN_VERSION,
            capabilities if isinstance(capabilities, dict) else None,
        )
        return not (self.config.tasks_enabled and request.declares_tasks)

    def listen_closed(self, subscription: Subscription) -> JsonObject:
        """The response that ends a subscription the server tears down (e.g. at shutdown)."""
        return result_response(
            subscription.id,
            {"resultType": "complete", "_meta": {SUBSCRIPTION_ID_META: subscription.id}},
        )

    # -- wire shapes ----------------------------------------------------------------------

    def server_info(self) -> JsonObject:
        """The Implementation object naming this server."""
        return {"name": self.config.server_name, "version": __version__}

    def task_wire(self, view: TaskView) -> JsonObject:
        """The Task object as the tasks extension spells it (ttlMs, pollIntervalMs)."""
        task: JsonObject = {"taskId": view.task_id, "status": view.status}
        if view.status_message is not None:
            task["statusMessage"] = view.status_message
        task["createdAt"] = iso_utc(view.created_at)
        task["lastUpdatedAt"] = iso_utc(view.last_updated_at)
        task["ttlMs"] = view.ttl_ms
        task["pollIntervalMs"] = self.config.poll_interval_ms
        return task

    def detailed_task(self, view: TaskView) -> JsonObject:
        """The DetailedTask: the Task plus what its status carries inline.

        completed: `result`, the CallToolResult; failed: `error`, a JSON-RPC error object
        (in this era `failed` means the request ended in a JSON-RPC error);
        input_required: `inputRequests`, the outstanding elicitation keyed by its id.
        """
        task = self.task_wire(view)
        if view.status == "completed":
            result = view.result
            if result is None:
                result = call_result("completed", view.status_message)
            task["result"] = {"resultType": "complete", **result}
        elif view.status == "failed":
            error = view.error
            if error is None:
                error = {
                    "code": INTERNAL_ERROR,
                    "message": view.status_message or f"{LONG_JOB} failed",
                }
            task["error"] = error
        elif view.status == "input_required" and view.input_requests:
            task["inputRequests"] = dict(view.input_requests)
        elif view.status == "input_required" and view.input_key is not None:
            task["inputRequests"] = {view.input_key: _elicitation(view)}
        return task

    def task_notification(self, view: TaskView) -> JsonObject:
        """notifications/tasks for a changed task: the DetailedTask, flat in params."""
        return notification(TASK_NOTIFICATION, self.detailed_task(view))

    def _publish(self, view: TaskView) -> None:
        # A task owned by a legacy session (--scope session) is never visible to a modern
        # caller, so its changes are not pushed either.
        if view.owner is None:
            self.hub.publish(view)

    # -- request plumbing -----------------------------------------------------------------

    def _parse(self, msg_id: str | int, method: str, params: object) -> ModernRequest:
        if params is None:
            params = {}
        if not isinstance(params, dict):
            raise ModernError(INVALID_PARAMS, "params must be an object", http_status=400)
        meta = params.get("_meta")
        if not isinstance(meta, dict) or META_PROTOCOL_VERSION not in meta:
            if method == "initialize":
                # A legacy client at a modern-only server: name what we support, since a
                # legacy client has no way forward and this message may be all it can show.
                raise self._unsupported(params.get("protocolVersion"), handshake=True)
            raise ModernError(
                INVALID_PARAMS,
                f"Missing required _meta field {META_PROTOCOL_VERSION}",
                http_status=400,
            )
        version = meta[META_PROTOCOL_VERSION]
        if not isinstance(version, str):
            raise ModernError(
                INVALID_PARAMS, f"_meta {META_PROTOCOL_VERSION} must be a string", http_status=400
            )
        capabilities = meta.get(META_CLIENT_CAPABILITIES)
        return ModernRequest(
            msg_id,
            method,
            params,
            version,
            capabilities if isinstance(capabilities, dict) else None,
        )

    def _check_request(self, request: ModernRequest) -> None:
        if request.version != MODERN_VERSION:
            raise self._unsupported(request.version, handshake=False)
        if request.capabilities is None:
            raise ModernError(
                INVALID_PARAMS,
                f"Missing required _meta field {META_CLIENT_CAPABILITIES} (an object)",
                http_status=400,
            )

    def _unsupported(self, requested: object, *, handshake: bool) -> ModernError:
        supported = ", ".join(self.supported_versions)
        if handshake:
            text = (
                "Unsupported protocol version: this server speaks only "
                f"{supported}, without the initialize handshake (supported versions: "
                f"{supported})"
            )
        elif requested == LEGACY_VERSION:
            text = (
                f"Unsupported protocol version: {LEGACY_VERSION} is served only after an "
                f"initialize handshake (supported versions: {supported})"
            )
        else:
            text = f"Unsupported protocol version: {requested} (supported versions: {supported})"
        return ModernError(
            UNSUPPORTED_PROTOCOL_VERSION,
            text,
            {"supported": list(self.supported_versions), "requested": str(requested or "")},
        )

    @staticmethod
    def _task_id(params: JsonObject) -> str:
        task_id = params.get("taskId")
        if not isinstance(task_id, str):
            raise JsonRpcError(INVALID_PARAMS, "taskId must be a string")
        return task_id

    # -- methods --------------------------------------------------------------------------

    def capabilities(self) -> JsonObject:
        """ServerCapabilities of this era: tools, and the tasks extension unless --no-tasks."""
        capabilities: JsonObject = {"tools": {}}
        if self.config.tasks_enabled:
            capabilities["extensions"] = {TASKS_EXTENSION: {}}
        return capabilities

    def _discover(self, request: ModernRequest) -> JsonObject:
        info = self.server_info()
        return {
            "resultType": "complete",
            "supportedVersions": list(self.supported_versions),
            "capabilities": self.capabilities(),
            # The schema puts the server's identity in _meta; the discover page's example
            # shows it in the result: both are given.
            "serverInfo": info,
            "instructions": (
                "mcptask reference server: a demo and test target for MCP tasks. Declare the "
                f"{TASKS_EXTENSION} extension and call the {LONG_JOB} tool to get a task; "
                "follow it with tasks/get or subscriptions/listen, answer its input with "
                "tasks/update, cancel it with tasks/cancel."
            ),
            "ttlMs": 0,
            "cacheScope": "public",
            "_meta": {META_SERVER_INFO: info},
        }

    def _tools_list(self, request: ModernRequest) -> JsonObject:
        tools = tool_definitions(self.config.tasks_enabled, modern=True)
        tools += [
            tool.definition(modern=True, tasks_enabled=self.config.tasks_enabled)
            for tool in self._fixtures.values()
        ]
        return {"resultType": "complete", "tools": tools, "ttlMs": 0, "cacheScope": "public"}

    def _tools_call(self, request: ModernRequest) -> JsonObject:
        params = request.params
        name = params.get("name")
        fixture = self._fixtures.get(name) if isinstance(name, str) else None
        if fixture is not None:
            return self._call_fixture(fixture, request)
        if name != LONG_JOB:
            raise JsonRpcError(INVALID_PARAMS, f"Unknown tool: {name}")
        try:
            job = parse_long_job(params.get("arguments"))
        except ValueError as exc:
            raise JsonRpcError(INVALID_PARAMS, f"Invalid arguments for {LONG_JOB}: {exc}") from None
        if self.config.tasks_enabled and request.declares_tasks:
            # The server decides: with the extension declared, long_job is always a task.
            view = self.store.create(
                status_message=job.start_message,
                ttl_ms=self.config.ttl_ms,
                steps=job.steps,
                on_cancel=job.on_cancel,
                await_input=job.await_input,
            )
            return {"resultType": "task", **self.task_wire(view)}
        # Without the extension the call runs inline (the spec forbids a CreateTaskResult
        # for a client that did not declare it). `failed` is a JSON-RPC error in this era.
        status, message = run_script(job)
        if status == "failed":
            raise JsonRpcError(INTERNAL_ERROR, message)
        return {"resultType": "complete", **call_result(status, message)}

    def _call_fixture(self, tool: FixtureTool, request: ModernRequest) -> JsonObject:
        """tools/call of a conformance fixture tool: a result, an InputRequiredResult (multi
        round-trip request), or a task (only for a client that declared the extension)."""
        params = request.params
        as_task = self.config.tasks_enabled and request.declares_tasks
        if tool.task_support == "required" and not as_task:
            raise _missing_tasks_capability()
        if tool.needs_elicitation and not request.declares_elicitation:
            raise ModernError(
                MISSING_REQUIRED_CLIENT_CAPABILITY,
                "Missing required client capability: elicitation",
                {"requiredCapabilities": {"elicitation": {}}},
            )
        arguments = params.get("arguments", {})
        if not isinstance(arguments, dict):
            raise JsonRpcError(INVALID_PARAMS, "arguments must be an object")
        responses = params.get("inputResponses", {})
        if not isinstance(responses, dict):
            raise JsonRpcError(INVALID_PARAMS, "inputResponses must be an object")
        token = params.get("requestState")
        state = None if token is None else self._open_state(tool.name, token)
        meta = params.get("_meta")
        assert isinstance(meta, dict)  # _parse checked it
        progress_token = meta.get("progressToken")
        log_level = meta.get(META_LOG_LEVEL)
        call = ToolCall(
            name=tool.name,
            arguments=arguments,
            era="modern",
            as_task=as_task,
            input_responses=responses,
            state=state,
            progress_token=(
                progress_token
                if isinstance(progress_token, str | int) and not isinstance(progress_token, bool)
                else None
            ),
            log_level=log_level if isinstance(log_level, str) else None,
            emit=request.related.append,
        )
        outcome = tool.run(call)
        if isinstance(outcome, Complete):
            return {"resultType": "complete", **outcome.result}
        if isinstance(outcome, NeedInput):
            result: JsonObject = {"resultType": "input_required", "inputRequests": outcome.requests}
            if outcome.state is not None:
                result["requestState"] = self._seal_state(tool.name, outcome.state)
            return result
        assert isinstance(outcome, StartTask)
        assert as_task, f"{tool.name} answered with a task that the client cannot take"
        view = self.store.create(status_message=outcome.message, ttl_ms=self.config.ttl_ms)
        launch(self.store, view.task_id, outcome.work)
        return {"resultType": "task", **self.task_wire(view)}

    def _seal_state(self, tool: str, state: JsonObject) -> str:
        """requestState: the state as Base64 JSON, with an HMAC that binds it to the tool."""
        payload = base64.urlsafe_b64encode(
            json.dumps({"tool": tool, "state": state}, separators=(",", ":")).encode()
        ).decode("ascii")
        return f"{payload}.{self._state_mac(payload)}"

    def _open_state(self, tool: str, token: object) -> JsonObject:
        """The state sealed in a requestState this server handed out for `tool`."""
        try:
            if not isinstance(token, str):
                raise ValueError("not a string")
            payload, _, mac = token.rpartition(".")
            if not hmac.compare_digest(mac, self._state_mac(payload)):
                raise ValueError("bad signature")
            sealed = json.loads(base64.urlsafe_b64decode(payload.encode("ascii")))
            if sealed.get("tool") != tool or not isinstance(sealed.get("state"), dict):
                raise ValueError("issued for another tool")
            state: JsonObject = sealed["state"]
            return state
        except (ValueError, UnicodeError, binascii.Error, AttributeError):
            raise JsonRpcError(
                INVALID_PARAMS, "Invalid requestState: not one this server issued for this tool"
            ) from None

    def _state_mac(self, payload: str) -> str:
        return hmac.new(self._state_key, payload.encode("ascii"), hashlib.sha256).hexdigest()

    def _tasks_get(self, request: ModernRequest) -> JsonObject:
        view = self.store.get(self._task_id(request.params), None)
        return {"resultType": "complete", **self.detailed_task(view)}

    def _tasks_update(self, request: ModernRequest) -> JsonObject:
        task_id = self._task_id(request.params)
        responses = request.params.get("inputResponses")
        if not isinstance(responses, dict):
            raise JsonRpcError(INVALID_PARAMS, "inputResponses must be an object")
        self.store.provide_input(task_id, None, responses)
        return {"resultType": "complete"}

    def _tasks_cancel(self, request: ModernRequest) -> JsonObject:
        self.store.request_cancel(self._task_id(request.params), None, self._default_cancel)
        return {"resultType": "complete"}

    def _listen(self, request: ModernRequest) -> ModernReply:
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
                raise _missing_tasks_capability()
            agreed["taskIds"] = self._agreed_task_ids(requested) if self.config.notify else []
        # Other notification types (tools list changes, resources) are not offered: they
        # are left out of the acknowledgement, as the spec asks.
        subscription = self.hub.open(request.msg_id, frozenset(agreed.get("taskIds", ())))
        acknowledged = notification(
            ACKNOWLEDGED_NOTIFICATION,
            {"_meta": {SUBSCRIPTION_ID_META: request.msg_id}, "notifications": agreed},
        )
        return ModernReply(None, 200, [acknowledged], subscription)

    def _agreed_task_ids(self, requested: list[str]) -> list[str]:
        """The requested ids of tasks this (sessionless) caller can see, once each."""
        agreed: list[str] = []
        for task_id in dict.fromkeys(requested):
            try:
                self.store.get(task_id, None)
            except TaskNotFoundError:
                continue
            agreed.append(task_id)
        return agreed


def _missing_tasks_capability() -> ModernError:
    return ModernError(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        f"Missing required client capability: extensions.{TASKS_EXTENSION}",
        {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
    )


def _elicitation(view: TaskView) -> JsonObject:
    """The input request of an input_required task: a form elicitation asking for text."""
    return {
        "method": "elicitation/create",
        "params": {
            "mode": "form",
            "message": view.status_message or "The task needs input to continue.",
            "requestedSchema": {
                "type": "object",
                "properties": {"answer": {"type": "string"}},
                "required": ["answer"],
            },
        },
    }

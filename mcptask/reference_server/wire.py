"""The server's side of the wire: JSON-RPC 2.0 (error codes, message kinds, responses, the
one-line encoding every transport writes) and the MCP objects both protocol eras write alike
(the Task object, task ids, elicitations, errors): what differs is a parameter."""

from __future__ import annotations

import enum
import json
import logging
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeGuard

from mcptask import __version__

if TYPE_CHECKING:
    from mcptask.reference_server.config import ServerConfig
    from mcptask.reference_server.eras.modern_wire import Subscription
    from mcptask.reference_server.records import TaskView

JsonObject = dict[str, Any]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

LEGACY_VERSION = "2025-11-25"
MODERN_VERSION = "2026-07-28"
ELICITATION_CREATE = "elicitation/create"
INVALID_MESSAGE = "Invalid JSON-RPC message"

log = logging.getLogger("mcptask.reference_server")


class JsonRpcError(Exception):
    """A JSON-RPC error to be answered to the peer (code, message, optional data)."""

    def __init__(self, code: int, message: str, data: object = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class MessageKind(enum.Enum):
    """What a decoded JSON value is, as far as JSON-RPC is concerned."""

    REQUEST = "request"
    NOTIFICATION = "notification"
    RESPONSE = "response"
    INVALID = "invalid"


def is_valid_id(value: object) -> TypeGuard[str | int]:
    # bool is an int subclass in Python, but `true` is not a valid JSON-RPC id.
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def classify(message: object) -> MessageKind:
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return MessageKind.INVALID
    if "method" in message:
        if not isinstance(message["method"], str):
            return MessageKind.INVALID
        if "params" in message and not isinstance(message["params"], dict | list):
            return MessageKind.INVALID
        if "id" not in message:
            return MessageKind.NOTIFICATION
        return MessageKind.REQUEST if is_valid_id(message["id"]) else MessageKind.INVALID
    has_result, has_error = "result" in message, "error" in message
    if "id" in message and has_result != has_error:
        return MessageKind.RESPONSE
    return MessageKind.INVALID


def request_id(message: object) -> str | int | None:
    """The id of a message when it has a valid one (for error answers)."""
    value = message.get("id") if isinstance(message, dict) else None
    return value if is_valid_id(value) else None


def result_response(msg_id: str | int | None, result: JsonObject) -> JsonObject:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def error_response(
    msg_id: str | int | None, code: int, message: str, data: object = None
) -> JsonObject:
    """An error response; without a request id (a parse error, say) the `id` member is left
    out: the MCP schema makes it optional and allows no null."""
    error: JsonObject = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    if msg_id is None:
        return {"jsonrpc": "2.0", "error": error}
    return {"jsonrpc": "2.0", "id": msg_id, "error": error}


def notification(method: str, params: JsonObject) -> JsonObject:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def encode_message(message: JsonObject) -> str:
    """One JSON-RPC message as compact single-line JSON (ASCII, so any text is safe)."""
    return json.dumps(message, separators=(",", ":"))


@dataclass
class Reply:
    """What a dispatcher made of a message: the response (None for a notification, and for
    an opened subscription, whose response is sent only when the server ends it), the
    notifications that belong to the request (sent before the response on an SSE answer; a
    subscription's acknowledgement), and, in 2026-07-28, the HTTP status and the opened
    subscription, whose later notifications it delivers."""

    response: JsonObject | None
    related: list[JsonObject] = field(default_factory=list)
    http_status: int = 200
    subscription: Subscription | None = None


def iso_utc(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class TaskShape:
    """How one era spells the Task object: the names of its two timing fields."""

    ttl: str
    poll_interval: str

    def render(self, view: TaskView, poll_interval_ms: int) -> JsonObject:
        """The Task object of `view`, its fields in the schemas' order."""
        task: JsonObject = {"taskId": view.task_id, "status": view.status}
        if view.status_message is not None:
            task["statusMessage"] = view.status_message
        task["createdAt"] = iso_utc(view.created_at)
        task["lastUpdatedAt"] = iso_utc(view.last_updated_at)
        task[self.ttl] = view.ttl_ms
        task[self.poll_interval] = poll_interval_ms
        return task


# 2025-11-25 (schema.ts, Task) and the 2026-07-28 tasks extension (SEP-2663, Task).
LEGACY_TASK = TaskShape(ttl="ttl", poll_interval="pollInterval")
MODERN_TASK = TaskShape(ttl="ttlMs", poll_interval="pollIntervalMs")


def task_id_param(params: JsonObject) -> str:
    """params.taskId of a tasks/* request; -32602 unless it is a string."""
    task_id = params.get("taskId")
    if not isinstance(task_id, str):
        raise JsonRpcError(INVALID_PARAMS, "taskId must be a string")
    return task_id


def server_info(config: ServerConfig) -> JsonObject:
    return {"name": config.server_name, "version": __version__}


def call_result(status: str, message: str | None) -> JsonObject:
    """The CallToolResult of a long_job that ended in `status`."""
    text = message or f"long_job ended: {status}"
    return {"content": [{"type": "text", "text": text}], "isError": status != "completed"}


def form_elicitation(message: str, properties: JsonObject, required: list[str]) -> JsonObject:
    return {
        "method": ELICITATION_CREATE,
        "params": {
            "mode": "form",
            "message": message,
            "requestedSchema": {"type": "object", "properties": properties, "required": required},
        },
    }


def simulate_latency(config: ServerConfig, method: str) -> None:
    """--latency: sleep before answering a tasks/* request (in real time, whatever the
    store's clock)."""
    if method.startswith("tasks/") and config.latency_ms > 0:
        time.sleep(config.latency_ms / 1000)


def as_jsonrpc_error(exc: Exception, method: str) -> JsonRpcError:
    """The JSON-RPC error that answers a request whose handling raised `exc`; anything
    unexpected is a bug, logged with its traceback and answered without details."""
    if isinstance(exc, JsonRpcError):
        return exc
    log.error("internal error while handling %s", method, exc_info=exc)
    return JsonRpcError(INTERNAL_ERROR, "Internal error")

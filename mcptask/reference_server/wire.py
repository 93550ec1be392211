"""MCP objects both protocol eras write alike (the Task object, task ids, elicitations,
errors): what they have in common is spelled once, what differs is a parameter."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from mcptask import __version__
from mcptask.reference_server.config import ServerConfig
from mcptask.reference_server.records import TaskNotFoundError, TaskTerminalError, TaskView
from mcptask.reference_server.rpc import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    JsonObject,
    JsonRpcError,
)

if TYPE_CHECKING:
    from mcptask.reference_server.eras.subscriptions import Subscription

LEGACY_VERSION = "2025-11-25"
MODERN_VERSION = "2026-07-28"
ELICITATION_CREATE = "elicitation/create"
INVALID_MESSAGE = "Invalid JSON-RPC message"

log = logging.getLogger("mcptask.reference_server")


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
    """ISO 8601 in UTC with a `Z` suffix, to the millisecond."""
    return moment.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class TaskShape:
    """How one era spells the Task object: the names of its two timing fields (ms)."""

    ttl: str
    poll_interval: str

    def render(self, view: TaskView, poll_interval_ms: int) -> JsonObject:
        """The Task object of `view`, in the field order of the schemas."""
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


def form_elicitation(message: str, properties: JsonObject, required: list[str]) -> JsonObject:
    """An elicitation/create input request with a form of these properties."""
    return {
        "method": ELICITATION_CREATE,
        "params": {
            "mode": "form",
            "message": message,
            "requestedSchema": {"type": "object", "properties": properties, "required": required},
        },
    }


def url_elicitation(message: str, url: str, elicitation_id: str) -> JsonObject:
    """An elicitation/create input request asking to visit `url` (URL mode)."""
    return {
        "method": ELICITATION_CREATE,
        "params": {"mode": "url", "message": message, "url": url, "elicitationId": elicitation_id},
    }


def input_requests_of(view: TaskView) -> dict[str, JsonObject]:
    """What an input_required task asks, by key (both eras ask the same): the requests of a
    task driven by code, else one form asking for text, `answer`, under the task's input key."""
    if view.status != "input_required":
        return {}
    if view.input_requests:
        return dict(view.input_requests)
    if view.input_key is None:
        return {}
    message = view.status_message or "The task needs input to continue."
    if view.ask_url is not None:
        visit = url_elicitation(message, view.ask_url, f"{view.task_id}-{view.input_key}")
        return {view.input_key: visit}
    return {view.input_key: form_elicitation(message, {"answer": {"type": "string"}}, ["answer"])}


def simulate_latency(config: ServerConfig, method: str) -> None:
    """--latency: sleep before answering a tasks/* request (a fault for client tests, in
    real time whatever the store's clock)."""
    if method.startswith("tasks/") and config.latency_ms > 0:
        time.sleep(config.latency_ms / 1000)


def as_jsonrpc_error(exc: Exception, method: str) -> JsonRpcError:
    """The JSON-RPC error that answers a request whose handling raised `exc`; anything
    unexpected is a bug, logged with its traceback and answered without details."""
    if isinstance(exc, JsonRpcError):
        return exc
    if isinstance(exc, TaskNotFoundError | TaskTerminalError):
        return JsonRpcError(INVALID_PARAMS, str(exc))
    log.error("internal error while handling %s", method, exc_info=exc)
    return JsonRpcError(INTERNAL_ERROR, "Internal error")

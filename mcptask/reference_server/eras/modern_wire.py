"""The 2026-07-28 era's wire vocabulary: `_meta` keys, error codes and their HTTP statuses,
the request envelope (parsed and checked), and `subscriptions/listen`: a Subscription is one
open listen request (the task ids it agreed to, and the notifications waiting to be written);
the hub fans store changes out to the subscriptions of the changed task. Transports drain a
subscription (an SSE stream on HTTP, lines on stdio) until either side closes it."""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from mcptask.reference_server.records import TaskView
from mcptask.reference_server.wire import (
    INVALID_PARAMS,
    LEGACY_VERSION,
    METHOD_NOT_FOUND,
    MODERN_VERSION,
    JsonObject,
    JsonRpcError,
)

META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_SERVER_INFO = "io.modelcontextprotocol/serverInfo"
META_LOG_LEVEL = "io.modelcontextprotocol/logLevel"
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
TASK_NOTIFICATION = "notifications/tasks"
ACKNOWLEDGED_NOTIFICATION = "notifications/subscriptions/acknowledged"
LISTEN = "subscriptions/listen"
SUBSCRIPTION_ID_META = "io.modelcontextprotocol/subscriptionId"

# Error codes the 2026-07-28 specification defines (basic/index.mdx, "Error Codes").
HEADER_MISMATCH = -32020
MISSING_REQUIRED_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022

# Methods that exist only in the modern era: the router takes a request for one as modern
# even without _meta (it is then rejected for the missing _meta rather than answered as an
# unknown method).
MODERN_ONLY_METHODS = frozenset({"server/discover", LISTEN, "tasks/update"})
TASK_METHODS = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})


def http_status_for(code: int) -> int:
    """The HTTP status of a modern error answer; other JSON-RPC errors travel in a 200."""
    if code == METHOD_NOT_FOUND:
        return 404
    modern = (HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION)
    return 400 if code in modern else 200


class ModernError(JsonRpcError):
    def __init__(
        self, code: int, message: str, data: object = None, http_status: int | None = None
    ) -> None:
        super().__init__(code, message, data)
        self.http_status = http_status_for(code) if http_status is None else http_status


def declares_tasks(capabilities: object) -> bool:
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    return isinstance(extensions, dict) and isinstance(extensions.get(TASKS_EXTENSION), dict)


def client_capabilities(params: object) -> JsonObject | None:
    meta = params.get("_meta") if isinstance(params, dict) else None
    capabilities = meta.get(META_CLIENT_CAPABILITIES) if isinstance(meta, dict) else None
    return capabilities if isinstance(capabilities, dict) else None


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
    # Who sends it (--oauth: the client of its token), the owner of the tasks it creates.
    caller: str | None = None

    @property
    def declares_tasks(self) -> bool:
        return declares_tasks(self.capabilities)


# Checks a transport adds (HTTP headers); raises ModernError.
Validator = Callable[[ModernRequest], None]


def parse_request(
    msg_id: str | int, method: str, params: object, supported: list[str], caller: str | None
) -> ModernRequest:
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise ModernError(INVALID_PARAMS, "params must be an object", http_status=400)
    meta = params.get("_meta")
    if not isinstance(meta, dict) or META_PROTOCOL_VERSION not in meta:
        if method == "initialize":
            # A legacy client at a modern-only server: name what we support, since a
            # legacy client has no way forward and this message may be all it can show.
            raise unsupported_version(params.get("protocolVersion"), supported, handshake=True)
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
    capabilities = client_capabilities(params)
    return ModernRequest(msg_id, method, params, version, capabilities, caller=caller)


def check_request(request: ModernRequest, supported: list[str]) -> None:
    if request.version != MODERN_VERSION:
        raise unsupported_version(request.version, supported, handshake=False)
    if request.capabilities is None:
        raise ModernError(
            INVALID_PARAMS,
            f"Missing required _meta field {META_CLIENT_CAPABILITIES} (an object)",
            http_status=400,
        )


def unsupported_version(requested: object, supported: list[str], *, handshake: bool) -> ModernError:
    """-32022, naming the versions served (`handshake`: the request was an initialize)."""
    names = ", ".join(supported)
    if handshake:
        text = (
            f"Unsupported protocol version: this server speaks only {names}, without the "
            f"initialize handshake (supported versions: {names})"
        )
    elif requested == LEGACY_VERSION:
        text = (
            f"Unsupported protocol version: {LEGACY_VERSION} is served only after an "
            f"initialize handshake (supported versions: {names})"
        )
    else:
        text = f"Unsupported protocol version: {requested} (supported versions: {names})"
    return ModernError(
        UNSUPPORTED_PROTOCOL_VERSION,
        text,
        {"supported": list(supported), "requested": str(requested or "")},
    )


def missing_tasks_capability() -> ModernError:
    """-32021: the request needs the tasks extension, which the client did not declare."""
    return ModernError(
        MISSING_REQUIRED_CLIENT_CAPABILITY,
        f"Missing required client capability: extensions.{TASKS_EXTENSION}",
        {"requiredCapabilities": {"extensions": {TASKS_EXTENSION: {}}}},
    )


# -- subscriptions/listen ------------------------------------------------------------------


class Subscription:
    """One open `subscriptions/listen` request and its undelivered notifications."""

    def __init__(self, subscription_id: str | int, task_ids: frozenset[str]) -> None:
        self.id = subscription_id
        self.task_ids = task_ids
        self._pending: queue.SimpleQueue[JsonObject | None] = queue.SimpleQueue()
        self._closed = False

    def push(self, message: JsonObject) -> None:
        if not self._closed:
            self._pending.put(message)

    def wait(self, timeout: float) -> list[JsonObject] | None:
        """The queued notifications, waiting up to `timeout` seconds for the first one: []
        on timeout, None once closed (a closed stream sends nothing more)."""
        messages: list[JsonObject | None] = []
        with contextlib.suppress(queue.Empty):
            messages.append(self._pending.get(timeout=timeout))
            while not self._pending.empty():
                messages.append(self._pending.get_nowait())
        if self._closed:
            return None
        return [message for message in messages if message is not None]

    def close(self) -> None:
        self._closed = True
        self._pending.put(None)


class SubscriptionHub:
    """Every open subscription of one server; `publish` is a TaskStore listener."""

    def __init__(self, render: Callable[[TaskView], JsonObject]) -> None:
        self._render = render
        self._lock = threading.Condition()
        self._subscriptions: list[Subscription] = []

    def open(self, subscription_id: str | int, task_ids: frozenset[str]) -> Subscription:
        """Register a new subscription (before acknowledging it, so no change is missed)."""
        subscription = Subscription(subscription_id, task_ids)
        with self._lock:
            self._subscriptions.append(subscription)
        return subscription

    def remove(self, subscription: Subscription) -> None:
        """Close and forget a subscription (the client went away, or cancelled it)."""
        subscription.close()
        with self._lock:
            if subscription in self._subscriptions:
                self._subscriptions.remove(subscription)
            self._lock.notify_all()

    def publish(self, view: TaskView) -> None:
        """Queue the changed task for every subscription that listens to it (called with
        the store's lock held: it only renders and enqueues)."""
        with self._lock:
            targets = [s for s in self._subscriptions if view.task_id in s.task_ids]
        if not targets:
            return
        rendered = self._render(view)
        for subscription in targets:
            subscription.push(tagged(rendered, subscription.id))

    def close_all(self, timeout: float) -> None:
        """Server shutdown: close every subscription, then wait up to `timeout` seconds for
        their writers to finish (each removes its subscription when done)."""
        with self._lock:
            for subscription in self._subscriptions:
                subscription.close()
            self._lock.wait_for(lambda: not self._subscriptions, timeout)


def tagged(message: JsonObject, subscription_id: str | int) -> JsonObject:
    """A copy of a notification whose params carry `_meta[subscriptionId]` (spec: every
    message delivered on a listen stream carries it)."""
    params = dict(message.get("params") or {})
    meta = dict(params.pop("_meta", None) or {})
    meta[SUBSCRIPTION_ID_META] = subscription_id
    return {**message, "params": {"_meta": meta, **params}}

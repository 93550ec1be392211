"""2026-07-28 `subscriptions/listen`: a Subscription is one open listen request (the task
ids it agreed to, and the notifications waiting to be written); the hub fans store changes
out to the subscriptions of the changed task. Transports drain a subscription (an SSE stream
on HTTP, lines on stdio) until either side closes it."""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable

from mcptask.reference_server.records import TaskView
from mcptask.reference_server.wire import JsonObject

SUBSCRIPTION_ID_META = "io.modelcontextprotocol/subscriptionId"


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

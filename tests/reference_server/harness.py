"""The in-process harness of the reference server's unit tests.

    server = make(seed=(("working", 1),))            # the `make` fixture (conftest.py)
    server.legacy.result("tasks/cancel", {"taskId": "working-001"})   # 2025-11-25, session s1
    server.modern.result("tasks/get", {"taskId": "working-001"})      # 2026-07-28 with _meta
    server.advance(0.3)                              # time passes; due changes are applied

A Server is a config, a WorkerStore (a TaskStore the fixture tools can drive) on a
ManualClock (time moves only in `advance`, which applies every step, cancel and expiry due
by then before it returns), seeded by the same `populate` as the real server, and a Router
with the dispatcher of each era served. Nothing here sleeps: what the clock drives happens
in `advance`; what threads do (tasks/result waiters, the work of fixture tools) is awaited
with `wait_until`, which wakes on every task change and gives up after DEADLINE seconds.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import pytest

from mcptask.reference_server.config import ServerConfig
from mcptask.reference_server.eras.legacy import LegacyDispatcher
from mcptask.reference_server.eras.modern import ModernDispatcher
from mcptask.reference_server.eras.modern_wire import Subscription, Validator
from mcptask.reference_server.eras.router import Router
from mcptask.reference_server.records import TaskView
from mcptask.reference_server.scripting import ScriptedTask, Step
from mcptask.reference_server.server import populate
from mcptask.reference_server.wire import Reply
from tests.conformance.fixtures.workers import WorkerStore
from tests.reference_server.manual_clock import ManualClock

JsonObject = dict[str, Any]
DEADLINE = 10.0  # real seconds; generous, only reached when something is broken
VERSION = "2026-07-28"
TASKS = "io.modelcontextprotocol/tasks"
# The fields of a 2026-07-28 Task object.
MODERN_TASK_FIELDS = frozenset(
    {"taskId", "status", "statusMessage", "createdAt", "lastUpdatedAt", "ttlMs", "pollIntervalMs"}
)


def capabilities(*, tasks: bool = True, elicitation: bool = True) -> JsonObject:
    """Client capabilities of a 2026-07-28 request (tasks extension, form elicitation)."""
    caps: JsonObject = {"extensions": {TASKS: {}} if tasks else {}}
    if elicitation:
        caps["elicitation"] = {}
    return caps


def meta(*, tasks: bool = True, version: str = VERSION) -> JsonObject:
    """The `_meta` of a 2026-07-28 request."""
    return {
        "io.modelcontextprotocol/protocolVersion": version,
        "io.modelcontextprotocol/clientCapabilities": capabilities(tasks=tasks),
        "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"},
    }


def scripted(task_id: str, steps: list[tuple[float, str, str]], **kw: Any) -> ScriptedTask:
    """A --tasks-file entry: a working task (unless `status`) following `steps`."""
    return ScriptedTask(
        task_id=task_id,
        status=kw.get("status", "working"),
        status_message=kw.get("status_message", "scripted"),
        steps=tuple(Step(*step) for step in steps),
        on_cancel=kw.get("on_cancel"),
        ttl_ms=kw.get("ttl_ms"),
        has_ttl="ttl_ms" in kw,
        await_input=kw.get("await_input", False),
    )


def in_thread(target: Callable[[], Any]) -> tuple[threading.Thread, list[Any]]:
    """Run `target` in a daemon thread; its return value lands in the list."""
    out: list[Any] = []
    thread = threading.Thread(target=lambda: out.append(target()), daemon=True)
    thread.start()
    return thread, out


def accept(**content: Any) -> JsonObject:
    """An ElicitResult that accepted with this form content."""
    return {"action": "accept", "content": content}


def drain(subscription: Subscription, count: int) -> list[JsonObject]:
    """The first `count` notifications queued on a subscription (waiting for them)."""
    got: list[JsonObject] = []
    deadline = time.monotonic() + DEADLINE
    while len(got) < count and time.monotonic() < deadline:
        messages = subscription.wait(0.1)
        assert messages is not None, "the subscription was closed"
        got.extend(messages)
    assert len(got) >= count, got
    return got


class Server:
    """One reference server, in-process, on a manual clock (see the module docstring)."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.clock = ManualClock()
        self.store = WorkerStore(self.clock)
        # Every change of a task, in order (recorded by a store listener).
        self.changes: list[TaskView] = []
        self._changed = threading.Condition()
        self.store.add_listener(self._record)
        populate(self.store, config)
        self.router = Router(config, self.store)
        self._ids = _Ids()

    def _record(self, view: TaskView) -> None:
        with self._changed:
            self.changes.append(view)
            self._changed.notify_all()

    @property
    def legacy(self) -> LegacyClient:
        """Requests in the 2025-11-25 era."""
        assert self.router.legacy is not None, "this server does not speak 2025-11-25"
        return LegacyClient(self, self.router.legacy)

    @property
    def modern(self) -> ModernClient:
        """Requests in the 2026-07-28 era."""
        assert self.router.modern is not None, "this server does not speak 2026-07-28"
        return ModernClient(self, self.router.modern)

    def advance(self, seconds: float) -> None:
        """Let `seconds` pass on the store's clock (due changes are applied on return)."""
        self.clock.advance(seconds)

    def wait_until(self, condition: Callable[[], bool], what: str = "the condition") -> None:
        """Wait (in real time, up to DEADLINE) until `condition()` holds, re-checking it
        after every task change; for what threads do, never for what the clock drives."""
        deadline = time.monotonic() + DEADLINE
        while True:
            with self._changed:
                seen = len(self.changes)
            if condition():
                return
            if not self._wait_for_change(seen, deadline - time.monotonic()):
                pytest.fail(f"{what} was not reached")

    def _wait_for_change(self, seen: int, timeout: float) -> bool:
        """Wait until more than `seen` changes were recorded; False on timeout."""
        with self._changed:
            return timeout > 0 and self._changed.wait_for(
                lambda: len(self.changes) != seen, timeout
            )

    def close(self) -> None:
        """Stop the store (fixture work threads waiting on it end)."""
        self.store.close()


class _Ids:
    """Request ids, shared by both eras of one server."""

    def __init__(self) -> None:
        self._last = 0

    def next(self) -> int:
        self._last += 1
        return self._last


class LegacyClient:
    """2025-11-25 requests, in a session (`s1` unless told)."""

    def __init__(self, server: Server, dispatcher: LegacyDispatcher) -> None:
        self.server = server
        self.dispatcher = dispatcher

    def send(self, method: str, params: JsonObject | None = None, session: str = "s1") -> Reply:
        """The dispatcher's reply to one request."""
        message: JsonObject = {"jsonrpc": "2.0", "id": self.server._ids.next(), "method": method}
        if params is not None:
            message["params"] = params
        return self.dispatcher.handle(message, session)

    def request(self, method: str, params: JsonObject | None = None, session: str = "s1") -> Any:
        """The response to one request (its id checked)."""
        reply = self.send(method, params, session)
        assert reply.response is not None
        assert reply.response["id"] == self.server._ids._last
        return reply.response

    def result(self, method: str, params: JsonObject | None = None, session: str = "s1") -> Any:
        """The result of a request that must succeed."""
        response = self.request(method, params, session)
        assert "error" not in response, response
        return response["result"]

    def error(self, method: str, params: JsonObject | None = None, session: str = "s1") -> Any:
        """The error of a request that must fail."""
        response = self.request(method, params, session)
        assert "result" not in response, response
        return response["error"]

    def get(self, task_id: str, session: str = "s1") -> JsonObject:
        """tasks/get of a task that must exist."""
        task: JsonObject = self.result("tasks/get", {"taskId": task_id}, session)
        return task

    def list_all(self, session: str = "s1") -> list[JsonObject]:
        """Every task tasks/list shows, following nextCursor."""
        tasks: list[JsonObject] = []
        params: JsonObject = {}
        while True:
            page = self.result("tasks/list", params, session)
            tasks.extend(page["tasks"])
            if "nextCursor" not in page:
                return tasks
            params = {"cursor": page["nextCursor"]}


class ModernClient:
    """2026-07-28 requests: `_meta` with the version and capabilities (tasks, elicitation)."""

    def __init__(self, server: Server, dispatcher: ModernDispatcher) -> None:
        self.server = server
        self.dispatcher = dispatcher

    def handle(self, message: object, validate: Validator | None = None) -> Reply:
        """A raw message, as a transport would hand it over."""
        return self.dispatcher.handle(message, validate)

    def send(
        self,
        method: str,
        params: JsonObject | None = None,
        *,
        tasks: bool = True,
        version: str = VERSION,
        caps: JsonObject | None = None,
        meta: JsonObject | None = None,
    ) -> Reply:
        """The dispatcher's reply to one request; `caps` replaces the capabilities, `meta`
        adds _meta fields."""
        body_meta: JsonObject = {
            "io.modelcontextprotocol/protocolVersion": version,
            "io.modelcontextprotocol/clientCapabilities": (
                capabilities(tasks=tasks) if caps is None else caps
            ),
            "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "0"},
            **(meta or {}),
        }
        body: JsonObject = {"_meta": body_meta, **(params or {})}
        message = {"jsonrpc": "2.0", "id": self.server._ids.next(), "method": method}
        message["params"] = body
        return self.dispatcher.handle(message)

    def result(self, method: str, params: JsonObject | None = None, **kw: Any) -> Any:
        """The result of a request that must succeed (with HTTP 200)."""
        reply = self.send(method, params, **kw)
        assert reply.response is not None
        assert "error" not in reply.response, reply.response
        assert reply.http_status == 200
        return reply.response["result"]

    def error(self, method: str, params: JsonObject | None = None, **kw: Any) -> tuple[int, Any]:
        """(HTTP status, error) of a request that must fail."""
        reply = self.send(method, params, **kw)
        assert reply.response is not None
        assert "result" not in reply.response, reply.response
        return reply.http_status, reply.response["error"]

    def call(self, name: str, arguments: JsonObject | None = None, **kw: Any) -> Any:
        """tools/call of `name`; `extra` adds params (inputResponses, requestState, ...)."""
        params: JsonObject = {"name": name, "arguments": arguments or {}}
        params.update(kw.pop("extra", {}))
        return self.result("tools/call", params, **kw)

    def get(self, task_id: str) -> JsonObject:
        """tasks/get of a task that must exist."""
        task: JsonObject = self.result("tasks/get", {"taskId": task_id})
        return task

    def wait_status(self, task_id: str, status: str) -> JsonObject:
        """The task once a thread (a fixture tool's work) has moved it to `status`."""
        self.server.wait_until(
            lambda: self.get(task_id)["status"] == status, f"status {status} of {task_id}"
        )
        return self.get(task_id)

    def wait_for(self, task_id: str, condition: Callable[[JsonObject], bool]) -> JsonObject:
        """The task once a thread has brought it to a state where `condition` holds."""
        self.server.wait_until(lambda: condition(self.get(task_id)), f"the state of {task_id}")
        return self.get(task_id)


def make_server(**settings: Any) -> Server:
    """A Server for ServerConfig() with these settings replaced."""
    return Server(replace(ServerConfig(), **settings))

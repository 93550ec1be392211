"""An in-process fake MCP transport for unit tests of the client and the operations."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

from mcptask.errors import SessionExpired
from mcptask.protocol.jsonrpc import JsonObject
from mcptask.transport import Transport

TERMINAL = ("completed", "failed", "cancelled")


def task(task_id: str, status: str, **extra: object) -> JsonObject:
    return {
        "taskId": task_id,
        "status": status,
        "createdAt": "2026-01-01T00:00:00Z",
        "lastUpdatedAt": "2026-01-01T00:00:00Z",
        "ttl": None,
        "pollInterval": 100,
        **extra,
    }


@dataclass
class FakeServer(Transport):
    """A scripted 2025-11-25 server. `on_cancel[id]` overrides what a cancel does."""

    tasks: dict[str, JsonObject] = field(default_factory=dict)
    capabilities: JsonObject = field(default_factory=lambda: {"tasks": {"list": {}, "cancel": {}}})
    page_size: int = 2
    on_cancel: dict[str, Callable[[JsonObject], JsonObject]] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)
    gets_until_cancelled: dict[str, int] = field(default_factory=dict)
    modern: bool = False
    """Speak 2026-07-28 (discover, ack-only cancel, no list) instead of 2025-11-25."""
    headers: list[dict[str, str]] = field(default_factory=list)
    before: dict[tuple[str, str], list[Exception]] = field(default_factory=dict)
    """(method, taskId) -> failures raised, one per request, before the server acts."""
    after: dict[tuple[str, str], list[Exception]] = field(default_factory=dict)
    """(method, taskId) -> failures raised, one per request, after the server acted (the
    answer is lost)."""
    tools: list[JsonObject] = field(default_factory=list)
    """What tools/list lists (`tool_page_size` per page)."""
    tool_page_size: int = 100
    inline_tools: set[str] = field(default_factory=set)
    """Tools whose task-augmented call the server runs at once (a CallToolResult, no task)."""
    tool_calls: list[JsonObject] = field(default_factory=list)
    """The params of every tools/call."""
    results: dict[str, JsonObject] = field(default_factory=dict)
    """What tasks/result answers per task (else an error, from `result_errors`)."""
    result_errors: dict[str, JsonObject] = field(default_factory=dict)
    sessions: bool = False
    """Give each initialize a new session id and scope created tasks to it (like SDK 1.x)."""
    owners: dict[str, str] = field(default_factory=dict)
    ended: set[str] = field(default_factory=set)
    """Sessions that answer 404 (SessionExpired)."""
    request_sessions: list[str | None] = field(default_factory=list)
    kept: list[str | None] = field(default_factory=list)
    """The sessions keep_session was asked to keep."""
    _counter: int = 0

    kind = "fake"
    concurrent = False
    target = "fake"
    session_id: str | None = None
    protocol_version: str | None = None

    def add(self, task_id: str, status: str, **extra: object) -> None:
        self.tasks[task_id] = task(task_id, status, **extra)

    # -- Transport ------------------------------------------------------------------------------

    def request(
        self,
        message: JsonObject,
        *,
        timeout: float | None = None,
        headers: dict[str, str] | None = None,
        session: str | None = None,
    ) -> JsonObject:
        method = message["method"]
        params = message.get("params") or {}
        self.calls.append(method)
        self.headers.append(headers or {})
        key = (method, str(params.get("taskId")))
        if self.before.get(key):
            raise self.before[key].pop(0)
        in_session = session if session is not None else self.session_id
        self.request_sessions.append(in_session)
        if in_session is not None and in_session in self.ended:
            raise SessionExpired(in_session)
        try:
            result = self._handle(method, params, in_session)
        except _Error as error:
            return {"jsonrpc": "2.0", "id": message["id"], "error": error.body}
        if self.after.get(key):
            raise self.after[key].pop(0)
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}

    def notify(self, message: JsonObject) -> None:
        self.calls.append(message["method"])

    def subscribe(
        self, message: JsonObject, *, headers: dict[str, str] | None, stop: threading.Event
    ) -> None:
        self.calls.append(message["method"])

    def listen(self, stop: threading.Event) -> None:
        self.calls.append("GET stream")

    def join_session(self, session_id: str) -> None:
        self.session_id = session_id

    def keep_session(self) -> None:
        self.kept.append(self.session_id)

    def close(self) -> None:
        pass

    # -- behaviour ------------------------------------------------------------------------------

    def _handle(self, method: str, params: JsonObject, session: str | None) -> JsonObject:
        if method == "server/discover":
            if not self.modern:
                raise _Error(-32601, "Method not found")
            return {
                "resultType": "complete",
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
                "serverInfo": {"name": "fake-modern", "version": "2"},
            }
        if self.modern and "_meta" not in params:
            raise _Error(-32021, "Missing required client capability")
        if method == "initialize":
            if self.sessions:
                self._counter += 1
                self.session_id = f"session-{self._counter}"
            return {
                "protocolVersion": "2025-11-25",
                "capabilities": self.capabilities,
                "serverInfo": {"name": "fake", "version": "1"},
            }
        if method == "tasks/list":
            ordered = list(self.tasks.values())
            start = int(params.get("cursor") or 0)
            page = ordered[start : start + self.page_size]
            result: JsonObject = {"tasks": page}
            if start + self.page_size < len(ordered):
                result["nextCursor"] = str(start + self.page_size)
            return result
        if method == "tools/list":
            start = int(params.get("cursor") or 0)
            listed: JsonObject = {"tools": self.tools[start : start + self.tool_page_size]}
            if start + self.tool_page_size < len(self.tools):
                listed["nextCursor"] = str(start + self.tool_page_size)
            return listed
        if method == "tools/call":
            return self._tools_call(params, session)
        task_id = params.get("taskId")
        if task_id not in self.tasks or self.owners.get(task_id, session) != session:
            raise _Error(-32602, f"Task not found: {task_id}")
        current = self.tasks[task_id]
        if method == "tasks/get":
            remaining = self.gets_until_cancelled.get(task_id)
            if remaining is not None:
                if remaining <= 1:
                    current["status"] = "cancelled"
                self.gets_until_cancelled[task_id] = remaining - 1
            return dict(current)
        if method == "tasks/cancel":
            if task_id in self.on_cancel:
                return self.on_cancel[task_id](current)
            if self.modern:
                if current["status"] not in TERMINAL:
                    self.gets_until_cancelled.setdefault(task_id, 2)
                return {"resultType": "complete"}
            if current["status"] in TERMINAL:
                raise _Error(-32602, f"Cannot cancel task in terminal state '{current['status']}'")
            current["status"] = "cancelled"
            return dict(current)
        if method == "tasks/result" and not self.modern:
            if task_id in self.result_errors:
                error = self.result_errors[task_id]
                raise _Error(error["code"], error["message"])
            return self.results.get(task_id, {"content": []})
        raise _Error(-32601, "Method not found")

    def _tools_call(self, params: JsonObject, session: str | None) -> JsonObject:
        self.tool_calls.append(params)
        name = params.get("name")
        if name in self.inline_tools:
            answer: JsonObject = {"content": [{"type": "text", "text": f"{name} ran"}]}
            return {"resultType": "complete", **answer} if self.modern else answer
        self._counter += 1
        task_id = f"started-{self._counter}"
        self.add(task_id, "working")
        if self.sessions and session is not None:
            self.owners[task_id] = session
        created = dict(self.tasks[task_id])
        return {"resultType": "task", **created} if self.modern else {"task": created}


class _Error(Exception):
    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.body: JsonObject = {"code": code, "message": message}


def raise_error(code: int, message: str) -> Callable[[JsonObject], JsonObject]:
    """An `on_cancel` behaviour that answers a JSON-RPC error."""

    def behave(current: JsonObject) -> JsonObject:
        raise _Error(code, message)

    return behave

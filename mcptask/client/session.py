"""The MCP client: one connection, the capability gate, and typed task calls."""

from __future__ import annotations

import functools
import os
import threading
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

from mcptask.client.asking import AskedTasks
from mcptask.client.eras import Era, Operation
from mcptask.client.error_codes import error_object, result_of
from mcptask.client.exchange import Exchange, RetryPolicy, T
from mcptask.client.negotiate import initialize, negotiate, survey
from mcptask.errors import (
    ProtocolViolation,
    RpcError,
    SessionExpired,
    SessionGone,
    SessionTaskGone,
    TaskNotFound,
    UnsupportedError,
    UsageError,
)
from mcptask.protocol.handshake import ServerInfo
from mcptask.protocol.inputs import InputRequest, read_input_requests
from mcptask.protocol.jsonrpc import JsonObject, request_message
from mcptask.protocol.tasks import (
    FAILED,
    INPUT_REQUIRED,
    MAX_PAGES,
    Task,
    TaskOutcome,
    ToolCallAnswer,
    ToolInfo,
    read_page,
)
from mcptask.transport import Transport

if TYPE_CHECKING:
    from mcptask.store.known_tasks import KnownTasks

SessionChange = Callable[[str | None, str], None]
"""Hears (previous session or None, new session) when a kept session is opened or renewed."""


class McpClient(Exchange):
    """One connection to one MCP server, in the era negotiated with it: the session, the
    capability gate and the typed task calls."""

    def __init__(
        self,
        transport: Transport,
        *,
        protocol: str = "auto",
        needs_list: bool = False,
        keep_session: bool = False,
        on_session_change: SessionChange | None = None,
        retry: RetryPolicy | None = None,
        record: KnownTasks | None = None,
    ) -> None:
        super().__init__(transport, retry)
        self.protocol = protocol  # `auto`, or the one version to speak
        self.needs_list = needs_list  # auto mode: a dual-era server then speaks 2025-11-25
        self.keep_session = keep_session
        """Work in a session that outlives this process (a profile's): never DELETE it, and
        when it has ended, open a new one (telling `on_session_change`)."""
        self._on_session_change = on_session_change
        self.record = record  # hears every task met and every task found gone
        self.server: ServerInfo  # set by connect, with the era
        self.era: Era
        self._joined_session: str | None = None
        self.kept_session: str | None = None
        """The session this process keeps open for the tasks it started (no DELETE)."""
        self._task_sessions: dict[str, str] = {}
        self._asked: AskedTasks | None = None  # 2025-11-25 tasks' questions (require_answers)
        self._renewal = threading.Lock()
        """Two threads that meet the same ended session renew it once (a bulk cancel's
        overlapped confirmations share the client)."""

    def connect(
        self,
        *,
        join_session: str | None = None,
        task_sessions: Mapping[str, str] | None = None,
    ) -> ServerInfo:
        """The handshake; then, with `join_session`, move into that existing session.
        `task_sessions`: the session that owns each task id, where requests about that task
        then go (2025-11-25 over HTTP)."""
        routed = dict(task_sessions or {})
        needs_session = join_session is not None or bool(routed) or self.keep_session
        self.server, self.era = negotiate(
            self, protocol=self.protocol, prefer_legacy=self.needs_list or needs_session
        )
        if join_session is not None:
            if self.era.join_refusal is not None:
                raise UsageError(self.era.join_refusal)
            self.transport.end_session()
            self.transport.join_session(join_session)
            self._joined_session = join_session
        elif self.keep_session:
            self._keep(None)
        if self.transport.session_id is not None:
            self._task_sessions = routed
        if join_session is not None or self._task_sessions:
            # The session's owner numbers its requests 1, 2, 3... too, and servers match
            # answers by id within a session. (os.urandom: the id is no secret, and
            # `secrets` costs every command some 6 ms of imports.)
            self._id_prefix = f"mcptask-{os.urandom(4).hex()}-"
        return self.server

    def survey(self) -> tuple[list[ServerInfo], list[str]]:
        """What the server offers in the other era it speaks (auto mode only), and problems."""
        if self.protocol != "auto":
            return [], []
        return survey(self, self.server)

    def follow_status_pushes(self, task_ids: list[str], stop: threading.Event) -> None:
        """Ask the server to push task status changes to the notification handler, until
        `stop` (blocks on HTTP); failures are silent (polling is the baseline). A joined
        session's stream is its owner's to follow."""
        request = self.era.push_request(task_ids)
        if request is None:
            if self._joined_session is None:
                self.transport.listen(stop)
        elif task_ids:
            method, params = request
            stamped, headers = self.era.stamp(method, params)
            message = request_message(self._next_id(), method, stamped)
            self.transport.subscribe(message, headers=headers, stop=stop)

    def close(self) -> None:
        self.transport.close()  # ends the session if we created it and did not keep it

    def _durable_session(self, task_id: str) -> str | None:
        return self._task_sessions.get(task_id) or self._joined_session or self.kept_session

    def require(self, operation: Operation) -> None:
        """The capability gate: nothing is sent for an operation the server did not offer."""
        support = self.server.task_support
        if not support.tasks:
            raise UnsupportedError(
                f"the server offers no tasks (protocol {self.server.protocol_version}, "
                "no tasks capability)"
            )
        if operation != "get" and not getattr(support, operation):
            raise self.era.missing(operation, support)

    def get_task(self, task_id: str) -> Task:
        """TaskNotFound for an unknown, expired or hidden task."""
        self.require("get")
        try:
            result = self.call("tasks/get", {"taskId": task_id})
        except TaskNotFound:
            if self.record is not None:
                self.record.gone(task_id)
            raise
        return self._met(Task.from_result(result, method="tasks/get"), "tasks/get")

    def iter_task_pages(self) -> Iterator[list[Task]]:
        """The pages of `tasks/list` (the record hears each)."""
        self.require("list")
        read = functools.partial(Task.from_result, method="tasks/list")
        for tasks, first, last in self._pages("tasks/list", read):
            if self.record is not None:
                owned = [(task, self._durable_session(task.taskId)) for task in tasks]
                self.record.seen_page(owned, via="tasks/list", first=first, last=last)
            yield tasks

    def cancel_task(self, task_id: str) -> Task | None:
        """The task the cancel answered with, or None (acknowledged only); CancelRefused when
        refused (finished or unknown: `tasks/get` tells)."""
        self.require("cancel")
        result = self.call("tasks/cancel", {"taskId": task_id})
        task = self.era.read_cancel(result)
        if task is not None:
            self._met(task, "tasks/cancel")
        return task

    def require_answers(self) -> None:
        """Stop when the server's tasks cannot be answered; else, in 2025-11-25, hear the
        server's requests about tasks from now on."""
        if not self.era.asks_by_request:
            self.require("update")
            return
        self.require("get")
        if self._asked is None:
            self._asked = AskedTasks(self.transport)

    def read_asked(
        self, task_id: str, *, wait: float, hold_for: float
    ) -> tuple[Task, list[InputRequest]]:
        """The task and what it asks now: 2026-07-28, its `inputRequests`; 2025-11-25, the
        server's requests about it, heard on a `tasks/result` held open (`hold_for` s at most),
        waited for up to `wait` s (none: the task is read again, it may have moved on)."""
        self.require_answers()
        task = self.get_task(task_id)
        if task.status != INPUT_REQUIRED:
            return task, []
        if self._asked is None:
            asked = read_input_requests(task)
            if not asked:
                raise ProtocolViolation(
                    f"task {task_id} is input_required, but the server's tasks/get says nothing "
                    "of what it asks (no inputRequests): there is nothing to answer"
                )
            return task, asked
        params, session = {"taskId": task_id}, self._task_sessions.get(task_id)
        questions = self._asked.of(task_id)
        questions.hold(
            lambda: self.request(
                "tasks/result", params, timeout=hold_for, session=session, retried=False
            )
        )
        asked = questions.wait(wait)
        return (task, asked) if asked else (self.get_task(task_id), [])

    def asks_now(self, task: Task) -> list[InputRequest]:
        """What `task` (as last read) asks, not answered yet."""
        if task.status != INPUT_REQUIRED:
            return []
        if self._asked is not None:
            questions = self._asked.known(task.taskId)
            return [] if questions is None else questions.unanswered()
        return read_input_requests(task)

    def send_answers(self, task_id: str, responses: JsonObject) -> None:
        """Answer what the task asks, by key: `tasks/update` (acknowledged only), or
        (2025-11-25) the JSON-RPC responses to the server's requests."""
        if self._asked is None:
            self.require("update")
            self.call("tasks/update", {"taskId": task_id, "inputResponses": responses})
        else:
            self._asked.of(task_id).answer(responses)

    def iter_tools(self) -> Iterator[ToolInfo]:
        for tools, _, _ in self._pages("tools/list", ToolInfo.from_wire):
            yield from tools

    def _pages(
        self, method: str, read: Callable[[object], T]
    ) -> Iterator[tuple[list[T], bool, bool]]:
        """`method`'s pages, lazily, each with whether it is the first and the last; a page is
        given before its cursor is refused (one seen before, or past MAX_PAGES)."""
        cursor: str | None = None
        seen_cursors: set[str] = set()
        while True:
            items, next_cursor = read_page(
                self.call(method, {"cursor": cursor} if cursor else {}), method, read
            )
            yield items, cursor is None, next_cursor is None
            if next_cursor is None:
                return
            if next_cursor in seen_cursors:
                raise ProtocolViolation(f"the server's {method} cursors loop back on themselves")
            if len(seen_cursors) + 1 >= MAX_PAGES:
                raise ProtocolViolation(
                    f"the server's {method} goes on past {MAX_PAGES} pages; mcptask stops there"
                )
            seen_cursors.add(next_cursor)
            cursor = next_cursor

    def call_tool_as_task(
        self, name: str, arguments: JsonObject, *, ttl_ms: int | None = None
    ) -> ToolCallAnswer:
        """A `tools/call` that asks for a task; a task it makes keeps this session open."""
        params = self.era.task_call_params(name, arguments, ttl_ms)
        answer = self.era.read_tool_call(self.call("tools/call", params))
        if answer.task is not None:
            if self._joined_session is None and self.transport.session_id is not None:
                self.kept_session = self.transport.session_id
                self.transport.keep_session()
            self._met(answer.task, "tools/call", tool=name)
        return answer

    def task_outcome(self, task: Task) -> TaskOutcome:
        """How a terminal task ended (2025-11-25: `tasks/result`; 2026-07-28: from the task).
        An error answer is the task's own error, unless the task is not found and did not fail
        (then it went after `tasks/get`)."""
        method = self.era.result_method
        if method is None:
            return self.era.inline_outcome(task)
        try:
            result = self.call(method, {"taskId": task.taskId})
        except RpcError as exc:
            if isinstance(exc, TaskNotFound) and task.status != FAILED:
                raise
            return TaskOutcome(task.taskId, task.status, None, error_object(exc))
        return TaskOutcome(task.taskId, task.status, result, None)

    def _met(self, task: Task, via: str, *, tool: str | None = None) -> Task:
        if self.record is not None:
            session_id = self._durable_session(task.taskId)
            self.record.seen(task, via=via, session_id=session_id, tool=tool)
        return task

    def call(self, method: str, params: JsonObject | None = None) -> JsonObject:
        """A request's result (sent in the task's session, when known); a lost session is
        re-initialized once."""
        if self._renewal.locked():
            # Another thread is opening a new session (the transport has none meanwhile):
            # a request sent now would carry no session at all.
            with self._renewal:
                pass
        task_id = params.get("taskId") if params else None
        if isinstance(task_id, str) and task_id in self._task_sessions:
            return self._call_routed(task_id, method, params)
        try:
            return self._call_once(method, params)
        except SessionExpired as expired:
            with self._renewal:
                if expired.args[:1] == (self.transport.session_id,):  # not renewed meanwhile
                    self._renew()
            try:
                return self._call_once(method, params)
            except SessionExpired:
                raise ProtocolViolation(
                    "the server dropped the new session at once (HTTP 404 again)"
                ) from None

    def _renew(self) -> None:
        """A new session in place of the one that ended (a joined one: say so)."""
        previous = self._joined_session or self.transport.session_id
        if self._joined_session is not None and not self.keep_session:
            raise SessionGone(
                f"session {self._joined_session} has ended on the server (its tasks ended with it)"
            ) from None
        self._joined_session = None
        self.transport.reset_session()
        self.server, self.era = initialize(self)
        if self.keep_session:
            self._keep(previous)

    def _call_routed(self, task_id: str, method: str, params: JsonObject | None) -> JsonObject:
        """Send in the task's own session; when that session has ended, the task is gone
        unless our own session sees it too (a server that does not scope tasks to sessions)."""
        session = self._task_sessions[task_id]
        try:
            return self._call_once(method, params, session=session)
        except SessionExpired:
            del self._task_sessions[task_id]
        try:
            found = self.call("tasks/get", {"taskId": task_id})
        except TaskNotFound:
            if self.record is not None:
                self.record.gone(task_id)
            raise SessionTaskGone(task_id, session) from None
        if self.record is not None:
            self.record.detached(task_id)
        return found if method == "tasks/get" else self.call(method, params)

    def _keep(self, previous: str | None) -> None:
        """Keep the session past this process, and say which one it is."""
        current = self.transport.session_id
        if current is None:
            return  # an era without sessions: nothing to keep
        self.transport.keep_session()
        if self._on_session_change is not None and current != previous:
            self._on_session_change(previous, current)

    def _call_once(
        self, method: str, params: JsonObject | None, *, session: str | None = None
    ) -> JsonObject:
        stamped, headers = self.era.stamp(method, params)
        answer = self.request(method, stamped, headers=headers, session=session)
        return result_of(answer, method, params)

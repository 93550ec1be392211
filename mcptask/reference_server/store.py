"""The task store: all tasks of one server process, their scripted changes, ttl and cancel.

One store is shared by every session, transport and protocol era. A single scheduler thread
applies timed changes (script steps, delayed cancels, ttl expiry); every read and write happens
under one condition variable, which also wakes `tasks/result` waiters when a task changes.

Visibility: a task has an owner (a legacy session, under --scope session) or none (shared).
`viewer` None, which is what every 2026-07-28 request uses, sees only the shared tasks.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from types import MappingProxyType

from mcptask.reference_server.config import CancelMode
from mcptask.reference_server.jsonrpc import JsonObject
from mcptask.reference_server.scripting import TERMINAL_STATUSES, OnCancel, Step

CANCELLED_MESSAGE = "Cancelled by client"
COMPLETED_DURING_CANCEL_MESSAGE = "Completed before the cancel request arrived"
INPUT_RECEIVED_MESSAGE = "Input received; working again"
INPUT_REQUIRED = "input_required"


@dataclass(frozen=True)
class TaskView:
    """A consistent snapshot of one task, safe to read outside the store's lock."""

    task_id: str
    status: str
    status_message: str | None
    created_at: datetime
    last_updated_at: datetime
    ttl_ms: int | None
    owner: str | None
    sort_key: tuple[int, int]
    # The key of the outstanding input request while the task is input_required (a new key
    # each time the task enters that status, so keys are unique over the task's life).
    input_key: str | None = None
    # Set by tools that run as workers (see `request_input` and `finish`): the CallToolResult
    # of a completed task, the JSON-RPC error object of a failed one, and the outstanding
    # input requests (wire key -> request) of an input_required one. None / empty for
    # scripted tasks, whose answers are derived from their status and message.
    result: JsonObject | None = None
    error: JsonObject | None = None
    input_requests: Mapping[str, JsonObject] = field(default_factory=lambda: MappingProxyType({}))

    @property
    def terminal(self) -> bool:
        """True for completed, failed and cancelled, which never change again."""
        return self.status in TERMINAL_STATUSES


@dataclass(frozen=True)
class CancelPolicy:
    """The server-wide cancel behaviour (--cancel-mode and --cancel-delay)."""

    mode: CancelMode = CancelMode.STRICT
    delay_ms: int = 1000


class TaskNotFoundError(Exception):
    """The task does not exist, has expired, or is not visible to the asking session."""

    def __init__(self, task_id: str) -> None:
        super().__init__(f"Task not found: {task_id}")
        self.task_id = task_id


class TaskTerminalError(Exception):
    """A cancel arrived for a task already in a terminal status."""

    def __init__(self, task_id: str, status: str) -> None:
        super().__init__(f"Cannot cancel task: already in terminal status '{status}'")
        self.task_id = task_id
        self.status = status


Listener = Callable[[TaskView], None]


@dataclass
class _Record:
    task_id: str
    seq: int
    status: str
    status_message: str | None
    created_at: datetime
    last_updated_at: datetime
    ttl_ms: int | None
    owner: str | None
    on_cancel: OnCancel | None
    steps: deque[Step] = field(default_factory=deque)
    # Monotonic deadlines; None when nothing is pending.
    next_step_at: float | None = None
    cancel_at: float | None = None
    expires_at: float | None = None
    # awaitInput: entering input_required pauses the script until the input arrives.
    await_input: bool = False
    input_seq: int = 0
    input_key: str | None = None
    # Worker-driven tasks (request_input / finish): see TaskView.
    result: JsonObject | None = None
    error: JsonObject | None = None
    input_requests: dict[str, JsonObject] = field(default_factory=dict)
    # wire key -> the worker's own name for it, and the answers gathered so far (by name).
    input_names: dict[str, str] = field(default_factory=dict)
    input_responses: dict[str, object] = field(default_factory=dict)

    def view(self) -> TaskView:
        micros = int(self.created_at.timestamp() * 1_000_000)
        return TaskView(
            task_id=self.task_id,
            status=self.status,
            status_message=self.status_message,
            created_at=self.created_at,
            last_updated_at=self.last_updated_at,
            ttl_ms=self.ttl_ms,
            owner=self.owner,
            sort_key=(micros, self.seq),
            input_key=self.input_key,
            result=self.result,
            error=self.error,
            input_requests=MappingProxyType(dict(self.input_requests)),
        )

    def visible_to(self, viewer: str | None) -> bool:
        # Owner None: a shared task (seeded, scripted, created in global scope or by a
        # 2026-07-28 request).
        return self.owner is None or self.owner == viewer

    def open_input_request(self) -> None:
        self.input_seq += 1
        self.input_key = f"input-{self.input_seq}"

    @property
    def script_paused(self) -> bool:
        """Steps are left but none is scheduled: waiting for tasks/update (awaitInput)."""
        return bool(self.steps) and self.next_step_at is None


def utc_now() -> datetime:
    """The current wall-clock time in UTC."""
    return datetime.now(UTC)


class TaskStore:
    """Thread-safe task storage with a scheduler thread for timed changes.

    Listeners are called with the store's lock held, in change order, so they must be quick
    and must not call back into the store (they enqueue notifications).
    """

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._records: dict[str, _Record] = {}
        self._listeners: list[Listener] = []
        self._seq = 0
        self._closed = False
        self._thread = threading.Thread(
            target=self._run_scheduler, name="reference-server-scheduler", daemon=True
        )
        self._thread.start()

    # -- life cycle -----------------------------------------------------------------------

    def add_listener(self, listener: Listener) -> None:
        """Call `listener` with the new snapshot after every change of a task."""
        with self._cond:
            self._listeners.append(listener)

    def close(self) -> None:
        """Stop the scheduler thread; the store stays readable."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._thread.join(timeout=2)

    # -- writes ---------------------------------------------------------------------------

    def create(
        self,
        *,
        task_id: str | None = None,
        status: str = "working",
        status_message: str | None = None,
        ttl_ms: int | None = None,
        owner: str | None = None,
        steps: Iterable[Step] = (),
        on_cancel: OnCancel | None = None,
        created_at: datetime | None = None,
        last_updated_at: datetime | None = None,
        await_input: bool = False,
    ) -> TaskView:
        """Add a task; its steps start counting now, and so does its ttl.

        With `await_input`, every step that enters input_required pauses the script until
        `provide_input` answers the task's input request (a task created in input_required
        waits from the start).

        The ttl counts from the moment the task enters the store even when `created_at` lies
        in the past (seeded tasks): their history is fiction, and a short --ttl must not make
        them vanish before anyone could see them.
        """
        now = time.monotonic()
        wall = utc_now()
        with self._cond:
            if task_id is None:
                task_id = str(uuid.uuid4())
            if task_id in self._records:
                raise ValueError(f"duplicate task id {task_id!r}")
            self._seq += 1
            created = created_at or wall
            record = _Record(
                task_id=task_id,
                seq=self._seq,
                status=status,
                status_message=status_message,
                created_at=created,
                last_updated_at=last_updated_at or created,
                ttl_ms=ttl_ms,
                owner=owner,
                on_cancel=on_cancel,
                steps=deque(steps) if status not in TERMINAL_STATUSES else deque(),
                expires_at=None if ttl_ms is None else now + ttl_ms / 1000,
                await_input=await_input,
            )
            if status == INPUT_REQUIRED:
                record.open_input_request()
            if record.steps and not (await_input and status == INPUT_REQUIRED):
                record.next_step_at = now + record.steps[0].delay
            self._records[task_id] = record
            self._cond.notify_all()
            return record.view()

    def set_on_cancel(self, task_id: str, on_cancel: OnCancel) -> None:
        """Override how an existing task reacts to a cancel (--complete-on-cancel)."""
        with self._cond:
            record = self._records.get(task_id)
            if record is None:
                raise TaskNotFoundError(task_id)
            record.on_cancel = on_cancel

    def cancel(self, task_id: str, viewer: str | None, policy: CancelPolicy) -> TaskView:
        """Apply tasks/cancel and return the task as it must be answered.

        Raises TaskNotFoundError, or TaskTerminalError for a task already terminal (except in
        lenient mode, which answers the finished task unchanged, as some real servers do).
        """
        with self._cond:
            record = self._lookup(task_id, viewer)
            lenient = policy.mode is CancelMode.LENIENT
            if record.status in TERMINAL_STATUSES:
                if lenient:
                    return record.view()
                raise TaskTerminalError(task_id, record.status)
            action = record.on_cancel or self._default_action(policy)
            self._apply_cancel(record, action)
            if action.kind == "complete" and not lenient:
                raise TaskTerminalError(task_id, "completed")
            return record.view()

    def request_cancel(self, task_id: str, viewer: str | None, default: OnCancel) -> TaskView:
        """Apply a 2026-07-28 tasks/cancel: an intent, acknowledged whatever happens.

        A finished task stays as it is; otherwise the task's own onCancel, else `default`
        (normally a delay: the cancel is cooperative), decides what happens and when.
        Raises only TaskNotFoundError.
        """
        with self._cond:
            record = self._lookup(task_id, viewer)
            if record.status not in TERMINAL_STATUSES:
                self._apply_cancel(record, record.on_cancel or default)
            return record.view()

    def provide_input(
        self, task_id: str, viewer: str | None, responses: Mapping[str, object]
    ) -> bool:
        """Apply the inputResponses of a 2026-07-28 tasks/update; True if they were used.

        Only the task's outstanding input request counts: an input_required task whose key is
        answered goes back to `working` and a paused script resumes (the next step's delay
        counts from now). Responses to unknown or already answered keys are ignored.
        Raises TaskNotFoundError.
        """
        with self._cond:
            record = self._lookup(task_id, viewer)
            if record.status != INPUT_REQUIRED:
                return False
            if record.input_requests:
                return self._answer_requests(record, responses)
            if record.input_key not in responses:
                return False
            self._transition(record, "working", INPUT_RECEIVED_MESSAGE)
            if record.script_paused:
                record.next_step_at = time.monotonic() + record.steps[0].delay
                self._cond.notify_all()
            return True

    def _answer_requests(self, record: _Record, responses: Mapping[str, object]) -> bool:
        """Take the answers to a worker's outstanding requests (a subset is fine: the task
        stays input_required, without the answered keys, until the last one arrives)."""
        answered = [key for key in record.input_requests if key in responses]
        if not answered:
            return False
        for key in answered:
            del record.input_requests[key]
            record.input_responses[record.input_names.pop(key)] = responses[key]
        if record.input_requests:
            self._changed(record)
        else:
            self._transition(record, "working", INPUT_RECEIVED_MESSAGE)
        return True

    # -- tools running as workers ---------------------------------------------------------
    #
    # A tool whose task is driven by code (the conformance fixtures) runs in a thread of its
    # own and moves its task with these calls. They never raise for a task that ended or
    # vanished meanwhile (cancelled, expired): they report it, and the worker stops.

    def wait_active(self, task_id: str, seconds: float) -> bool:
        """Sleep up to `seconds` while the task is not terminal.

        True when the time passed with the task still active; False as soon as it ended,
        vanished, or the store closed (the worker should stop).
        """
        deadline = time.monotonic() + seconds
        with self._cond:
            while True:
                if self._worker_record(task_id) is None:
                    return False
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return True
                self._cond.wait(remaining)

    def request_input(
        self, task_id: str, requests: Mapping[str, JsonObject], message: str
    ) -> dict[str, object] | None:
        """Move the task to input_required with `requests` (name -> input request) and wait
        until every one is answered by `provide_input`; return the answers by name.

        On the wire each request gets a key of its own (`NAME-N`, N counting the task's
        input rounds), so that keys are never reused over the task's life. Returns None when
        the task ends, vanishes or the store closes before all answers arrived.
        """
        if not requests:
            raise ValueError("request_input needs at least one request")
        with self._cond:
            record = self._worker_record(task_id)
            if record is None:
                return None
            record.input_seq += 1
            keys = {f"{name}-{record.input_seq}": name for name in requests}
            record.input_names = dict(keys)
            record.input_responses = {}
            pending = {key: requests[name] for key, name in keys.items()}
            self._transition(record, INPUT_REQUIRED, message, input_requests=pending)
            while True:
                current = self._worker_record(task_id)
                if current is None:
                    return None
                if not current.input_requests:
                    return dict(current.input_responses)
                self._cond.wait()

    def finish(
        self,
        task_id: str,
        status: str,
        message: str | None,
        *,
        result: JsonObject | None = None,
        error: JsonObject | None = None,
    ) -> bool:
        """End the task in `status` (completed with `result`, failed with `error`, or
        cancelled); False when it had already ended (say, cancelled) or vanished."""
        if status not in TERMINAL_STATUSES:
            raise ValueError(f"finish needs a terminal status, got {status!r}")
        with self._cond:
            record = self._worker_record(task_id)
            if record is None:
                return False
            self._transition(record, status, message, result=result, error=error)
            return True

    def _worker_record(self, task_id: str) -> _Record | None:
        """The task a worker drives, if it is still there and not terminal (lock held)."""
        record = self._records.get(task_id)
        if record is not None and self._expired(record, time.monotonic()):
            del self._records[task_id]
            self._cond.notify_all()
            record = None
        if self._closed or record is None or record.status in TERMINAL_STATUSES:
            return None
        return record

    def _apply_cancel(self, record: _Record, action: OnCancel) -> None:
        if action.kind == "complete":
            self._transition(record, "completed", COMPLETED_DURING_CANCEL_MESSAGE)
        elif action.kind == "cancel":
            self._transition(record, "cancelled", CANCELLED_MESSAGE)
        elif action.kind == "delay" and action.delay_ms >= 0 and record.cancel_at is None:
            # Acknowledge now, cancel later: a cooperative server. A negative delay means
            # never ("ack-only"); a repeated cancel keeps the first deadline.
            record.cancel_at = time.monotonic() + action.delay_ms / 1000
            self._cond.notify_all()
        # ignore, or a negative delay: acknowledged, nothing changes

    @staticmethod
    def _default_action(policy: CancelPolicy) -> OnCancel:
        if policy.mode is CancelMode.COOPERATIVE:
            return OnCancel(kind="delay", delay_ms=policy.delay_ms)
        return OnCancel(kind="cancel")

    # -- reads ----------------------------------------------------------------------------

    def get(self, task_id: str, viewer: str | None) -> TaskView:
        """The task, if it exists, has not expired and is visible to `viewer`."""
        with self._cond:
            return self._lookup(task_id, viewer).view()

    def page(
        self, viewer: str | None, after: tuple[int, int] | None, limit: int
    ) -> tuple[list[TaskView], bool]:
        """Up to `limit` visible tasks in creation order (oldest first) after the key `after`.

        Returns the page and whether more tasks follow. Keyset paging keeps pages stable
        when tasks expire between two requests.
        """
        with self._cond:
            self._expire(time.monotonic())
            views = sorted(
                (r.view() for r in self._records.values() if r.visible_to(viewer)),
                key=lambda view: view.sort_key,
            )
        if after is not None:
            views = [view for view in views if view.sort_key > after]
        return views[:limit], len(views) > limit

    def wait_terminal(self, task_id: str, viewer: str | None) -> TaskView:
        """Block until the task is terminal (tasks/result); raise if it vanishes meanwhile."""
        with self._cond:
            while True:
                record = self._lookup(task_id, viewer)
                if record.status in TERMINAL_STATUSES:
                    return record.view()
                self._cond.wait()

    # -- internals (lock held) ------------------------------------------------------------

    def _lookup(self, task_id: str, viewer: str | None) -> _Record:
        record = self._records.get(task_id)
        if record is not None and self._expired(record, time.monotonic()):
            del self._records[task_id]
            record = None
        if record is None or not record.visible_to(viewer):
            raise TaskNotFoundError(task_id)
        return record

    @staticmethod
    def _expired(record: _Record, now: float) -> bool:
        return record.expires_at is not None and record.expires_at <= now

    def _expire(self, now: float) -> None:
        expired = [t for t, r in self._records.items() if self._expired(r, now)]
        for task_id in expired:
            del self._records[task_id]
        if expired:
            self._cond.notify_all()  # tasks/result waiters must learn that the task is gone

    def _transition(
        self,
        record: _Record,
        status: str,
        message: str | None,
        *,
        result: JsonObject | None = None,
        error: JsonObject | None = None,
        input_requests: dict[str, JsonObject] | None = None,
    ) -> None:
        if record.status in TERMINAL_STATUSES:
            return  # terminal statuses never change (spec); late script steps are dropped
        if input_requests is not None:
            record.input_key = None
            record.input_requests = input_requests
        elif status == INPUT_REQUIRED and record.status != INPUT_REQUIRED:
            record.open_input_request()
        elif status != INPUT_REQUIRED:
            record.input_key = None
            record.input_requests = {}
            record.input_names = {}
        record.status = status
        record.status_message = message
        if status == "completed":
            record.result = result
        elif status == "failed":
            record.error = error
        if status in TERMINAL_STATUSES:
            record.steps.clear()
            record.next_step_at = None
            record.cancel_at = None
        self._changed(record)

    def _changed(self, record: _Record) -> None:
        """Stamp the change, tell the listeners and wake every waiter."""
        record.last_updated_at = utc_now()
        view = record.view()
        for listener in self._listeners:
            listener(view)
        self._cond.notify_all()

    def _apply_due(self, now: float) -> None:
        self._expire(now)
        for record in list(self._records.values()):
            while record.next_step_at is not None and record.next_step_at <= now:
                due = record.next_step_at
                step = record.steps.popleft()
                self._transition(record, step.status, step.message)
                if not record.steps or record.next_step_at is None:
                    record.next_step_at = None
                elif record.await_input and record.status == INPUT_REQUIRED:
                    record.next_step_at = None  # paused until provide_input
                else:
                    # Count the next delay from this step's due time, not from "now", so
                    # a late wake-up does not stretch the whole script.
                    record.next_step_at = due + record.steps[0].delay
            if record.cancel_at is not None and record.cancel_at <= now:
                record.cancel_at = None
                self._transition(record, "cancelled", CANCELLED_MESSAGE)

    def _next_deadline(self) -> float | None:
        deadlines = [
            deadline
            for record in self._records.values()
            for deadline in (record.next_step_at, record.cancel_at, record.expires_at)
            if deadline is not None
        ]
        return min(deadlines, default=None)

    def _run_scheduler(self) -> None:
        with self._cond:
            while not self._closed:
                now = time.monotonic()
                self._apply_due(now)
                deadline = self._next_deadline()
                # Any write calls notify_all, so a new, earlier deadline wakes us up too.
                self._cond.wait(None if deadline is None else max(0.0, deadline - now))

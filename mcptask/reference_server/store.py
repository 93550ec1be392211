"""The task store: all tasks of one server process, shared by every session, transport and
protocol era. Every read and write happens under one condition variable, which also wakes
`tasks/result` waiters when a task changes. Timed changes (script steps, delayed cancels,
ttl expiry) wait in a heap of deadlines, applied by the scheduler of the store's Clock.

Visibility: a task has an owner (a legacy session, under --scope session) or none (shared).
`viewer` None, which is what every 2026-07-28 request uses, sees only the shared tasks.
"""

from __future__ import annotations

import bisect
import threading
import uuid
from collections import deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from datetime import datetime

from mcptask.reference_server.records import (
    INPUT_REQUIRED,
    Clock,
    DeadlineQueue,
    SortKey,
    SystemClock,
    TaskNotFoundError,
    TaskRecord,
    TaskTerminalError,
    TaskView,
)
from mcptask.reference_server.scripting import TERMINAL_STATUSES, OnCancel, ScriptedTask, Step

Listener = Callable[[TaskView], None]

CANCELLED_MESSAGE = "Cancelled by client"
COMPLETED_DURING_CANCEL_MESSAGE = "Completed before the cancel request arrived"
INPUT_RECEIVED_MESSAGE = "Input received; working again"


class TaskStore:
    """Thread-safe task storage whose timed changes run on `clock` (default: real time).

    Listeners are called with the store's lock held, in change order, so they must be quick
    and must not call back into the store (they enqueue notifications).
    """

    def __init__(self, clock: Clock | None = None) -> None:
        self.clock: Clock = clock or SystemClock()
        self._cond = threading.Condition()
        self._records: dict[str, TaskRecord] = {}
        # Every task in the order of tasks/list (SortKey: created_at, creation number).
        self._order: list[TaskRecord] = []
        self._timers = DeadlineQueue()
        self._listeners: list[Listener] = []
        self._seq = 0
        self._closed = False
        self._stop_scheduler = self.clock.drive(self)

    @property
    def condition(self) -> threading.Condition:
        return self._cond

    def add_listener(self, listener: Listener) -> None:
        """Call `listener` with the new snapshot after every change of a task."""
        with self._cond:
            self._listeners.append(listener)

    def close(self) -> None:
        """Stop the scheduler and wake every waiter; the store stays readable."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        self._stop_scheduler()

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
        ask_url: str | None = None,
    ) -> TaskView:
        """Add a task; its steps and its ttl start counting now.

        With `await_input`, every step into input_required pauses the script until
        `provide_input` answers (a task created in input_required waits from the start).
        The ttl counts from now even when `created_at` lies in the past (seeded tasks): their
        history is fiction, and a short --ttl must not hide them before anyone saw them.
        """
        with self._cond:
            now = self.clock.monotonic()
            if task_id is None:
                task_id = str(uuid.uuid4())
            if task_id in self._records:
                raise ValueError(f"duplicate task id {task_id!r}")
            self._seq += 1
            created = created_at or self.clock.now()
            view = TaskView(
                task_id=task_id,
                status=status,
                status_message=status_message,
                created_at=created,
                last_updated_at=last_updated_at or created,
                ttl_ms=ttl_ms,
                owner=owner,
                sort_key=(int(created.timestamp() * 1_000_000), self._seq),
                ask_url=ask_url,
            )
            record = TaskRecord(
                view,
                on_cancel=on_cancel,
                steps=deque(steps) if status not in TERMINAL_STATUSES else deque(),
                expires_at=None if ttl_ms is None else now + ttl_ms / 1000,
                await_input=await_input,
            )
            if status == INPUT_REQUIRED:
                record.view = replace(view, input_key=record.next_input_key())
            if record.steps and not (await_input and status == INPUT_REQUIRED):
                record.next_step_at = now + record.steps[0].delay
            self._records[task_id] = record
            bisect.insort(self._order, record, key=_sort_key)  # usually an append
            self._timers.schedule(record)
            self._cond.notify_all()
            return record.view

    def start(self, script: ScriptedTask, ttl_ms: int | None, owner: str | None = None) -> TaskView:
        """Add the task of a script (a --tasks-file entry, a long_job call)."""
        return self.create(
            task_id=script.task_id,
            status=script.status,
            status_message=script.status_message,
            ttl_ms=ttl_ms,
            owner=owner,
            steps=script.steps,
            on_cancel=script.on_cancel,
            await_input=script.await_input,
            ask_url=script.ask_url,
        )

    def cancel(
        self, task_id: str, viewer: str | None, default: OnCancel, *, strict: bool
    ) -> TaskView:
        """Apply tasks/cancel: the task's own onCancel, else `default`, decides what happens.
        `strict` (2025-11-25): TaskTerminalError for a task that is, or just became, finished;
        else the cancel is acknowledged whatever happens (2026-07-28, --cancel-mode lenient)."""
        with self._cond:
            record = self._lookup(task_id, viewer)
            if record.terminal:
                if strict:
                    raise TaskTerminalError(task_id, record.view.status)
                return record.view
            action = record.on_cancel or default
            self._apply_cancel(record, action)
            if strict and action.kind == "complete":
                raise TaskTerminalError(task_id, "completed")
            return record.view

    def provide_input(
        self, task_id: str, viewer: str | None, responses: Mapping[str, object]
    ) -> bool:
        """Apply the answers to a task's questions; True if they were used. Once the
        outstanding request is answered the task goes back to `working` and a paused script
        resumes (its next delay counts from now); other keys are ignored."""
        with self._cond:
            record = self._lookup(task_id, viewer)
            if record.view.status != INPUT_REQUIRED or record.view.input_key not in responses:
                return False
            self._transition(record, "working", INPUT_RECEIVED_MESSAGE)
            if record.steps and record.next_step_at is None:  # paused by awaitInput: resume
                record.next_step_at = self.clock.monotonic() + record.steps[0].delay
                self._timers.schedule(record)
                self._cond.notify_all()
            return True

    def _apply_cancel(self, record: TaskRecord, action: OnCancel) -> None:
        # ignore, or a negative delay (ack-only): acknowledged, nothing changes
        if action.kind == "complete":
            self._transition(record, "completed", COMPLETED_DURING_CANCEL_MESSAGE)
        elif action.kind == "cancel":
            self._transition(record, "cancelled", CANCELLED_MESSAGE)
        elif action.kind == "delay" and action.delay_ms >= 0 and record.cancel_at is None:
            # Acknowledge now, cancel later; a repeated cancel keeps the first deadline.
            record.cancel_at = self.clock.monotonic() + action.delay_ms / 1000
            self._timers.schedule(record)
            self._cond.notify_all()

    def get(self, task_id: str, viewer: str | None) -> TaskView:
        with self._cond:
            return self._lookup(task_id, viewer).view

    def page(
        self, viewer: str | None, after: SortKey | None, limit: int
    ) -> tuple[list[TaskView], bool]:
        """Up to `limit` visible tasks after the key `after` (oldest first), and whether more
        follow. Keyset paging keeps pages stable when tasks expire between two requests."""
        views: list[TaskView] = []
        with self._cond:
            now = self.clock.monotonic()
            index = 0 if after is None else bisect.bisect_right(self._order, after, key=_sort_key)
            while index < len(self._order):
                record = self._order[index]
                if record.expired(now):
                    self._remove(record)  # the next record moves to `index`
                    continue
                index += 1
                if not record.visible_to(viewer):
                    continue
                if len(views) == limit:
                    return views, True
                views.append(record.view)
        return views, False

    def wait_terminal(
        self,
        task_id: str,
        viewer: str | None,
        until: Callable[[TaskView], bool] = lambda view: False,
    ) -> TaskView:
        """Block until the task is terminal or `until` says yes to it; raise if the task
        vanishes meanwhile."""
        with self._cond:
            while True:
                record = self._lookup(task_id, viewer)
                if record.terminal or until(record.view):
                    return record.view
                if self._closed:  # the server is stopping: this task will not end here
                    raise TaskNotFoundError(task_id)
                self.clock.wait(self._cond, None)

    def _lookup(self, task_id: str, viewer: str | None) -> TaskRecord:
        record = self._current(task_id)
        if record is None or not record.visible_to(viewer):
            raise TaskNotFoundError(task_id)
        return record

    def _current(self, task_id: str) -> TaskRecord | None:
        record = self._records.get(task_id)
        if record is not None and record.expired(self.clock.monotonic()):
            self._remove(record)
            return None
        return record

    def _remove(self, record: TaskRecord) -> None:
        del self._records[record.view.task_id]
        del self._order[bisect.bisect_left(self._order, record.view.sort_key, key=_sort_key)]
        self._cond.notify_all()

    def _transition(self, record: TaskRecord, status: str, message: str | None) -> None:
        if record.transition(status, message):
            self._changed(record)

    def _changed(self, record: TaskRecord) -> None:
        record.view = replace(record.view, last_updated_at=self.clock.now())
        for listener in self._listeners:
            listener(record.view)
        self._cond.notify_all()

    def run_due(self) -> float | None:
        """Apply every timed change due by now (lock held); return the next deadline."""
        now = self.clock.monotonic()
        for record in self._timers.due(now, self._records):
            if record.expired(now):
                self._remove(record)
                continue
            self._apply_due(record, now)
            self._timers.schedule(record)
        return self._timers.next_deadline(self._records)

    def _apply_due(self, record: TaskRecord, now: float) -> None:
        while record.next_step_at is not None and record.next_step_at <= now:
            due = record.next_step_at
            step = record.steps.popleft()
            self._transition(record, step.status, step.message)
            if not record.steps or record.next_step_at is None:
                record.next_step_at = None
            elif record.await_input and record.view.status == INPUT_REQUIRED:
                record.next_step_at = None  # paused until provide_input
            else:
                # Count the next delay from this step's due time, not from "now", so
                # a late wake-up does not stretch the whole script.
                record.next_step_at = due + record.steps[0].delay
        if record.cancel_at is not None and record.cancel_at <= now:
            record.cancel_at = None
            self._transition(record, "cancelled", CANCELLED_MESSAGE)


def _sort_key(record: TaskRecord) -> SortKey:
    return record.view.sort_key

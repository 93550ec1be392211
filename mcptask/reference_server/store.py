"""The task store: all tasks of one server process, their scripted changes, ttl and cancel.

One store is shared by every session and transport. A single scheduler thread applies timed
changes (script steps, delayed cancels, ttl expiry); every read and write happens under one
condition variable, which also wakes `tasks/result` waiters when a task changes.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from mcptask.reference_server.config import CancelMode
from mcptask.reference_server.scripting import TERMINAL_STATUSES, OnCancel, Step

CANCELLED_MESSAGE = "Cancelled by client"
COMPLETED_DURING_CANCEL_MESSAGE = "Completed before the cancel request arrived"


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
        )

    def visible_to(self, viewer: str | None) -> bool:
        # Owner None: a shared task (seeded, scripted, or created in global scope).
        return self.owner is None or self.owner == viewer


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
    ) -> TaskView:
        """Add a task; its steps start counting now, and so does its ttl.

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
            )
            if record.steps:
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
            if action.kind == "complete":
                self._transition(record, "completed", COMPLETED_DURING_CANCEL_MESSAGE)
                if lenient:
                    return record.view()
                raise TaskTerminalError(task_id, "completed")
            if action.kind == "cancel":
                self._transition(record, "cancelled", CANCELLED_MESSAGE)
            elif action.kind == "delay" and action.delay_ms >= 0 and record.cancel_at is None:
                # Acknowledge now, cancel later: a cooperative server. A negative delay
                # means never ("ack-only"); a repeated cancel keeps the first deadline.
                record.cancel_at = time.monotonic() + action.delay_ms / 1000
                self._cond.notify_all()
            return record.view()

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

    def _transition(self, record: _Record, status: str, message: str | None) -> None:
        if record.status in TERMINAL_STATUSES:
            return  # terminal statuses never change (spec); late script steps are dropped
        record.status = status
        record.status_message = message
        record.last_updated_at = utc_now()
        if status in TERMINAL_STATUSES:
            record.steps.clear()
            record.next_step_at = None
            record.cancel_at = None
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
                # Count the next delay from this step's due time, not from "now", so a
                # late wake-up does not stretch the whole script.
                if record.steps and record.next_step_at is not None:
                    record.next_step_at = due + record.steps[0].delay
                else:
                    record.next_step_at = None
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

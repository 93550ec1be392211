"""One task of the store: its snapshot (TaskView), its mutable record, which knows the rules
of one task's life, the store's errors, the queue of timed changes (DeadlineQueue), and the
store's time.

Everything time-driven about tasks (script steps, delayed cancels, ttl expiry, timestamps)
reads the store's Clock, and the store's scheduler runs on it: the SystemClock here, or the
test suite's ManualClock (tests/reference_server/manual_clock.py), whose time stands still
until `advance()` applies every change due by then, so tests need not sleep.
"""

from __future__ import annotations

import heapq
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Protocol

from mcptask.reference_server.scripting import TERMINAL_STATUSES, OnCancel, Step
from mcptask.reference_server.wire import (
    ELICITATION_CREATE,
    INVALID_PARAMS,
    JsonObject,
    JsonRpcError,
    call_result,
    form_elicitation,
)

if TYPE_CHECKING:
    from mcptask.reference_server.store import TaskStore

INPUT_REQUIRED = "input_required"

# (created_at in microseconds since the epoch, creation number): the order of tasks/list
# and what its cursors carry.
SortKey = tuple[int, int]


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
    sort_key: SortKey
    # The key of the outstanding input request while the task is input_required (a new key
    # each time the task enters that status, so keys are unique over the task's life).
    input_key: str | None = None
    # awaitInput with askUrl: the question is a URL to visit (URL-mode elicitation), not a form.
    ask_url: str | None = None

    # What the task answers, derived from its status and message (the test suite's tasks
    # driven by code, tests/conformance/fixtures/workers.py, give their own).

    def call_result(self) -> JsonObject:
        """The CallToolResult of a finished task."""
        return call_result(self.status, self.status_message)

    def call_error(self) -> JsonObject | None:
        """The JSON-RPC error object a failed task's request ended in, if it ended in one."""
        return None

    def questions(self) -> dict[str, JsonObject]:
        """What an input_required task asks, by key (both eras ask the same): one question
        under the task's input key, a URL to visit (askUrl) or a form asking for text,
        `answer`."""
        if self.status != INPUT_REQUIRED or self.input_key is None:
            return {}
        message = self.status_message or "The task needs input to continue."
        if self.ask_url is None:
            form = form_elicitation(message, {"answer": {"type": "string"}}, ["answer"])
            return {self.input_key: form}
        params = {"mode": "url", "message": message, "url": self.ask_url}
        elicitation_id = f"{self.task_id}-{self.input_key}"
        visit = {
            "method": ELICITATION_CREATE,
            "params": {**params, "elicitationId": elicitation_id},
        }
        return {self.input_key: visit}


class TaskNotFoundError(JsonRpcError):
    """The task does not exist, has expired, or is not visible to the asking session."""

    def __init__(self, task_id: str) -> None:
        super().__init__(INVALID_PARAMS, f"Task not found: {task_id}")


class TaskTerminalError(JsonRpcError):
    """A cancel arrived for a task already in a terminal status."""

    def __init__(self, task_id: str, status: str) -> None:
        super().__init__(
            INVALID_PARAMS, f"Cannot cancel task: already in terminal status '{status}'"
        )


@dataclass
class TaskRecord:
    """One task in the store (only ever touched under the store's lock): its current
    snapshot, replaced on every change, and what drives it (script, deadlines, input)."""

    view: TaskView
    on_cancel: OnCancel | None
    steps: deque[Step] = field(default_factory=deque)
    # Deadlines on the store's monotonic clock; None when nothing is pending.
    next_step_at: float | None = None
    cancel_at: float | None = None
    expires_at: float | None = None
    # The deadline this record is queued under in the DeadlineQueue.
    timer_at: float | None = None
    # awaitInput: entering input_required pauses the script until the input arrives.
    await_input: bool = False
    input_seq: int = 0

    @property
    def terminal(self) -> bool:
        return self.view.status in TERMINAL_STATUSES

    def visible_to(self, viewer: str | None) -> bool:
        """Owner None: a shared task (seeded, scripted, created in global scope or by a
        2026-07-28 request), visible to everyone; else only to its owner."""
        return self.view.owner is None or self.view.owner == viewer

    def expired(self, now: float) -> bool:
        return self.expires_at is not None and self.expires_at <= now

    @property
    def next_deadline(self) -> float | None:
        deadlines = (self.next_step_at, self.cancel_at, self.expires_at)
        return min((d for d in deadlines if d is not None), default=None)

    def next_input_key(self) -> str:
        self.input_seq += 1
        return f"input-{self.input_seq}"

    def transition(self, status: str, message: str | None) -> bool:
        """Move to `status`; False (and no change) when the task is already terminal:
        terminal statuses never change (spec), so late script steps are dropped."""
        if self.terminal:
            return False
        input_key = self.view.input_key
        if status != INPUT_REQUIRED:
            input_key = None
        elif self.view.status != INPUT_REQUIRED:
            input_key = self.next_input_key()
        if status in TERMINAL_STATUSES:
            self.steps.clear()
            self.next_step_at = None
            self.cancel_at = None
        self.view = replace(self.view, status=status, status_message=message, input_key=input_key)
        return True


# A heap of (deadline, creation number, task id). A task is queued under its earliest deadline
# only; an entry stays current while it matches the task's `timer_at`, so a task rescheduled
# earlier, or removed, leaves a stale entry behind that is skipped when it comes up, and
# nothing ever has to search the heap: finding what is due costs what is due.
class DeadlineQueue:
    """The records with something pending, by their next deadline (lock held by caller)."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, str]] = []

    def schedule(self, record: TaskRecord) -> None:
        """Queue the record under its next deadline unless an earlier entry will wake it."""
        deadline = record.next_deadline
        if deadline is None or (record.timer_at is not None and record.timer_at <= deadline):
            return
        record.timer_at = deadline
        heapq.heappush(self._heap, (deadline, record.view.sort_key[1], record.view.task_id))

    def due(self, now: float, records: Mapping[str, TaskRecord]) -> Iterator[TaskRecord]:
        """Take out every record due by `now`, earliest first, to be scheduled again."""
        while self._heap and self._heap[0][0] <= now:
            record = self._current(heapq.heappop(self._heap), records)
            if record is not None:
                record.timer_at = None
                yield record

    def next_deadline(self, records: Mapping[str, TaskRecord]) -> float | None:
        while self._heap and self._current(self._heap[0], records) is None:
            heapq.heappop(self._heap)
        return self._heap[0][0] if self._heap else None

    @staticmethod
    def _current(
        entry: tuple[float, int, str], records: Mapping[str, TaskRecord]
    ) -> TaskRecord | None:
        deadline, seq, task_id = entry
        record = records.get(task_id)
        if record is None or record.view.sort_key[1] != seq or record.timer_at != deadline:
            return None  # the task is gone, or was queued again under an earlier deadline
        return record


# The SystemClock's scheduler thread gives up waiting for the store to close after this long.
SCHEDULER_JOIN_SECONDS = 2.0


class Clock(Protocol):
    """Monotonic seconds (deadlines), UTC wall time, and waits on either."""

    def monotonic(self) -> float: ...

    def now(self) -> datetime: ...

    def wait(self, condition: threading.Condition, timeout: float | None) -> None:
        """Wait on `condition` (held) until notified or `timeout` seconds of this clock have
        passed (None: no limit); callers re-check, a wait may end early."""

    def drive(self, scheduler: TaskStore) -> Callable[[], None]:
        """Call `scheduler.run_due()` (under its condition) whenever changes may fall due,
        until the returned function is called (it stops the driving and waits for it)."""


class SystemClock:
    """Real time, and a scheduler thread that sleeps until the next deadline (or a change:
    every write of the store notifies the condition)."""

    def monotonic(self) -> float:
        return time.monotonic()

    def now(self) -> datetime:
        return datetime.now(UTC)

    def wait(self, condition: threading.Condition, timeout: float | None) -> None:
        condition.wait(timeout)

    def drive(self, scheduler: TaskStore) -> Callable[[], None]:
        condition = scheduler.condition
        stopped = False

        def run() -> None:
            with condition:
                while not stopped:
                    deadline = scheduler.run_due()
                    timeout = None if deadline is None else max(0.0, deadline - time.monotonic())
                    if timeout is not None:  # a deadline centuries away still waits, not raises
                        timeout = min(timeout, threading.TIMEOUT_MAX)
                    condition.wait(timeout)

        thread = threading.Thread(target=run, name="reference-server-scheduler", daemon=True)
        thread.start()

        def stop() -> None:
            nonlocal stopped
            with condition:
                stopped = True
                condition.notify_all()
            thread.join(timeout=SCHEDULER_JOIN_SECONDS)

        return stop

"""Feed the record of known tasks from what the client meets (`client.observe.TaskObserver`).

Writes are batched: a task that a `tools/call` created is written at once (before `start`
prints anything, so that its id cannot be lost), others at most a second later or when the
command ends. A task whose status and session did not change since this process last wrote it
is not written again (of the last `MEMORY` or so tasks written: memory stays bounded however
many tasks a list brings). A failing record never fails the command: the first failure is reported
once, and recording stops. Thread-safe: a bulk cancel's confirmations report from a thread of
their own.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from mcptask.store.known import ServerRecord, Sighting, StoreFailure

if TYPE_CHECKING:
    from mcptask.protocol import Task

_State = tuple[str, str | None, int | None]
"""(status, session, ttl ms) as last written."""

FLUSH_SECONDS = 1.0
FLUSH_BATCH = 500
MEMORY = 10_000
"""How many tasks' last written state the recorder remembers (twice this at most): enough
for a watch of that many tasks to write nothing while nothing changes, bounded so that a list
of a million tasks does not hold a million entries."""


class Recorder:
    """A `TaskObserver` that writes to one server's record."""

    def __init__(
        self,
        record: ServerRecord,
        *,
        on_failure: Callable[[str], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.record = record
        self._on_failure = on_failure
        self._clock = clock
        self._pending: dict[str, Sighting] = {}
        self._gone: set[str] = set()
        self._detached: set[str] = set()
        # What this process last wrote per task, in two generations: when the newer is full it
        # becomes the older, and the older one is dropped (a task forgotten here is only
        # written again, never lost).
        self._written: dict[str, _State] = {}
        self._older: dict[str, _State] = {}
        self._last_flush = clock()
        self._failed = False
        self._lock = threading.RLock()

    def seen(self, task: Task, *, via: str, session_id: str | None, tool: str | None) -> None:
        """Queue the task's status, ttl and session; write now if a tools/call created it."""
        self._queue(((task, session_id),), via, tool)

    def seen_page(self, page: Sequence[tuple[Task, str | None]], *, via: str) -> None:
        """Queue a page of tasks, each with its session, as `seen` does one."""
        self._queue(page, via, None)

    def _queue(self, page: Iterable[tuple[Task, str | None]], via: str, tool: str | None) -> None:
        with self._lock:
            pending, gone = self._pending, self._gone
            for task, session_id in page:
                task_id = task.taskId
                state = (task.status, session_id, task.ttl_milliseconds)
                written = self._written.get(task_id) or self._older.get(task_id)
                if written == state and task_id not in gone:
                    continue  # written already; what was queued before is flushed in time
                gone.discard(task_id)
                pending[task_id] = Sighting(task_id, state[0], state[2], session_id, via, tool)
                if task_id not in self._written and len(self._written) >= MEMORY:
                    self._older, self._written = self._written, {}
                self._written[task_id] = state
            self._maybe_flush(now=via == "tools/call")

    def gone(self, task_id: str) -> None:
        """Queue forgetting a task the server no longer knows."""
        with self._lock:
            self._pending.pop(task_id, None)
            self._forget_written(task_id)
            self._gone.add(task_id)
            self._maybe_flush()

    def detached(self, task_id: str) -> None:
        """Queue unbinding a task from its ended session (it is visible without it)."""
        with self._lock:
            self._detached.add(task_id)
            self._forget_written(task_id)
            self._maybe_flush()

    def _forget_written(self, task_id: str) -> None:
        self._written.pop(task_id, None)
        self._older.pop(task_id, None)

    def flush(self) -> None:
        """Write everything queued, in one transaction."""
        with self._lock:
            self._last_flush = self._clock()
            if self._failed or not (self._pending or self._gone or self._detached):
                return
            sightings, gone, detached = list(self._pending.values()), self._gone, self._detached
            self._pending, self._gone, self._detached = {}, set(), set()
            try:
                self.record.write(sightings, gone=gone, detached=detached)
            except StoreFailure as exc:
                self._failed = True
                self._on_failure(f"tasks are not being recorded: {exc}")

    def _maybe_flush(self, *, now: bool = False) -> None:
        due = self._clock() - self._last_flush >= FLUSH_SECONDS
        if now or due or len(self._pending) >= FLUSH_BATCH:
            self.flush()

"""The test suite's clock of the reference server's store: time that moves only in `advance`.

It implements mcptask.reference_server.records.Clock, so that tests say "a second later"
instead of sleeping.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

from mcptask.reference_server.store import TaskStore

# Where a ManualClock's wall time starts unless told otherwise: a fixed moment, so that
# timestamps in tests do not depend on when they run.
MANUAL_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


class ManualClock:
    """Time that moves only when a test calls `advance` (monotonic and wall time together).

    There is no scheduler thread: `advance` runs every driven scheduler itself, so that
    every change due by the new time has happened (and its listeners were called) when it
    returns. Threads that wait on the clock (the work of tools given in code, tasks/result)
    wake up then and re-check; `wait_for_waiting` tells a test that a thread is blocked.
    """

    def __init__(self, start: datetime = MANUAL_EPOCH, monotonic: float = 0.0) -> None:
        self._lock = threading.Condition()
        self._monotonic = monotonic
        self._wall = start
        self._schedulers: list[TaskStore] = []
        self._waiting = 0

    def monotonic(self) -> float:
        """The manual monotonic time, in seconds."""
        with self._lock:
            return self._monotonic

    def now(self) -> datetime:
        """The manual wall-clock time."""
        with self._lock:
            return self._wall

    def wait(self, condition: threading.Condition, timeout: float | None) -> None:
        """Wait until notified: the time a timeout counts can only pass in `advance`,
        which notifies every driven scheduler's condition."""
        with self._lock:
            self._waiting += 1
            self._lock.notify_all()
        try:
            condition.wait()
        finally:
            with self._lock:
                self._waiting -= 1
                self._lock.notify_all()

    def drive(self, scheduler: TaskStore) -> Callable[[], None]:
        """Run `scheduler` on every `advance` until the returned function is called."""
        with self._lock:
            self._schedulers.append(scheduler)

        def stop() -> None:
            with self._lock:
                if scheduler in self._schedulers:
                    self._schedulers.remove(scheduler)
            with scheduler.condition:
                scheduler.condition.notify_all()

        return stop

    def advance(self, seconds: float) -> None:
        """Move time forward and apply every change that falls due by then."""
        if seconds < 0:
            raise ValueError("a clock does not go back")
        with self._lock:
            self._monotonic += seconds
            self._wall += timedelta(seconds=seconds)
            schedulers = list(self._schedulers)
        for scheduler in schedulers:
            with scheduler.condition:
                scheduler.run_due()
                scheduler.condition.notify_all()

    def wait_for_waiting(self, count: int, timeout: float) -> bool:
        """Block (in real time, up to `timeout` seconds) until at least `count` threads are
        blocked in `wait`; False if they never were."""
        with self._lock:
            return self._lock.wait_for(lambda: self._waiting >= count, timeout)

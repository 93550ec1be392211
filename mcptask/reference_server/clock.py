"""The task store's time: a Clock protocol, the real clock, and a manual clock for tests.

Everything time-driven about tasks (script steps, delayed cancels, ttl expiry, the work of
tools given in code, timestamps) reads the store's clock, and the store's scheduler runs on it.
With the SystemClock a scheduler thread applies changes as they fall due. With a
ManualClock time stands still until `advance()`, which applies every change due by then
before it returns, so tests say "a second later" instead of sleeping.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Protocol

# The SystemClock's scheduler thread gives up waiting for the store to close after this long.
SCHEDULER_JOIN_SECONDS = 2.0
# Where a ManualClock's wall time starts unless told otherwise: a fixed moment, so that
# timestamps in tests do not depend on when they run.
MANUAL_EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


class Scheduler(Protocol):
    """What a clock drives: the store's timed changes, under the store's condition."""

    @property
    def condition(self) -> threading.Condition:
        """The lock every change of the store happens under."""
        ...

    def run_due(self) -> float | None:
        """Apply every change due by now (lock held); the next deadline, or None."""
        ...


class Clock(Protocol):
    """A source of monotonic and wall time, and the way to wait for either to pass."""

    def monotonic(self) -> float:
        """Seconds that only ever increase (deadlines are counted in these)."""
        ...

    def now(self) -> datetime:
        """The wall-clock time, in UTC."""
        ...

    def wait(self, condition: threading.Condition, timeout: float | None) -> None:
        """Wait on `condition` (held by the caller) until it is notified or `timeout`
        seconds of this clock have passed (None: no limit). Callers re-check what they
        wait for: a wait may end early."""
        ...

    def drive(self, scheduler: Scheduler) -> Callable[[], None]:
        """Call `scheduler.run_due()` whenever changes may fall due, until the returned
        function is called (it stops the driving and waits for it to end)."""
        ...


class SystemClock:
    """Real time: time.monotonic, datetime.now, and a scheduler thread."""

    def monotonic(self) -> float:
        """time.monotonic()."""
        return time.monotonic()

    def now(self) -> datetime:
        """datetime.now(UTC)."""
        return datetime.now(UTC)

    def wait(self, condition: threading.Condition, timeout: float | None) -> None:
        """Condition.wait with a real timeout."""
        condition.wait(timeout)

    def drive(self, scheduler: Scheduler) -> Callable[[], None]:
        """Start a daemon thread that sleeps until the next deadline (or a change)."""
        condition = scheduler.condition
        stopped = False

        def run() -> None:
            with condition:
                while not stopped:
                    deadline = scheduler.run_due()
                    # Every write of the store notifies the condition, so a new, earlier
                    # deadline wakes the thread too.
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
        self._schedulers: list[Scheduler] = []
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

    def drive(self, scheduler: Scheduler) -> Callable[[], None]:
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

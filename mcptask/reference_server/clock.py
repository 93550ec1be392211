"""The task store's time: a Clock protocol and the real clock (the test suite's ManualClock,
tests/reference_server/manual_clock.py, is the other one).

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
from datetime import UTC, datetime
from typing import Protocol

# The SystemClock's scheduler thread gives up waiting for the store to close after this long.
SCHEDULER_JOIN_SECONDS = 2.0


class Scheduler(Protocol):
    """What a clock drives: the store's timed changes (run_due), under its condition."""

    @property
    def condition(self) -> threading.Condition: ...

    def run_due(self) -> float | None: ...


class Clock(Protocol):
    """A source of monotonic and wall time, and the way to wait for either to pass."""

    def monotonic(self) -> float:
        """Seconds that only ever increase (deadlines are counted in these)."""
        ...

    def now(self) -> datetime:
        """The wall-clock time, in UTC."""
        ...

    def wait(self, condition: threading.Condition, timeout: float | None) -> None:
        """Wait on `condition` (held) until notified or `timeout` seconds of this clock have
        passed (None: no limit); callers re-check, a wait may end early."""
        ...

    def drive(self, scheduler: Scheduler) -> Callable[[], None]:
        """Call `scheduler.run_due()` whenever changes may fall due, until the returned
        function is called (it stops the driving and waits for it to end)."""
        ...


class SystemClock:
    """Real time: time.monotonic, datetime.now, and a scheduler thread."""

    def monotonic(self) -> float:
        return time.monotonic()

    def now(self) -> datetime:
        return datetime.now(UTC)

    def wait(self, condition: threading.Condition, timeout: float | None) -> None:
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

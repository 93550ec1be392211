"""The task store's time: a Clock protocol and the real clock (the test suite's ManualClock,
tests/reference_server/manual_clock.py, is the other one: time stands still until
`advance()`, which applies every change due by then, so tests need not sleep).

Everything time-driven about tasks (script steps, delayed cancels, ttl expiry, timestamps)
reads the store's clock, and the store's scheduler runs on it.
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
    """Monotonic seconds (deadlines), UTC wall time, and waits on either."""

    def monotonic(self) -> float: ...

    def now(self) -> datetime: ...

    def wait(self, condition: threading.Condition, timeout: float | None) -> None:
        """Wait on `condition` (held) until notified or `timeout` seconds of this clock have
        passed (None: no limit); callers re-check, a wait may end early."""

    def drive(self, scheduler: Scheduler) -> Callable[[], None]:
        """Call `scheduler.run_due()` whenever changes may fall due, until the returned
        function is called (it stops the driving and waits for it to end)."""


class SystemClock:
    """Real time, and a scheduler thread that sleeps until the next deadline (or a change:
    every write of the store notifies the condition)."""

    def monotonic(self) -> float:
        return time.monotonic()

    def now(self) -> datetime:
        return datetime.now(UTC)

    def wait(self, condition: threading.Condition, timeout: float | None) -> None:
        condition.wait(timeout)

    def drive(self, scheduler: Scheduler) -> Callable[[], None]:
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

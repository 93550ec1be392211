"""Retrying transient failures: bounded in count and in time, exponential backoff with
jitter, and the server's `Retry-After` honoured.

Which failures a request may be retried on depends on what a repeat would do: an idempotent
request (`tasks/get`, `tasks/list`, `server/discover`, `initialize`) on any `TransientError`;
anything else (`tasks/cancel`) only when it provably never reached the server or the server
said it did not act (`NotDelivered`, `ServerBusy`). An `AnswerLost` on such a request is the
caller's to resolve (the cancel run asks `tasks/get`).
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from mcptask.errors import NotDelivered, ServerBusy, TransientError

T = TypeVar("T")

DEFAULT_RETRIES = 4
DEFAULT_RETRY_FOR = 30.0
BACKOFF_BASE = 0.25
BACKOFF_CAP = 5.0

ALWAYS: tuple[type[TransientError], ...] = (TransientError,)
"""What an idempotent request is retried on."""

UNSENT: tuple[type[TransientError], ...] = (NotDelivered, ServerBusy)
"""What any request is retried on: the server provably did not act on it."""


@dataclass(frozen=True)
class RetryPolicy:
    """How one client retries. `retries` None means no count limit (only `retry_for`)."""

    retries: int | None = DEFAULT_RETRIES
    retry_for: float = DEFAULT_RETRY_FOR
    """Seconds from the first failure of a request after which it is not retried again."""
    sleep: Callable[[float], object] = time.sleep
    stopped: Callable[[], bool] = lambda: False
    """The user asked to stop: no more retries (the failure is raised at once)."""
    log: Callable[[str], None] | None = None
    jitter: Callable[[], float] = field(default=random.random)

    def run(
        self,
        attempt: Callable[[], T],
        *,
        what: str,
        retry_on: tuple[type[TransientError], ...] = ALWAYS,
    ) -> T:
        """`attempt()`, again after each failure in `retry_on` while the policy allows."""
        first_failure: float | None = None
        failures = 0
        while True:
            try:
                return attempt()
            except retry_on as failure:
                now = time.monotonic()
                first_failure = now if first_failure is None else first_failure
                failures += 1
                delay = self._delay(failures, failure)
                if (
                    (self.retries is not None and failures > self.retries)
                    or now + delay - first_failure > self.retry_for
                    or self.stopped()
                ):
                    raise
                if self.log is not None:
                    limit = f"/{self.retries}" if self.retries is not None else ""
                    self.log(
                        f"retry {failures}{limit} of {what} in {delay:.2f}s: {failure.message}"
                    )
                self.sleep(delay)

    def _delay(self, failures: int, failure: TransientError) -> float:
        if failure.retry_after is not None:
            return failure.retry_after
        # Exponential, half of it random: spread out, and never a burst of near-zero waits.
        ceiling: float = min(BACKOFF_CAP, BACKOFF_BASE * 2.0 ** (failures - 1))
        return ceiling / 2 + ceiling / 2 * self.jitter()

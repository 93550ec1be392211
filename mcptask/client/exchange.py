"""The client's exchange of JSON-RPC messages with a transport: fresh ids, the one retry
loop (`RetryPolicy`: bounded in count and in time, exponential backoff with jitter, the
server's `Retry-After` honoured), and the round trips of task requests.

A request is retried only where a repeat does no harm: an idempotent one (`IDEMPOTENT`) on
any `TransientError`; any other (`tasks/cancel`) only when it provably never reached the
server or the server said it did not act (`NotDelivered`, `ServerBusy`): an `AnswerLost` is
then the caller's to resolve. Nothing is sent again after an HTTP timeout (`HttpTimeout`): a
server that held a request for --timeout would most likely hold its repeat as long.
"""

from __future__ import annotations

import itertools
import random
import statistics
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from mcptask.errors import HttpTimeout, NotDelivered, ServerBusy, TransientError
from mcptask.protocol.jsonrpc import JsonObject, notification_message, request_message
from mcptask.transport import Transport

T = TypeVar("T")

DEFAULT_RETRIES = 4
DEFAULT_RETRY_FOR = 30.0
BACKOFF_BASE = 0.25
BACKOFF_CAP = 5.0

ALWAYS: tuple[type[TransientError], ...] = (TransientError,)
"""What an idempotent request is retried on."""

UNSENT: tuple[type[TransientError], ...] = (NotDelivered, ServerBusy)
"""What any request is retried on: the server provably did not act on it."""

IDEMPOTENT = frozenset({"server/discover", "initialize", "tasks/get", "tasks/list", "tools/list"})

KEPT_ROUND_TRIPS = 9
ENOUGH_ROUND_TRIPS = 3
"""Round trips heard before there is a typical one: the first answers of a process are its
slowest (cold code paths on both sides), and one of two would be half the evidence."""


@dataclass(frozen=True)
class RetryPolicy:
    """How one client retries; `retries` None: no count limit (only `retry_for`)."""

    retries: int | None = DEFAULT_RETRIES
    retry_for: float = DEFAULT_RETRY_FOR
    """Seconds from the first failure of a request after which it is not retried again."""
    sleep: Callable[[float], object] = time.sleep
    stopped: Callable[[], bool] = lambda: False  # no more retries: the failure is raised
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
                    isinstance(failure, HttpTimeout)
                    or (self.retries is not None and failures > self.retries)
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


class Exchange:
    """Requests and notifications over one transport: fresh ids, retries, round trips
    (thread-safe)."""

    def __init__(self, transport: Transport, retry: RetryPolicy | None = None) -> None:
        self.transport = transport
        self.retry = retry or RetryPolicy()
        self._round_trips: deque[float] = deque(maxlen=KEPT_ROUND_TRIPS)
        self._round_trips_lock = threading.Lock()
        self._counter = itertools.count(1)
        self._id_prefix: str | None = None

    def request(
        self,
        method: str,
        params: JsonObject | None,
        *,
        headers: dict[str, str] | None = None,
        timeout: float | None = None,
        session: str | None = None,
        retried: bool = True,
    ) -> JsonObject:
        """Send a stamped request, retried as the method allows (`retried=False`: once, a
        probe whose silence is the answer); the whole answer."""

        def attempt() -> JsonObject:
            message = request_message(self._next_id(), method, params)
            started = time.monotonic()
            answer = self.transport.request(
                message, headers=headers, timeout=timeout, session=session
            )
            if method.startswith("tasks/"):
                self.add_round_trip(time.monotonic() - started)
            return answer

        if not retried:
            return attempt()
        retry_on = ALWAYS if method in IDEMPOTENT else UNSENT
        return self.retry.run(attempt, what=method, retry_on=retry_on)

    def add_round_trip(self, seconds: float) -> None:
        with self._round_trips_lock:
            self._round_trips.append(seconds)

    @property
    def typical_round_trip(self) -> float | None:
        """The (lower) median of the last task requests' round trips in seconds (one attempt
        each: a retry's wait is none), None before `ENOUGH_ROUND_TRIPS` of them: a fault or a
        stall now and then does not move it. A bulk cancel reads it to decide whether
        overlapping pays."""
        with self._round_trips_lock:
            recent = list(self._round_trips)
        return statistics.median_low(recent) if len(recent) >= ENOUGH_ROUND_TRIPS else None

    def notify(self, method: str) -> None:
        """Resent only when it provably never arrived."""
        message = notification_message(method)
        self.retry.run(lambda: self.transport.notify(message), what=method, retry_on=UNSENT)

    def _next_id(self) -> int | str:
        number = next(self._counter)
        return number if self._id_prefix is None else f"{self._id_prefix}{number}"

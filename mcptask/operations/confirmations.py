"""Confirming accepted cancels with `tasks/get`. Over a slow link one worker thread sends the
confirmations, in order, while the next cancels go out (one round trip per task, not two);
its answers are applied back on the caller's thread (`settled`)."""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from mcptask.client.session import McpClient
from mcptask.errors import RpcError
from mcptask.protocol.tasks import Task

OVERLAP_FROM_SECONDS = 0.004
"""The typical round trip from which a confirmation goes out beside the next cancel. Below it
(a server on this machine or the same LAN) overlapping would save under a few milliseconds a
task, and the requests keep one order on the server, which is easier to follow; above it the
saving is a round trip a task (bench/bulk_cancel.py, 20 ms per request: 0.55x the raw floor)."""

OUTSTANDING = 8
"""At most this many confirmations wait for their answer: the cancels never run far ahead
of what is known about them (an interrupted run reports each sent cancel with its answer)."""


def worth_overlapping(typical_round_trip: float | None) -> bool:
    return typical_round_trip is not None and typical_round_trip >= OVERLAP_FROM_SECONDS


@dataclass
class _Confirmation:
    task_id: str
    done: threading.Event = field(default_factory=threading.Event)
    answer: Task | RpcError | None = None  # None when it was never sent
    failure: BaseException | None = None  # anything else the get raised: it ends the run


class Confirmations:
    """`tasks/get` for accepted cancels, sent at once or by the worker (`overlap`; None: where
    the transport carries two requests at once and it pays)."""

    def __init__(
        self,
        client: McpClient,
        *,
        overlap: bool | None = None,
        stopped: Callable[[], bool] = lambda: False,
    ) -> None:
        self._client = client
        self._overlap = overlap
        self._stopped = stopped
        self._pending: deque[_Confirmation] = deque()  # not yet applied, in order
        self._queue: queue.SimpleQueue[_Confirmation | None] = queue.SimpleQueue()
        self._closing = False
        self._worker: threading.Thread | None = None

    @property
    def oldest(self) -> str | None:
        """The task of the oldest confirmation not applied (results after it wait)."""
        return self._pending[0].task_id if self._pending else None

    @property
    def full(self) -> bool:
        """The next cancel waits for the oldest confirmation first."""
        return len(self._pending) >= OUTSTANDING

    def ask(self, task_id: str, *, last: bool = False) -> Task | RpcError | None:
        """The answer, asked at once; or None where it goes on the worker (overlapping pays,
        and a cancel follows: not `last`), whose answer `settled` gives."""
        overlap = self._overlap
        if overlap is None:
            trip = self._client.typical_round_trip
            overlap = self._client.transport.concurrent and worth_overlapping(trip)
        if last or not overlap:
            try:
                return self._client.get_task(task_id)
            except RpcError as exc:
                return exc
        if self._worker is None:
            # A daemon: a request the worker is in never keeps the process from exiting.
            self._worker = threading.Thread(target=self._work, name="confirmations", daemon=True)
            self._worker.start()
        confirmation = _Confirmation(task_id)
        self._pending.append(confirmation)
        self._queue.put(confirmation)
        return None

    def settled(
        self, *, wait: bool, count: int | None = None
    ) -> Iterator[tuple[str, Task | RpcError]]:
        """The worker's answers in, in order (`wait`: all, or `count`). One never sent yields
        nothing; one that failed raises (the rest stay)."""
        taken = 0
        while self._pending and (count is None or taken < count):
            confirmation = self._pending[0]
            if not wait and not confirmation.done.is_set():
                return  # the worker answers in order: none after it is in either
            confirmation.done.wait()
            self._pending.popleft()
            taken += 1
            if confirmation.failure is not None:
                raise confirmation.failure
            if confirmation.answer is not None:
                yield confirmation.task_id, confirmation.answer

    def close(self, *, wait: bool) -> None:
        """Send nothing more (`wait`: after the get in flight; the rest stay until `abandon`)."""
        self._closing = True
        if self._worker is not None:
            self._queue.put(None)
            if wait:
                self._worker.join()

    def abandon(self) -> None:
        self._pending.clear()

    def _work(self) -> None:
        while (confirmation := self._queue.get()) is not None:
            if self._closing or self._stopped():
                confirmation.done.set()  # never sent
                continue
            try:
                confirmation.answer = self._client.get_task(confirmation.task_id)
            except RpcError as exc:
                confirmation.answer = exc
            except BaseException as exc:  # handed to the caller's thread, raised there
                confirmation.failure = exc
            finally:
                confirmation.done.set()

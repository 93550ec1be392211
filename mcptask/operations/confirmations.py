"""Confirming accepted cancels with `tasks/get`: the piece a cancel run plugs in beside its
cancels. Over a slow link it sends the confirmations on a thread of its own while the next
cancels go out, so that a bulk cancel costs one round trip per task, not two.

The cancels stay on the caller's thread, strictly one after the other. A confirmation is
sent at once there, or, where `overlap()` says it pays, by one worker thread in the order
asked (over HTTP the worker's get and the next cancel travel side by side). The answers are
applied back on the caller's thread (`settled`), where every outcome is decided and shown.
Once `stopped()` says so, or the run ends, no confirmation is sent any more: its task ends
with what its cancel's answer said.
"""

from __future__ import annotations

import queue
import threading
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

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
    answer: Task | RpcError | None = None
    """The task, or the error the server answered with; None when it was never sent."""
    failure: BaseException | None = None
    """Anything else the get raised (retries spent, the server gone): it ends the run."""


class Confirmations:
    """`tasks/get` for accepted cancels: sent when asked for, or by a worker thread."""

    def __init__(
        self,
        fetch: Callable[[str], Task],
        *,
        overlap: Callable[[], bool] = lambda: False,
        stopped: Callable[[], bool] = lambda: False,
    ) -> None:
        self._fetch = fetch
        self._overlap = overlap
        self._stopped = stopped
        self._pending: deque[_Confirmation] = deque()
        self._queue: queue.SimpleQueue[_Confirmation | None] = queue.SimpleQueue()
        self._closing = False
        self._worker: threading.Thread | None = None

    @property
    def oldest(self) -> str | None:
        """The task of the oldest confirmation not yet applied (results after it wait)."""
        return self._pending[0].task_id if self._pending else None

    @property
    def full(self) -> bool:
        """The next cancel waits for the oldest confirmation first."""
        return len(self._pending) >= OUTSTANDING

    def ask(self, task_id: str, *, last: bool = False) -> None:
        """Confirm one accepted cancel: on the worker where `overlap()` says it pays and a
        cancel follows (not `last`), else at once. A failure other than the server's error
        answer is raised from here (at once) or from `settled` (on the worker)."""
        confirmation = _Confirmation(task_id)
        if last or not self._overlap():
            self._send(confirmation)
            if confirmation.failure is not None:
                raise confirmation.failure
            self._pending.append(confirmation)
            return
        if self._worker is None:
            # A daemon: a request the worker is in never keeps the process from exiting.
            self._worker = threading.Thread(target=self._work, name="confirmations", daemon=True)
            self._worker.start()
        self._pending.append(confirmation)
        self._queue.put(confirmation)

    def settled(
        self, *, wait: bool, count: int | None = None
    ) -> Iterator[tuple[str, Task | RpcError]]:
        """The answers that are in, in the order asked (one still out on the worker holds
        back only itself and those after it on the worker); with `wait`, all of them (or the
        first `count`), waiting for each. A confirmation that was never sent yields nothing;
        one that failed raises its failure (the rest stay)."""
        taken = index = 0
        while index < len(self._pending) and (count is None or taken < count):
            confirmation = self._pending[index]
            if not confirmation.done.is_set():
                if not wait:
                    index += 1
                    continue
                confirmation.done.wait()
            del self._pending[index]
            taken += 1
            if confirmation.failure is not None:
                raise confirmation.failure
            if confirmation.answer is not None:
                yield confirmation.task_id, confirmation.answer

    def close(self, *, wait: bool) -> None:
        """Send nothing more; with `wait`, let the get in flight finish first. The
        confirmations left unanswered stay until `abandon` drops them."""
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
            self._send(confirmation)

    def _send(self, confirmation: _Confirmation) -> None:
        try:
            confirmation.answer = self._fetch(confirmation.task_id)
        except RpcError as exc:
            confirmation.answer = exc
        except BaseException as exc:  # handed to the caller's thread, raised there
            confirmation.failure = exc
        finally:
            confirmation.done.set()

"""How often to ask a server about a task: its `pollInterval`, within a floor and a cap."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from mcptask.errors import RpcError
from mcptask.protocol.tasks import Task, is_terminal

POLL_FLOOR_SECONDS = 0.1
"""Never poll faster than this, whatever the server asks: it protects the server from us."""

POLL_CAP_SECONDS = 5.0
"""Never wait longer than this between polls, so that an outcome is seen promptly."""

DEFAULT_POLL_SECONDS = 0.5
"""Used when the server gives no pollInterval."""


def clamp_interval(seconds: float) -> float:
    """An interval held between the floor and the cap."""
    return min(POLL_CAP_SECONDS, max(POLL_FLOOR_SECONDS, seconds))


def poll_delay(tasks: Iterable[Task | None], override: float | None = None) -> float:
    """The wait before the next round of polls over `tasks`.

    An explicit override wins (still clamped); otherwise the shortest interval any task asked
    for, so that no task is polled later than its server wants.
    """
    if override is not None:
        return clamp_interval(override)
    asked = [
        task.poll_interval_seconds
        for task in tasks
        if task is not None and task.poll_interval_seconds is not None
    ]
    return clamp_interval(min(asked) if asked else DEFAULT_POLL_SECONDS)


@dataclass
class PollLoop:
    """Poll `tasks/get` for a changing set of tasks until none is left, time runs out, or stop:
    the one loop of `cancel` (confirming outcomes), `result` (waiting for the end) and `watch`.

    Each round asks about every id `pending()` returns, in order, one request at a time, and
    hands each answer (a task, or the `RpcError` the server gave) to `observe`, which decides
    what stays pending. `known` may answer for the round first (watch: from `tasks/list`
    pages): a task it gives that is not terminal is not asked for. `after_round` follows each
    whole round. Between rounds it waits the server's poll interval (`delay`); `wait` may
    return early (a status push).
    """

    fetch: Callable[[str], Task]
    pending: Callable[[], list[str]]
    observe: Callable[[str, Task | RpcError], None]
    delay: Callable[[], float]
    wait: Callable[[float], object] = time.sleep
    stop: Callable[[], bool] = lambda: False
    known: Callable[[list[str]], Mapping[str, Task]] = lambda pending: {}
    after_round: Callable[[], None] = lambda: None
    clock: Callable[[], float] = time.monotonic

    def run(self, *, deadline: float | None, until_settled: bool = True) -> None:
        """Poll round after round until nothing is pending (if `until_settled`), `stop`, or
        `deadline` (a `clock()` value; None = no limit)."""
        while not self.stop():
            pending = self.pending()
            known = self.known(pending)
            if self.stop():
                return
            for task_id in pending:
                if self.stop():
                    return
                listed = known.get(task_id)
                answer: Task | RpcError
                if listed is not None and not is_terminal(listed.status):
                    answer = listed
                else:
                    try:
                        answer = self.fetch(task_id)
                    except RpcError as exc:
                        answer = exc
                self.observe(task_id, answer)
            self.after_round()
            if until_settled and not self.pending():
                return
            remaining = None if deadline is None else deadline - self.clock()
            if remaining is not None and remaining <= 0:
                return
            delay = self.delay()
            self.wait(delay if remaining is None else min(delay, remaining))

"""Read a finished task's outcome, waiting (bounded) for it to finish first: 2025-11-25's
`tasks/result` blocks until the task is terminal, so it is sent only once `tasks/get` shows
one; 2026-07-28 inlines the outcome in `tasks/get` (`McpClient.task_outcome` knows which)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from mcptask.client.session import McpClient
from mcptask.operations.polling import follow_task
from mcptask.protocol.tasks import INPUT_REQUIRED, Task, TaskOutcome, is_terminal

DEFAULT_WAIT_SECONDS = 30.0


@dataclass(frozen=True)
class ResultReport:
    """The task as last seen, and its outcome once it finished (None if it did not in time)."""

    task: Task
    outcome: TaskOutcome | None
    interrupted: bool = False

    @property
    def kind(self) -> str:
        """`completed`, `tool-error`, `failed`, `cancelled`, or `pending` (not finished)."""
        return self.outcome.kind if self.outcome is not None else "pending"


def fetch_result(
    client: McpClient,
    task_id: str,
    *,
    wait_timeout: float = DEFAULT_WAIT_SECONDS,
    sleep: Callable[[float], object] = time.sleep,
    stop: Callable[[], bool] = lambda: False,
) -> ResultReport:
    """`tasks/get` until the task is terminal (at most `wait_timeout` seconds), then its
    outcome; a task that waits for input is not waited for (only an answer moves it on).
    TaskNotFound propagates: there is no result of a task the server does not know."""
    first = client.get_task(task_id)
    deadline = time.monotonic() + wait_timeout
    latest = follow_task(client, first, _settled, deadline=deadline, wait=sleep, stop=stop)
    if not is_terminal(latest.status):
        return ResultReport(latest, None, interrupted=stop())
    return ResultReport(latest, client.task_outcome(latest))


def _settled(task: Task) -> bool:
    """Nothing more to wait for: the task ended, or it waits for an answer."""
    return is_terminal(task.status) or task.status == INPUT_REQUIRED

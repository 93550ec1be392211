"""Polling: the wait between polls, the one poll loop of cancel, result and watch, watch
rounds read from `tasks/list` pages where one page answers for fifty tasks, and `result`'s
wait."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from mcptask.client.session import McpClient
from mcptask.errors import ExitCode, ProtocolViolation, RpcError, UnsupportedError
from mcptask.protocol.tasks import INPUT_REQUIRED, Task, TaskOutcome, is_terminal

POLL_FLOOR_SECONDS = 0.1  # whatever the server asks: it protects the server from us
POLL_CAP_SECONDS = 5.0  # so that an outcome is seen promptly
DEFAULT_POLL_SECONDS = 0.5  # when the server gives no pollInterval


def poll_delay(tasks: Iterable[Task | None], override: float | None = None) -> float:
    """The wait before the next round: the override, else the shortest interval any task
    asked for, between the floor and the cap."""
    if override is None:
        asked = [task.poll_interval_seconds for task in tasks if task is not None]
        override = min([sec for sec in asked if sec is not None], default=DEFAULT_POLL_SECONDS)
    return min(POLL_CAP_SECONDS, max(POLL_FLOOR_SECONDS, override))


@dataclass
class PollLoop:
    """Poll `tasks/get` for a changing set of tasks until none is left, time runs out, or stop.
    Each round hands `observe` the answer (a task, or the server's `RpcError`) for every id
    `pending()` returns; a task `known` gives for the round (from the pages) is asked for only
    if it is terminal (the final state reported is `tasks/get`'s). `wait` may end early."""

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
        """`deadline`: a `clock()` value, or None (no limit)."""
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


def follow_task(
    client: McpClient,
    first: Task,
    settled: Callable[[Task], bool],
    *,
    deadline: float,
    wait: Callable[[float], object] = time.sleep,
    stop: Callable[[], bool] = lambda: False,
) -> Task:
    """Poll one task, from `first`, until `settled`, `deadline` (a `time.monotonic` value) or
    `stop`: the task as last seen. An error answer is raised."""
    seen = [first]

    def observe(_: str, answer: Task | RpcError) -> None:
        if isinstance(answer, RpcError):
            raise answer
        seen.append(answer)

    PollLoop(
        fetch=client.get_task,
        pending=lambda: [] if settled(seen[-1]) else [first.taskId],
        observe=observe,
        delay=lambda: poll_delay([seen[-1]]),
        wait=wait,
        stop=stop,
    ).run(deadline=deadline)
    return seen[-1]


class PagePolling:
    """Decides, round by round, whether the pages are worth reading (the pages plus a get per
    pending task they do not show, against a get per pending task, by the last listing's
    figures), and reads them."""

    def __init__(self, client: McpClient, *, stop: Callable[[], bool]) -> None:
        self._client = client
        self._stop = stop
        self.available = client.server.task_support.list  # False once a listing failed
        self._last: tuple[int, int, int] | None = None  # (pages, found, asked for)

    def noted(self, pages: int, found: int, asked: int) -> None:
        """A whole listing made elsewhere (the watch's re-list)."""
        self._last = (pages, found, asked)

    def worthwhile(self, pending: int) -> bool:
        if not self.available or pending == 0:
            return False
        if self._last is None:
            return True
        pages, found, asked = self._last
        return pages + (asked - found) < asked

    def round(
        self, pending: list[str], keep: Callable[[Task], bool] | None
    ) -> tuple[dict[str, Task], list[Task] | None]:
        """The pending tasks the pages show, and with `keep`, every listed task it keeps (the
        watch's re-list); nothing when not worth it, stopped, or failed (then never again)."""
        if not self.worthwhile(len(pending)):
            return {}, None
        wanted = set(pending)
        found: dict[str, Task] = {}
        listed: list[Task] = []
        pages = 0
        try:
            for page in self._client.iter_task_pages():
                pages += 1
                found.update((task.taskId, task) for task in page if task.taskId in wanted)
                if keep is not None:
                    listed.extend(filter(keep, page))
                if self._stop():
                    return {}, None
                if keep is None and (len(found) == len(wanted) or pages >= len(wanted)):
                    break  # all found, or reading on would cost more than the gets
        except (RpcError, UnsupportedError, ProtocolViolation):
            # A list that fails is no reason to fail a watch that tasks/get can carry on.
            self.available = False
            return {}, None
        self._last = (pages, len(found), len(wanted))
        return found, listed if keep is not None else None


DEFAULT_WAIT_SECONDS = 30.0


@dataclass(frozen=True)
class ResultReport:
    """The task as last seen, and its outcome once it finished."""

    task: Task
    outcome: TaskOutcome | None
    interrupted: bool = False

    @property
    def kind(self) -> str:
        """`TaskOutcome.kind`, or `pending` (not finished)."""
        return self.outcome.kind if self.outcome is not None else "pending"

    @property
    def exit_code(self) -> ExitCode:
        return ExitCode.INTERRUPTED if self.interrupted else RESULT_CODES[self.kind]


RESULT_CODES: dict[str, ExitCode] = {
    "completed": ExitCode.OK,
    "tool-error": ExitCode.RESULT_IS_ERROR,
    "failed": ExitCode.RESULT_FAILED,
    "cancelled": ExitCode.RESULT_CANCELLED,
    "pending": ExitCode.PENDING,
}
"""`result`: the exit code of each kind of outcome."""


def fetch_result(
    client: McpClient,
    task_id: str,
    *,
    wait_timeout: float = DEFAULT_WAIT_SECONDS,
    sleep: Callable[[float], object] = time.sleep,
    stop: Callable[[], bool] = lambda: False,
) -> ResultReport:
    """Poll until the task is terminal (at most `wait_timeout` seconds), then its outcome; a
    task that waits for input is not waited for. TaskNotFound propagates."""
    first = client.get_task(task_id)
    latest = follow_task(
        client,
        first,
        lambda task: is_terminal(task.status) or task.status == INPUT_REQUIRED,
        deadline=time.monotonic() + wait_timeout,
        wait=sleep,
        stop=stop,
    )
    if not is_terminal(latest.status):
        return ResultReport(latest, None, interrupted=stop())
    return ResultReport(latest, client.task_outcome(latest))

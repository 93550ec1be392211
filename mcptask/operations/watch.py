"""Follow tasks until they settle: poll (by pages where cheaper), take status pushes, report
every change to callbacks and the end in a report."""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime

from mcptask.client.session import McpClient
from mcptask.errors import ExitCode, RpcError, TaskNotFound
from mcptask.operations.polling import PagePolling, PollLoop, poll_delay
from mcptask.protocol.jsonrpc import JsonObject
from mcptask.protocol.tasks import ACTIVE_STATUSES, COMPLETED, Task, is_terminal

GONE = "gone"  # the pseudo-status of a task the server no longer knows

STATUS_NOTIFICATIONS = ("notifications/tasks/status", "notifications/tasks")
RELIST_SECONDS = 5.0


@dataclass
class WatchedTask:
    task_id: str
    task: Task | None = None
    gone: bool = False
    changed_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    error: str | None = None

    @property
    def status(self) -> str | None:
        return GONE if self.gone else (self.task.status if self.task else None)

    @property
    def settled(self) -> bool:
        return self.gone or (self.task is not None and is_terminal(self.task.status))


@dataclass(frozen=True)
class Change:
    """A task's status or message changed; `previous` is None on first sight."""

    at: datetime
    task_id: str
    previous: str | None
    status: str
    message: str | None

    def to_json(self) -> JsonObject:
        return {
            "time": self.at.isoformat().replace("+00:00", "Z"),
            "taskId": self.task_id,
            "previous": self.previous,
            "status": self.status,
            "statusMessage": self.message,
        }


@dataclass
class WatchOptions:
    task_ids: list[str]
    statuses: tuple[str, ...] | None = None
    interval: float | None = None
    forever: bool = False
    timeout: float | None = None
    exit_status: bool = False  # a task that ends other than `completed` fails the run


@dataclass(frozen=True)
class WatchReport:
    tasks: list[WatchedTask]
    interrupted: bool
    timed_out: bool
    exit_status: bool

    @property
    def all_completed(self) -> bool:
        return all(watched.status == COMPLETED for watched in self.tasks)

    @property
    def exit_code(self) -> ExitCode:
        """Interrupted (130); nothing to watch (0); timed out unsettled, or with --exit-status
        a task that did not complete (7)."""
        if self.interrupted:
            return ExitCode.INTERRUPTED
        unsettled = self.timed_out or (self.exit_status and not self.all_completed)
        return ExitCode.PENDING if self.tasks and unsettled else ExitCode.OK


class Watch:
    """The watch loop. With no task ids, it watches what `tasks/list` shows (active tasks by
    default), re-listed now and then to pick up new ones."""

    def __init__(
        self,
        client: McpClient,
        options: WatchOptions,
        *,
        stop: threading.Event,
        on_change: Callable[[Change], None] = lambda change: None,
        on_round: Callable[[], None] = lambda: None,
        on_problem: Callable[[str, str], None] = lambda task_id, message: None,
    ) -> None:
        self.client = client
        self.options = options
        self.tasks: dict[str, WatchedTask] = {
            task_id: WatchedTask(task_id) for task_id in options.task_ids
        }
        self.pushes_seen = 0
        self._stop = stop
        self._wake = threading.Event()
        self._pushed: deque[Task] = deque()
        self._on_change = on_change
        self._on_round = on_round
        self._on_problem = on_problem
        self._last_list = 0.0
        self._pages = PagePolling(client, stop=stop.is_set)
        self._round_listing: list[Task] | None = None  # this round's pages, as a re-list

    def poll_interval(self) -> float:
        return poll_delay(
            (watched.task for watched in self.tasks.values() if not watched.settled),
            self.options.interval,
        )

    def run(self) -> WatchReport:
        """Watch until every task settles (unless forever), the timeout, or a stop."""
        pushes_end = threading.Event()
        listener = threading.Thread(
            target=self.client.follow_status_pushes,
            args=(list(self.options.task_ids), pushes_end),
            daemon=True,
        )
        listener.start()
        clock = time.monotonic
        try:
            if not self.options.task_ids:
                self.client.require("list")
                self._relist()
            self.client.transport.set_notification_handler(self._on_notification)
            deadline = None if self.options.timeout is None else clock() + self.options.timeout
            PollLoop(
                fetch=self.client.get_task,
                pending=self._pending,
                observe=self._observe,
                delay=self.poll_interval,
                wait=self._wait,
                stop=self._stop.is_set,
                known=self._listed,
                after_round=self._between_rounds,
                clock=clock,
            ).run(deadline=deadline, until_settled=not self.options.forever)
            timed_out = deadline is not None and clock() >= deadline and bool(self._pending())
        finally:
            self.client.transport.set_notification_handler(None)
            pushes_end.set()
            listener.join(timeout=0.5)
        return WatchReport(
            tasks=list(self.tasks.values()),
            interrupted=self._stop.is_set(),
            timed_out=timed_out,
            exit_status=self.options.exit_status,
        )

    def _listed(self, pending: list[str]) -> dict[str, Task]:
        """The pending tasks this round's pages show, where reading them is cheaper (and what a
        re-list due would look at)."""
        keep = self._keeps_listed if self._relist_due() else None
        found, self._round_listing = self._pages.round(pending, keep)
        return found

    def saw(self, task: Task) -> None:
        """A watched task as read elsewhere, taken as a poll's answer."""
        watched = self.tasks.get(task.taskId)
        if watched is not None:
            watched.error = None
            self._record(watched, task)

    def wake(self) -> None:
        """Cut the current wait short (a push arrived, or the user asked to stop)."""
        self._wake.set()

    def _pending(self) -> list[str]:
        return [task_id for task_id, watched in self.tasks.items() if not watched.settled]

    def _observe(self, task_id: str, answer: Task | RpcError) -> None:
        watched = self.tasks[task_id]
        if isinstance(answer, TaskNotFound):
            self._record(watched, None, gone=True)
            return
        if isinstance(answer, RpcError):
            if watched.error != answer.server_message:
                watched.error = answer.server_message
                self._on_problem(task_id, answer.server_message)
            return
        watched.error = None
        self._record(watched, answer)

    def _between_rounds(self) -> None:
        while self._pushed:
            pushed = self._pushed.popleft()
            if pushed.taskId in self.tasks:
                self._record(self.tasks[pushed.taskId], pushed)
        if self._relist_due():
            if self._round_listing is not None:
                self._last_list = time.monotonic()
                self._adopt(self._round_listing)  # the round's pages were every page
            else:
                self._relist()
        self._round_listing = None
        self._on_round()

    def _wait(self, seconds: float) -> None:
        self._wake.wait(seconds)
        self._wake.clear()

    def _relist_due(self) -> bool:
        return not self.options.task_ids and time.monotonic() - self._last_list >= RELIST_SECONDS

    def _relist(self) -> None:
        self._last_list = time.monotonic()
        pages = 0
        on_pages: set[str] = set()  # watched ones only: bounded by what the watch holds
        for page in self.client.iter_task_pages():
            pages += 1
            self._adopt(page)
            on_pages.update(task.taskId for task in page if task.taskId in self.tasks)
        pending = self._pending()
        self._pages.noted(pages, sum(1 for task_id in pending if task_id in on_pages), len(pending))

    def _keeps_listed(self, task: Task) -> bool:
        """A watched task, or one to adopt."""
        return task.taskId in self.tasks or task.status in (
            self.options.statuses or ACTIVE_STATUSES
        )

    def _adopt(self, listed: list[Task]) -> None:
        """Record the listed tasks watched, and watch the new ones it keeps."""
        for task in filter(self._keeps_listed, listed):
            if task.taskId not in self.tasks:
                self.tasks[task.taskId] = WatchedTask(task.taskId)
            self._record(self.tasks[task.taskId], task)

    def _record(self, watched: WatchedTask, task: Task | None, *, gone: bool = False) -> None:
        previous = watched.status
        previous_message = watched.task.statusMessage if watched.task else None
        if watched.settled:
            return  # terminal means final: a late push cannot move it back
        if task is not None:
            watched.task = task
        watched.gone = gone
        message = task.statusMessage if task is not None else None
        if watched.status != previous or (task is not None and message != previous_message):
            watched.changed_at = datetime.now(UTC)
            self._on_change(
                Change(
                    watched.changed_at, watched.task_id, previous, watched.status or GONE, message
                )
            )

    def _on_notification(self, message: JsonObject) -> None:
        """Transport thread: queue a pushed task status and wake the loop."""
        if message.get("method") not in STATUS_NOTIFICATIONS:
            return
        params = message.get("params")
        if isinstance(params, dict) and isinstance(params.get("task"), dict):
            params = params["task"]
        task = Task.read(params)
        if task is None:
            return  # a malformed push is ignored: polling stays the baseline
        self.pushes_seen += 1
        self._pushed.append(task)  # deque: appends and pops are thread-safe
        self._wake.set()

"""Read tasks from a server: all pages, filtered, newest first or in the server's order; or
the tasks this machine recorded for it, refreshed one by one (`--known`: the client tells the
record about each answer, which prunes the tasks the server no longer knows)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from mcptask.client.session import McpClient
from mcptask.errors import RpcError, TaskNotFound
from mcptask.protocol.tasks import ACTIVE_STATUSES, Task

ORDERS = ("newest", "server")

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_OLDEST = (datetime.min.replace(tzinfo=UTC) - _EPOCH) // _MICROSECOND


def newest_first_key(task: Task) -> int:
    """`createdAt` in microseconds since the epoch, exact (unreadable: the oldest there can
    be)."""
    created = task.created
    return _OLDEST if created is None else (created - _EPOCH) // _MICROSECOND


def collect_tasks(client: McpClient, *, statuses: tuple[str, ...] | None = None) -> list[Task]:
    """Every task the server lists (every page) in `statuses`, newest first."""
    tasks = [task for page in task_pages(client, statuses=statuses) for task in page]
    return sorted(tasks, key=newest_first_key, reverse=True)  # stable: ties keep server order


def task_pages(
    client: McpClient, *, statuses: tuple[str, ...] | None = None, limit: int | None = None
) -> Iterator[list[Task]]:
    """The server's pages as they come, keeping `statuses`; with `limit`, no page is asked
    for once that many tasks were given."""
    left = limit
    for page in client.iter_task_pages():
        kept = page if statuses is None else [task for task in page if task.status in statuses]
        if left is not None:
            kept = kept[:left]
            left -= len(kept)
        yield kept
        if left == 0:
            return


@dataclass(frozen=True)
class Refreshed:
    """The recorded tasks as the server shows them now: those it knows, newest first; the ids
    it no longer knows; and those whose `tasks/get` failed otherwise, with its message."""

    tasks: list[Task]
    gone: list[str] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)

    def select(self, statuses: tuple[str, ...] | None) -> list[Task]:
        """Default: the active ones."""
        wanted = statuses or ACTIVE_STATUSES
        return [task for task in self.tasks if task.status in wanted]


def refresh_known(client: McpClient, task_ids: Iterable[str]) -> Refreshed:
    client.require("get")
    tasks: list[Task] = []
    gone: list[str] = []
    errors: dict[str, str] = {}
    for task_id in dict.fromkeys(task_ids):
        try:
            tasks.append(client.get_task(task_id))
        except TaskNotFound:
            gone.append(task_id)
        except RpcError as exc:
            errors[task_id] = exc.server_message
    tasks.sort(key=newest_first_key, reverse=True)
    return Refreshed(tasks, gone, errors)

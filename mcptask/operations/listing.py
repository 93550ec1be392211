"""Read tasks from a server: all pages, filtered, newest first or in the server's order."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

from mcptask.client.session import McpClient
from mcptask.protocol.tasks import Task

ORDERS = ("newest", "server")

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_OLDEST = (datetime.min.replace(tzinfo=UTC) - _EPOCH) // _MICROSECOND


def newest_first_key(task: Task) -> int:
    """What newest first sorts on (largest first): `createdAt` as microseconds since the
    epoch, exact; a task without a readable one counts as the oldest there can be."""
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
    for once that many tasks were given (the last page given is cut to fit)."""
    left = limit
    for page in client.iter_task_pages():
        kept = page if statuses is None else [task for task in page if task.status in statuses]
        if left is not None:
            kept = kept[:left]
            left -= len(kept)
        yield kept
        if left == 0:
            return

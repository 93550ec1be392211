"""Read tasks from a server: all pages, filtered, newest first."""

from __future__ import annotations

from datetime import UTC, datetime

from mcptask.client.session import McpClient
from mcptask.protocol import Task

_OLDEST = datetime.min.replace(tzinfo=UTC)


def collect_tasks(
    client: McpClient, *, statuses: tuple[str, ...] | None = None, limit: int | None = None
) -> list[Task]:
    """Every task the server lists (every page), keeping `statuses`, newest first, at most `limit`.

    Sorting needs every page, so the whole list is read even with a limit.
    """
    tasks = [task for task in client.iter_tasks() if statuses is None or task.status in statuses]
    tasks.sort(key=lambda task: task.created or _OLDEST, reverse=True)
    return tasks[:limit] if limit is not None else tasks

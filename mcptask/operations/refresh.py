"""Refresh the tasks this machine recorded for a server, so that `--known` acts on the
server's word, not on a stale record (the client tells the record about each answer, so this
also prunes the tasks the server no longer knows)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from mcptask.client.session import McpClient
from mcptask.errors import RpcError, TaskNotFound
from mcptask.operations.listing import newest_first_key
from mcptask.protocol.tasks import ACTIVE_STATUSES, Task


@dataclass(frozen=True)
class Refreshed:
    """The recorded tasks as the server shows them now."""

    tasks: list[Task]
    """Every recorded task the server still knows, newest first."""
    gone: list[str] = field(default_factory=list)
    """Recorded ids the server no longer knows (expired, purged, or their session ended)."""
    errors: dict[str, str] = field(default_factory=dict)
    """Recorded ids whose `tasks/get` failed otherwise: the server's message (kept recorded)."""

    def select(self, statuses: tuple[str, ...] | None) -> list[Task]:
        """The refreshed tasks in `statuses` (default: the active ones)."""
        wanted = statuses or ACTIVE_STATUSES
        return [task for task in self.tasks if task.status in wanted]


def refresh_known(
    client: McpClient, task_ids: Iterable[str], *, stop: Callable[[], bool] = lambda: False
) -> Refreshed:
    """`tasks/get` for each recorded id, one request at a time (until `stop`)."""
    client.require("get")
    tasks: list[Task] = []
    gone: list[str] = []
    errors: dict[str, str] = {}
    for task_id in dict.fromkeys(task_ids):
        if stop():
            break
        try:
            tasks.append(client.get_task(task_id))
        except TaskNotFound:
            gone.append(task_id)
        except RpcError as exc:
            errors[task_id] = exc.server_message
    tasks.sort(key=newest_first_key, reverse=True)
    return Refreshed(tasks, gone, errors)

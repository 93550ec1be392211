"""The part of a watch round read from `tasks/list` pages instead of one `tasks/get` per task.

A server that lists answers for fifty tasks in one page what fifty `tasks/get` would: where
the pages hold the watched tasks, reading them is the cheaper round. Only what the pages
cannot tell is still asked with `tasks/get`, by the watch itself: a watched task not on
them (it may be gone: `tasks/get` says so before the watch does), and a task the pages show
finished (its final state, as the watch reports it, is the one `tasks/get` gives).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mcptask.client.session import McpClient
from mcptask.errors import ProtocolViolation, RpcError, UnsupportedError
from mcptask.protocol.tasks import Task


@dataclass(frozen=True)
class PageRound:
    """What one round read from the pages."""

    found: dict[str, Task]
    """The pending tasks the pages showed, by id."""
    listed: list[Task] | None
    """When the round was asked to keep them and read every page: the listed tasks `keep`
    chose, in the server's order (the watch's periodic re-list, from the same pages)."""


class PagePolling:
    """Decides, round by round, whether the pages are worth reading, and reads them.

    The measure is requests: a round by pages costs its pages plus a `tasks/get` for each
    pending task they did not show, a round by gets one `tasks/get` per pending task. The
    last listing's figures decide the next round; before any, the pages are tried, and a
    listing stops once it has cost as many requests as the gets would have.
    """

    def __init__(self, client: McpClient, *, stop: Callable[[], bool]) -> None:
        self._client = client
        self._stop = stop
        self.available = client.server.task_support.list
        """The server lists (2025-11-25 with `tasks.list`); False also after a listing failed."""
        self._last: tuple[int, int, int] | None = None
        """The last listing: (pages read, pending tasks found, pending tasks asked for)."""

    def noted(self, pages: int, found: int, asked: int) -> None:
        """A whole listing made elsewhere (the watch's re-list): its figures decide too."""
        self._last = (pages, found, asked)

    def worthwhile(self, pending: int) -> bool:
        """True when reading the pages should cost fewer requests than `pending` gets."""
        if not self.available or pending == 0:
            return False
        if self._last is None:
            return True
        pages, found, asked = self._last
        return pages + (asked - found) < asked

    def round(self, pending: list[str], keep: Callable[[Task], bool] | None) -> PageRound | None:
        """Read the pages for `pending`, or None when this round should ask `tasks/get` for
        each (pages not worth it, stopped, or the list failed: then never again). With
        `keep`, every page is read and the tasks it chooses are kept (`listed`)."""
        if not self.worthwhile(len(pending)):
            return None
        wanted = set(pending)
        found: dict[str, Task] = {}
        listed: list[Task] | None = [] if keep is not None else None
        pages = 0
        try:
            for page in self._client.iter_task_pages():
                pages += 1
                for task in page:
                    if task.taskId in wanted:
                        found[task.taskId] = task
                    if keep is not None and listed is not None and keep(task):
                        listed.append(task)
                if self._stop():
                    return None
                if keep is None and (len(found) == len(wanted) or pages >= len(wanted)):
                    break  # all found, or reading on would cost more than the gets
        except (RpcError, UnsupportedError, ProtocolViolation):
            # A list that fails is no reason to fail a watch that tasks/get can carry on.
            self.available = False
            return None
        self._last = (pages, len(found), len(wanted))
        return PageRound(found, listed)

"""What the client tells about the tasks it meets, for a record kept elsewhere (`mcptask.store`).

The client is the one place every task passes through (started, listed, fetched, cancelled,
watched), so it reports each sighting here; the command line injects the record. Nothing in
this package knows how, or whether, anything is stored.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from mcptask.protocol.tasks import Task


class TaskObserver(Protocol):
    """Hears every task the client meets, and every task found to be gone."""

    def seen(self, task: Task, *, via: str, session_id: str | None, tool: str | None) -> None:
        """`task` as the server just described it, in answer to the method `via`.

        `session_id`: the session that owns the task and outlives this process (one that was
        joined, or kept by `start`); None when there is none to rejoin, which keeps whatever
        was known before. `tool`: the tool whose call created it (`tools/call` only).
        """
        ...

    def seen_page(
        self, page: Sequence[tuple[Task, str | None]], *, via: str, first: bool, last: bool
    ) -> None:
        """A page of tasks, each with its `session_id` as for `seen` (a `tasks/list` page:
        one call for hundreds of tasks). `first`: the listing's first page (asked without a
        cursor); `last`: its last (no next cursor), so the listing is complete. A listing
        whose last page never comes stopped early (a limit, an interruption, an error)."""
        ...

    def gone(self, task_id: str) -> None:
        """The server no longer knows the task (unknown, expired, or its session ended)."""
        ...

    def detached(self, task_id: str) -> None:
        """The task's recorded session has ended, yet the task is visible without it."""
        ...


class NoObserver:
    """Hears nothing: for clients without a record (tests, benches)."""

    def seen(self, task: Task, *, via: str, session_id: str | None, tool: str | None) -> None:
        """Nothing to do."""

    def seen_page(
        self, page: Sequence[tuple[Task, str | None]], *, via: str, first: bool, last: bool
    ) -> None:
        """Nothing to do."""

    def gone(self, task_id: str) -> None:
        """Nothing to do."""

    def detached(self, task_id: str) -> None:
        """Nothing to do."""

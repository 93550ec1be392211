"""What a cancel run acts on: the ids the user named, and the tasks a selector chose (from
`tasks/list`, or from the record of known tasks)."""

from __future__ import annotations

from dataclasses import dataclass, field

from mcptask.client.session import McpClient
from mcptask.errors import NoTaskList, UnsupportedError
from mcptask.operations.listing import collect_tasks
from mcptask.operations.outcomes import Target, unique_targets
from mcptask.operations.refresh import refresh_known
from mcptask.protocol.tasks import ACTIVE_STATUSES, Task


@dataclass(frozen=True)
class Selection:
    """What a cancel run will act on: the ids the user named and the tasks a selector listed."""

    named_ids: list[str]
    listed: list[Task]
    targets: list[Target]
    gone: list[str] = field(default_factory=list)
    """With `known`: recorded ids the server no longer knows (forgotten, not targeted)."""
    unrefreshed: dict[str, str] = field(default_factory=dict)
    """With `known`: recorded ids whose tasks/get failed otherwise (not targeted)."""

    @property
    def bulk(self) -> bool:
        """True when a selector chose more than one task (a person is asked first)."""
        return len(self.listed) > 1


def select_targets(
    client: McpClient,
    named_ids: list[str],
    *,
    all_working: bool,
    statuses: tuple[str, ...] | None,
    known: list[str] | None = None,
) -> Selection:
    """The gate for cancelling, then the targets: named ids first, then (with `all_working`)
    every listed task in `statuses` (default: the active ones), each id once.

    With `known` (the ids this machine recorded for the server), `all_working` selects from
    those, each refreshed with `tasks/get`, instead of from `tasks/list`.
    """
    client.require("cancel")
    listed: list[Task] = []
    gone: list[str] = []
    unrefreshed: dict[str, str] = {}
    if all_working and known is not None:
        refreshed = refresh_known(client, known)
        listed, gone, unrefreshed = refreshed.select(statuses), refreshed.gone, refreshed.errors
    elif all_working:
        try:
            client.require("list")
        except UnsupportedError as exc:
            raise NoTaskList(
                f"--all-working needs tasks/list: {exc.message}; give task ids instead (as "
                "arguments, with --from-file FILE, or '-' to read them from stdin)"
            ) from None
        listed = collect_tasks(client, statuses=statuses or ACTIVE_STATUSES)
    targets = unique_targets(named_ids, (task.taskId for task in listed))
    return Selection(named_ids, listed, targets, gone=gone, unrefreshed=unrefreshed)

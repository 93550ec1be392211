"""What a cancel run acts on (named ids, and the tasks a selector chose from `tasks/list` or
the record of known tasks) and what became of each task."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum

from mcptask.client.session import McpClient
from mcptask.errors import ExitCode, McptaskError, NoTaskList, UnsupportedError
from mcptask.operations.listing import collect_tasks, refresh_known
from mcptask.protocol.jsonrpc import JsonObject
from mcptask.protocol.tasks import ACTIVE_STATUSES, Task


class Outcome(StrEnum):
    """What happened to one task (docs/cancelling.md documents these names; they do not change)."""

    CANCELLED = "cancelled"
    ALREADY_FINISHED = "already-finished"
    NOT_FOUND = "not-found"
    PENDING = "pending"
    REQUESTED = "requested"
    UNKNOWN = "unknown"
    ERROR = "error"
    SKIPPED = "skipped"


@dataclass(frozen=True)
class Target:
    """A task to cancel; `named` when the user gave its id (then not-found is a failure)."""

    task_id: str
    named: bool


@dataclass(frozen=True)
class CancelResult:
    task_id: str
    outcome: Outcome
    status: str | None
    message: str | None
    named: bool

    @property
    def failed(self) -> bool:
        """This task makes the run fail (exit 6)."""
        if self.outcome is Outcome.NOT_FOUND:
            return self.named
        return self.outcome in (Outcome.ERROR, Outcome.UNKNOWN)

    def to_json(self) -> JsonObject:
        return {
            "taskId": self.task_id,
            "outcome": self.outcome.value,
            "status": self.status,
            "message": self.message,
        }


@dataclass
class CancelReport:
    """Every target's result, in the targets' order."""

    results: list[CancelResult]
    interrupted: bool = False
    fatal: McptaskError | None = None

    def counts(self) -> dict[str, int]:
        """Every outcome, zeros included."""
        counts = Counter(result.outcome for result in self.results)
        return {outcome.value: counts[outcome] for outcome in Outcome}

    @property
    def failed(self) -> bool:
        return any(result.failed for result in self.results)

    @property
    def pending(self) -> bool:
        """Some task was not terminal when the wait ran out."""
        return any(result.outcome is Outcome.PENDING for result in self.results)

    @property
    def exit_code(self) -> ExitCode:
        """Interrupted (130) > the error that stopped the run (its own code) > a task that
        failed (6) > a task still pending (7) > success (0)."""
        if self.interrupted:
            return ExitCode.INTERRUPTED
        if self.fatal is not None:
            return self.fatal.exit_code
        if self.failed:
            return ExitCode.TASK_FAILED
        return ExitCode.PENDING if self.pending else ExitCode.OK


@dataclass(frozen=True)
class Selection:
    named_ids: list[str]
    listed: list[Task]
    # With `known`: recorded ids the server no longer knows, or whose tasks/get failed
    # otherwise (neither targeted).
    gone: list[str] = field(default_factory=list)
    unrefreshed: dict[str, str] = field(default_factory=dict)

    @property
    def targets(self) -> list[Target]:
        """Named ids first, then listed ones, each id once (a named id stays named)."""
        named = dict.fromkeys(self.named_ids)
        listed = dict.fromkeys(task.taskId for task in self.listed if task.taskId not in named)
        targets = [Target(task_id, named=True) for task_id in named]
        return targets + [Target(task_id, named=False) for task_id in listed]

    @property
    def bulk(self) -> bool:
        """A selector chose more than one task (a person is asked first)."""
        return len(self.listed) > 1

    @property
    def unlisted(self) -> list[str]:
        listed = {task.taskId for task in self.listed}
        return [task_id for task_id in self.named_ids if task_id not in listed]


def select_targets(
    client: McpClient,
    named_ids: list[str],
    *,
    all_working: bool,
    statuses: tuple[str, ...] | None,
    known: list[str] | None = None,
) -> Selection:
    """After the gate: named ids first, then (with `all_working`) every task in `statuses`
    (default: the active ones) from `tasks/list`, or from `known`."""
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
        except UnsupportedError as exc:  # its message says how to give ids instead
            raise NoTaskList(f"--all-working needs tasks/list: {exc.message}") from None
        listed = collect_tasks(client, statuses=statuses or ACTIVE_STATUSES)
    return Selection(named_ids, listed, gone=gone, unrefreshed=unrefreshed)

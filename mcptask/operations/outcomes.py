"""The outcomes of a cancel run: one per task, and the report that holds them all.

The names are documented in the README and do not change.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum

from mcptask.errors import McptaskError
from mcptask.protocol.jsonrpc import JsonObject


class Outcome(StrEnum):
    """What happened to one task (the README documents these names; they do not change)."""

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
    """The final word on one task."""

    task_id: str
    outcome: Outcome
    status: str | None
    message: str | None
    named: bool

    @property
    def failed(self) -> bool:
        """True when this task makes the run fail (exit 6)."""
        if self.outcome is Outcome.NOT_FOUND:
            return self.named
        return self.outcome in (Outcome.ERROR, Outcome.UNKNOWN)

    def to_json(self) -> JsonObject:
        """The stable JSON shape of one result."""
        return {
            "taskId": self.task_id,
            "outcome": self.outcome.value,
            "status": self.status,
            "message": self.message,
        }


@dataclass
class CancelReport:
    """Every target's result, in the order the targets were given."""

    results: list[CancelResult]
    interrupted: bool = False
    fatal: McptaskError | None = None

    def counts(self) -> dict[str, int]:
        """How many tasks ended with each outcome (every outcome listed, zeros included)."""
        counts = {outcome.value: 0 for outcome in Outcome}
        for result in self.results:
            counts[result.outcome.value] += 1
        return counts

    @property
    def failed(self) -> bool:
        """True when some task makes the run fail."""
        return any(result.failed for result in self.results)

    @property
    def pending(self) -> bool:
        """True when some task was still not terminal when the wait ran out."""
        return any(result.outcome is Outcome.PENDING for result in self.results)


def unique_targets(named_ids: Iterable[str], selected_ids: Iterable[str]) -> list[Target]:
    """Named ids first, then selected ones, each id once (a named id stays named)."""
    targets: dict[str, Target] = {}
    for task_id in named_ids:
        targets.setdefault(task_id, Target(task_id, named=True))
    for task_id in selected_ids:
        targets.setdefault(task_id, Target(task_id, named=False))
    return list(targets.values())

"""What the record's unit tests share: two servers, a clock the test moves, and writing
sightings the way another command would."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcptask.protocol.tasks import Task
from mcptask.store.database import FILE_NAME, UNEXPIRED
from mcptask.store.identity import ServerIdentity
from mcptask.store.known_tasks import KnownTasks

SERVER = ServerIdentity.for_url("http://127.0.0.1:8765/mcp")
OTHER = ServerIdentity.for_url("http://127.0.0.1:9999/mcp")


class Clock:
    """A clock that stands still until the test sets `now`."""

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def open_record(
    directory: Path,
    now: Clock | None = None,
    identity: ServerIdentity | None = SERVER,
    **options: Any,
) -> KnownTasks:
    """The record of `identity` (None: every server's) in `directory`, on the clock `now`
    (`options`: KnownTasks's, `clock` the monotonic one that times flushes)."""
    return KnownTasks(directory / FILE_NAME, identity, now=now or Clock(), **options)


@dataclass(frozen=True)
class KnownTask:
    """One recorded task, as mcptask last saw it."""

    task_id: str
    status: str
    session_id: str | None
    ttl_ms: int | None
    expires_at: float | None
    first_seen: float
    last_seen: float
    via: str
    """The method that first brought it (tasks/list only while nothing else has met it)."""
    tool: str | None


def recorded_tasks(record: KnownTasks) -> list[KnownTask]:
    """Every task `record` holds, in the order of its `ids` (read as `ids` reads)."""
    where, params = record._where()
    columns = "task_id, status, session_id, ttl_ms, expires_at, first_seen, last_seen, via, tool"
    rows = record._read(
        f"SELECT {columns} FROM tasks WHERE {where} AND {UNEXPIRED}"  # noqa: S608
        " ORDER BY first_seen DESC, task_id",
        (*params, record._now()),
    )
    return [KnownTask(*row) for row in rows]


def prune(record: KnownTasks) -> int:
    """Prune the record now, due or not; returns how many tasks went."""
    with record._writing() as db:
        return record._prune(db)


def task(task_id: str, status: str = "working", ttl: int | None = None) -> Task:
    return Task(taskId=task_id, status=status, ttl=ttl)


def write(
    record: KnownTasks,
    *tasks: Task,
    via: str = "tasks/get",
    session_id: str | None = None,
    tool: str | None = None,
) -> None:
    """Record these sightings now, in one transaction, as a command that had not met them
    before would (this process's memory of what it wrote is not consulted)."""
    record._written.clear()
    for seen in tasks:
        record.seen(seen, via=via, session_id=session_id, tool=tool)
    record.flush()


def statuses(record: KnownTasks) -> dict[str, str]:
    return {known.task_id: known.status for known in recorded_tasks(record)}

"""Fill a fresh task store from --seed, --tasks-file and --complete-on-cancel."""

from __future__ import annotations

from datetime import timedelta

from mcptask.reference_server.config import ServerConfig
from mcptask.reference_server.records import TaskNotFoundError
from mcptask.reference_server.scripting import OnCancel
from mcptask.reference_server.store import TaskStore

# Seeded tasks pretend to have been created one minute apart, the newest a minute ago.
SEED_SPACING = timedelta(minutes=1)
SEED_UPDATE_AFTER = timedelta(seconds=30)

_SEED_MESSAGES = {
    "working": "Processing step {n}",
    "input_required": "Waiting for input (question {n})",
    "completed": "Finished",
    "failed": "Failed: simulated error {n}",
    "cancelled": "Cancelled by client",
}


def seed_task_id(status: str, number: int) -> str:
    """The deterministic id of the `number`-th seeded task of `status` (1-based)."""
    return f"{status}-{number:03d}"


def populate(store: TaskStore, config: ServerConfig) -> None:
    """Create the seeded and scripted tasks; raise ValueError for conflicting ids.

    Seeded timestamps count back from the store's clock, so a manual clock makes them
    deterministic.
    """
    total = sum(count for _, count in config.seed)
    start = store.clock.now()
    index = 0
    complete = OnCancel(kind="complete")
    for status, count in config.seed:
        for number in range(1, count + 1):
            index += 1
            created = start - SEED_SPACING * (total - index + 1)
            task_id = seed_task_id(status, number)
            store.create(
                task_id=task_id,
                status=status,
                status_message=_SEED_MESSAGES[status].format(n=number),
                ttl_ms=config.ttl_ms,
                created_at=created,
                last_updated_at=created + SEED_UPDATE_AFTER,
            )
    for scripted in config.scripted_tasks:
        store.create(
            task_id=scripted.task_id,
            status=scripted.status,
            status_message=scripted.status_message,
            ttl_ms=scripted.ttl_ms if scripted.has_ttl else config.ttl_ms,
            steps=scripted.steps,
            on_cancel=scripted.on_cancel,
            await_input=scripted.await_input,
        )
    for task_id in sorted(config.complete_on_cancel):
        try:
            store.set_on_cancel(task_id, complete)
        except TaskNotFoundError:
            raise ValueError(
                f"--complete-on-cancel: no seeded or scripted task {task_id!r}"
            ) from None

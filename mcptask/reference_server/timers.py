"""The store's timed changes: which task falls due next (script step, delayed cancel, ttl).

A heap of (deadline, creation number, task id). A task is queued under its earliest
deadline only; an entry stays current while it matches the task's `timer_at`, so a task
rescheduled earlier, or removed, leaves a stale entry behind that is skipped when it comes
up, and nothing ever has to search the heap. Finding what is due costs what is due, not
what the store holds.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterator, Mapping

from mcptask.reference_server.records import TaskRecord


class DeadlineQueue:
    """The records with something pending, by their next deadline (lock held by caller)."""

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, str]] = []

    def schedule(self, record: TaskRecord) -> None:
        """Queue the record under its next deadline unless an earlier entry will wake it."""
        deadline = record.next_deadline
        if deadline is None or (record.timer_at is not None and record.timer_at <= deadline):
            return
        record.timer_at = deadline
        heapq.heappush(self._heap, (deadline, record.key[1], record.task_id))

    def due(self, now: float, records: Mapping[str, TaskRecord]) -> Iterator[TaskRecord]:
        """Take out every record due by `now`, earliest first; the caller applies what is
        due and schedules the record again. `records` tells current tasks by id."""
        while self._heap and self._heap[0][0] <= now:
            record = self._current(heapq.heappop(self._heap), records)
            if record is not None:
                record.timer_at = None
                yield record

    def next_deadline(self, records: Mapping[str, TaskRecord]) -> float | None:
        """The earliest current deadline, or None when nothing is pending."""
        while self._heap and self._current(self._heap[0], records) is None:
            heapq.heappop(self._heap)
        return self._heap[0][0] if self._heap else None

    @staticmethod
    def _current(
        entry: tuple[float, int, str], records: Mapping[str, TaskRecord]
    ) -> TaskRecord | None:
        deadline, seq, task_id = entry
        record = records.get(task_id)
        if record is None or record.key[1] != seq or record.timer_at != deadline:
            return None  # the task is gone, or was queued again under an earlier deadline
        return record

"""The store's indexes: its tasks in creation order (what tasks/list pages over), and its
timed changes by deadline (script steps, delayed cancels, ttl).

CreationOrder: a page costs what its own tasks cost, not what the store holds: each owner's
keys (None for the shared tasks) are kept sorted (tasks are created newest-last, so adding
one is an append), a page starts with a bisection after its cursor and merges the lists the
viewer may see. Removing a task leaves its key behind as a dead entry that pages skip; a
list that is mostly dead is compacted, so the cost of removing is constant on average.

DeadlineQueue: a heap of (deadline, creation number, task id). A task is queued under its
earliest deadline only; an entry stays current while it matches the task's `timer_at`, so a
task rescheduled earlier, or removed, leaves a stale entry behind that is skipped when it
comes up, and nothing ever has to search the heap. Finding what is due costs what is due,
not what the store holds.
"""

from __future__ import annotations

import bisect
import heapq
from collections.abc import Container, Iterable, Iterator, Mapping

from mcptask.reference_server.records import SortKey, TaskRecord

# A list is compacted once more than half of it, and at least this many keys, are dead.
COMPACT_AFTER = 64


class CreationOrder:
    """Sorted keys of live (and some dead) tasks, one list per owner."""

    def __init__(self) -> None:
        self._keys: dict[str | None, list[SortKey]] = {}
        self._dead: dict[str | None, int] = {}

    def add(self, owner: str | None, key: SortKey) -> None:
        """Record a new task's key under its owner."""
        keys = self._keys.setdefault(owner, [])
        if not keys or keys[-1] < key:
            keys.append(key)  # the usual case: the newest task comes last
        else:
            bisect.insort(keys, key)  # created_at in the past, or the wall clock went back

    def remove(self, owner: str | None, live: Container[SortKey]) -> None:
        """Note that one task of `owner` is gone (its key is dead unless in `live`)."""
        keys = self._keys.get(owner)
        if keys is None:
            return
        dead = self._dead.get(owner, 0) + 1
        if dead >= COMPACT_AFTER and dead * 2 > len(keys):
            # A new list, not an edit in place: a page being read keeps its own.
            keys = [key for key in keys if key in live]
            dead = 0
            if keys:
                self._keys[owner] = keys
            else:
                del self._keys[owner]
        self._dead[owner] = dead

    def after(self, owners: Iterable[str | None], after: SortKey | None) -> Iterator[SortKey]:
        """The keys of `owners` greater than `after`, ascending; dead keys included (the
        caller skips them)."""
        runs = []
        for owner in owners:
            keys = self._keys.get(owner)
            if keys:
                start = 0 if after is None else bisect.bisect_right(keys, after)
                runs.append(_from(keys, start))
        if len(runs) == 1:
            return runs[0]
        return heapq.merge(*runs)


def _from(keys: list[SortKey], start: int) -> Iterator[SortKey]:
    # By index rather than islice, which would step through the first `start` keys.
    for index in range(start, len(keys)):
        yield keys[index]


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

"""Feed the record of known tasks from what the client meets (`client.observe.TaskObserver`).

Writes are batched: a task that a `tools/call` created is written at once (before `start`
prints anything, so that its id cannot be lost), others at most a second later or when the
command ends. A task whose status and session did not change since this process last wrote it
is not written again (of the last `MEMORY` or so tasks written: memory stays bounded however
many tasks a list brings). A failing record never fails the command: the first failure is reported
once, and recording stops. Thread-safe: a bulk cancel's confirmations report from a thread of
their own.

With `listings_as_pages` (what `list` asks for), a `tasks/list` page is written as one row
of the listing it belongs to (`listings`), not as a row per task: a listing of 100,000 tasks
then costs some 200 rows instead of 100,000 upserts. Its tasks that have a session to rejoin
are still written as rows (a page holds no session). When a listing ends before its last
page (a new one begins, or the command ends: `finish`), it is folded into rows.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING

from mcptask.store.database import storable
from mcptask.store.known import ServerRecord, Sighting, StoreFailure
from mcptask.store.listings import ListedPage, Listing, storable_ttl

if TYPE_CHECKING:
    from mcptask.protocol.tasks import Task

_State = tuple[str, str | None, int | None]
"""(status, session, ttl ms) as last written."""

FLUSH_SECONDS = 1.0
FLUSH_BATCH = 500
PAGE_FLUSH_TASKS = 10_000
"""How many tasks of listed pages are held before they are written (a few hundred kilobytes;
fewer, larger transactions)."""
MEMORY = 10_000
"""How many tasks' last written state the recorder remembers (twice this at most): enough
for a watch of that many tasks to write nothing while nothing changes, bounded so that a list
of a million tasks does not hold a million entries."""


class Recorder:
    """A `TaskObserver` that writes to one server's record."""

    def __init__(
        self,
        record: ServerRecord,
        *,
        on_failure: Callable[[str], None],
        clock: Callable[[], float] = time.monotonic,
        listings_as_pages: bool = False,
    ) -> None:
        self.record = record
        self._as_pages = listings_as_pages
        self._on_failure = on_failure
        self._clock = clock
        self._pending: dict[str, Sighting] = {}
        self._gone: set[str] = set()
        self._detached: set[str] = set()
        # What this process last wrote per task, in two generations: when the newer is full it
        # becomes the older, and the older one is dropped (a task forgotten here is only
        # written again, never lost).
        self._written: dict[str, _State] = {}
        self._older: dict[str, _State] = {}
        self._pages: list[ListedPage] = []
        self._paged_tasks = 0
        self._completed: list[Listing] = []
        self._stopped: list[Listing] = []
        self._listing: Listing | None = None
        """The listing being read (pages only), until its last page or its end."""
        self._page_number = 0
        self._last_flush = clock()
        self._failed = False
        self._lock = threading.RLock()

    def seen(self, task: Task, *, via: str, session_id: str | None, tool: str | None) -> None:
        """Queue the task's status, ttl and session; write now if a tools/call created it."""
        self._queue(((task, session_id),), via, tool)

    def seen_page(
        self, page: Sequence[tuple[Task, str | None]], *, via: str, first: bool, last: bool
    ) -> None:
        """Queue a page of tasks, each with its session, as `seen` does one; or, with
        `listings_as_pages`, as one page of a listing (`first` begins one, `last` completes
        it)."""
        if self._as_pages:
            self._listed_page(page, via, first=first, last=last)
        else:
            self._queue(page, via, None)

    def _listed_page(
        self, page: Sequence[tuple[Task, str | None]], via: str, *, first: bool, last: bool
    ) -> None:
        """One page of a listing: its tasks without a session as a page, the others as rows."""
        with self._lock:
            if first or self._listing is None:
                self._stop_listing()
                self._listing = self.record.begin_listing()
                self._page_number = 0
            bound = [(task, session_id) for task, session_id in page if session_id is not None]
            if bound:
                self._queue(bound, via, None)
            # As in _queue (a status is kept as JSON, which holds any text).
            listed = [
                task for task, session_id in page if session_id is None and storable(task.taskId)
            ]
            ids = [task.taskId for task in listed]
            if self._pending and not self._pending.keys().isdisjoint(ids):
                self.flush()  # those sightings came before this page: written before it
            if self._gone:
                self._gone.difference_update(ids)  # listed again: not gone after all
            if self._written or self._older:
                for task_id in ids:
                    self._forget_written(task_id)  # a later sighting is no repeat of the page's
            statuses = [task.status for task in listed]
            ttls = [storable_ttl(task.ttl_milliseconds) for task in listed]
            self._pages.append(ListedPage(self._listing, self._page_number, ids, statuses, ttls))
            self._page_number += 1
            self._paged_tasks += len(ids)
            if last:
                self._completed.append(self._listing)
                self._listing = None
            self._maybe_flush()

    def _stop_listing(self) -> None:
        """The listing being read ends before its last page: it is folded into rows."""
        if self._listing is not None:
            self._stopped.append(self._listing)
            self._listing = None

    def _queue(self, page: Iterable[tuple[Task, str | None]], via: str, tool: str | None) -> None:
        with self._lock:
            pending, gone = self._pending, self._gone
            for task, session_id in page:
                task_id = task.taskId
                if not storable(task_id, task.status, session_id, tool):
                    # Text the file cannot hold (see database): not recorded, rather than
                    # failing the whole batch with it.
                    continue
                state = (task.status, session_id, storable_ttl(task.ttl_milliseconds))
                written = self._written.get(task_id) or self._older.get(task_id)
                if written == state and task_id not in gone:
                    continue  # written already; what was queued before is flushed in time
                gone.discard(task_id)
                pending[task_id] = Sighting(task_id, state[0], state[2], session_id, via, tool)
                if task_id not in self._written and len(self._written) >= MEMORY:
                    self._older, self._written = self._written, {}
                self._written[task_id] = state
            self._maybe_flush(now=via == "tools/call")

    def gone(self, task_id: str) -> None:
        """Queue forgetting a task the server no longer knows."""
        if not storable(task_id):
            return  # never recorded
        with self._lock:
            self._pending.pop(task_id, None)
            self._forget_written(task_id)
            self._gone.add(task_id)
            self._maybe_flush()

    def detached(self, task_id: str) -> None:
        """Queue unbinding a task from its ended session (it is visible without it)."""
        if not storable(task_id):
            return  # never recorded
        with self._lock:
            self._detached.add(task_id)
            self._forget_written(task_id)
            self._maybe_flush()

    def _forget_written(self, task_id: str) -> None:
        self._written.pop(task_id, None)
        self._older.pop(task_id, None)

    def finish(self) -> None:
        """The command is done with the server: a listing still being read stopped there;
        write everything queued."""
        with self._lock:
            self._stop_listing()
            self.flush()

    def flush(self) -> None:
        """Write everything queued, in one transaction."""
        with self._lock:
            self._last_flush = self._clock()
            queued = self._pending or self._gone or self._detached or self._pages
            sightings, gone, detached = list(self._pending.values()), self._gone, self._detached
            self._pending, self._gone, self._detached = {}, set(), set()
            pages, completed, stopped = self._pages, self._completed, self._stopped
            self._pages, self._completed, self._stopped = [], [], []
            self._paged_tasks = 0
            if self._failed or not (queued or completed or stopped):
                return  # after a failure, what is queued is dropped: memory stays bounded
            try:
                self.record.write(
                    sightings,
                    gone=gone,
                    detached=detached,
                    pages=pages,
                    completed=completed,
                    stopped=stopped,
                )
            except StoreFailure as exc:
                self._failed = True
                self._on_failure(f"tasks are not being recorded: {exc}")

    def _maybe_flush(self, *, now: bool = False) -> None:
        due = self._clock() - self._last_flush >= FLUSH_SECONDS
        full = len(self._pending) >= FLUSH_BATCH or self._paged_tasks >= PAGE_FLUSH_TASKS
        if now or due or full:
            self.flush()

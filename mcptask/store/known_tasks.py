"""The record of known tasks: one row per task of a server (and profile) met, in the SQLite
file of `database`, which every mcptask process of the user shares.

The client reports each task it meets; reports are queued and written in one transaction: a
`tools/call`'s task at once (before `start` prints its id), others within `FLUSH_SECONDS`,
every `FLUSH_BATCH` tasks, or on `close`; a task unchanged since this process wrote it is not
written again. Thread-safe (a bulk cancel's confirmations report from a thread). A failure to
record is said once to `on_failure`, and recording stops; reading raises StoreFailure.

Opening the file prunes it, at most once every `PRUNE_EVERY_SECONDS`: tasks past their ttl
(counted from when mcptask first saw them), terminal for `RETENTION_SECONDS`, or not seen for
`STALE_SECONDS`.
"""

from __future__ import annotations

import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mcptask.errors import StateError, StoreFailure
from mcptask.store.database import (
    FILE_NAME,
    STORE_ERRORS,
    UNEXPIRED,
    UPSERT_TASK,
    open_database,
    storable,
    storable_ttl,
)
from mcptask.store.identity import ServerIdentity
from mcptask.store.paths import state_dir

if TYPE_CHECKING:
    from mcptask.protocol.tasks import Task

# Held by a record while it opens or writes the file: several servers' records in one process
# (a run over several profiles) take turns here, at once, rather than in SQLite's busy
# handler, which sleeps up to 100 ms between tries.
_ONE_WRITER = threading.Lock()

RETENTION_SECONDS = 7 * 24 * 3600.0
"""How long a terminal task stays recorded (for `result`, and to show how it ended)."""
STALE_SECONDS = 30 * 24 * 3600.0
"""How long a task nobody looked at stays recorded."""
PRUNE_EVERY_SECONDS = 3600.0
FLUSH_SECONDS = 1.0
FLUSH_BATCH = 5_000  # tasks queued at most before they are written
MEMORY = 20_000
"""How many tasks' last written state is remembered at most: a watch of that many writes
nothing while nothing changes, and a list of a million holds no million entries."""

_Row = tuple[object, ...]  # a task's row as UPSERT_TASK binds it
_State = tuple[str, "str | None", "int | None"]  # (status, session, ttl ms) as last written
_Listing = tuple[float, set[str]]  # started when, the ids listed but not written again


class KnownTasks:
    """The recorded tasks of one server and profile (None: of every server), in the file at
    `path` (opened on first use, closed by `close`)."""

    def __init__(
        self,
        path: Path,
        identity: ServerIdentity | None = None,
        *,
        on_failure: Callable[[str], None] | None = None,
        now: Callable[[], float] = time.time,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = path
        self.identity = identity
        self._on_failure = on_failure or (lambda message: None)
        self._now = now
        self._clock = clock
        self._lock = threading.RLock()
        self._db: sqlite3.Connection | None = None
        self._unusable: str | None = None  # why the file cannot be opened: not tried again
        self._failed = False  # recording stopped after a failure; what is queued is dropped
        self._pending: dict[str, _Row] = {}
        self._gone: set[str] = set()
        self._detached: set[str] = set()
        # What this process last wrote per task, emptied when full (a task forgotten here is
        # only written again, never lost).
        self._written: dict[str, _State] = {}
        self._listing: _Listing | None = None  # the listing being read
        self._completed: list[_Listing] = []
        self._last_flush = clock()

    @classmethod
    def open(
        cls,
        identity: ServerIdentity | None = None,
        environ: Mapping[str, str] | None = None,
        *,
        on_failure: Callable[[str], None] | None = None,
    ) -> KnownTasks:
        """The record in the state directory the environment names."""
        return cls(state_dir(environ) / FILE_NAME, identity, on_failure=on_failure)

    def ids(self) -> list[str]:
        """Every recorded task id (`--known`), most recently first seen first."""
        where, params = self._where()
        rows = self._read(
            f"SELECT task_id FROM tasks WHERE {where} AND {UNEXPIRED}"  # noqa: S608
            " ORDER BY first_seen DESC, task_id",
            (*params, self._now()),
        )
        return [task_id for (task_id,) in rows]

    def sessions(self) -> dict[str, str]:
        """Task id → the session that owns it, for the client to rejoin ({} on a failure)."""
        where, params = self._where()
        try:
            rows = self._read(
                f"SELECT task_id, session_id FROM tasks WHERE {where}"  # noqa: S608
                f" AND session_id IS NOT NULL AND {UNEXPIRED}",
                (*params, self._now()),
            )
        except StoreFailure as exc:
            if self._unusable is not None:  # the file cannot be opened: recording stops too
                self._fail(f"tasks are not being recorded: {exc}")
            else:
                self._on_failure(f"recorded sessions are not being rejoined: {exc}")
            return {}
        return {str(task_id): str(session) for task_id, session in rows}

    def forget(self, task_ids: Iterable[str] | None = None) -> list[str]:
        """Forget these tasks (None: every one); returns the ids that were recorded."""
        where, params = self._where()
        order = "task_id" if self.identity is None else "MAX(first_seen) DESC, task_id"
        with self._writing() as db:
            found = db.execute(
                f"SELECT task_id FROM tasks WHERE {where} GROUP BY task_id ORDER BY {order}",  # noqa: S608
                params,
            )
            recorded = [str(task_id) for (task_id,) in found]
            if task_ids is not None:
                present = set(recorded)
                recorded = [task_id for task_id in dict.fromkeys(task_ids) if task_id in present]
            db.executemany(
                f"DELETE FROM tasks WHERE {where} AND task_id = ?",  # noqa: S608
                [(*params, task_id) for task_id in recorded],
            )
        return recorded

    def _prune(self, db: sqlite3.Connection) -> int:
        """Forget expired, long-terminal and stale tasks (of every server); returns how many."""
        now = self._now()
        cursor = db.execute(
            "DELETE FROM tasks WHERE (expires_at IS NOT NULL AND expires_at < ?)"
            " OR (terminal_since IS NOT NULL AND terminal_since < ?) OR last_seen < ?",
            (now, now - RETENTION_SECONDS, now - STALE_SECONDS),
        )
        db.execute("DELETE FROM pruned")
        db.execute("INSERT INTO pruned (at) VALUES (?)", (now,))
        return cursor.rowcount

    def _prune_if_due(self, db: sqlite3.Connection) -> None:
        (at,) = db.execute("SELECT MAX(at) FROM pruned").fetchone()  # NULL when never
        # a prune dated ahead of the clock does not hold the next one off
        if not isinstance(at, float) or not 0 <= self._now() - at < PRUNE_EVERY_SECONDS:
            self._prune(db)

    def seen(self, task: Task, *, via: str, session_id: str | None, tool: str | None) -> None:
        """`task` as the server described it in answer to `via`; `session_id` owns it (None
        keeps what was known); `tool` created it."""
        self._queue(((task, session_id),), via, tool)

    def seen_page(
        self, page: Sequence[tuple[Task, str | None]], *, via: str, first: bool, last: bool
    ) -> None:
        """A page of a listing, each task with its session. After the `last` page, the tasks
        only ever met by listings, not on this one and not seen since it started, are
        forgotten (the server no longer lists them)."""
        with self._lock:
            if first or self._listing is None:
                self._listing = (self._now(), set())
            listing = self._listing
            if last:
                self._completed.append(listing)
                self._listing = None
            self._queue(page, via, None, unwritten=listing[1])

    def gone(self, task_id: str) -> None:
        """The server no longer knows the task (unknown, expired, or its session ended)."""
        self._mark(task_id, gone=True)

    def detached(self, task_id: str) -> None:
        """The task's recorded session has ended, yet the task is visible without it."""
        self._mark(task_id, gone=False)

    def _mark(self, task_id: str, *, gone: bool) -> None:
        if storable(task_id):  # else never recorded
            with self._lock:  # the queues are swapped by a flush: chosen under the lock
                if gone:
                    self._pending.pop(task_id, None)
                (self._gone if gone else self._detached).add(task_id)
                self._written.pop(task_id, None)
                self._maybe_flush()

    def flush(self) -> None:
        """Write everything queued, in one transaction."""
        with self._lock:
            self._last_flush = self._clock()
            sightings, gone, detached = list(self._pending.values()), self._gone, self._detached
            self._pending, self._gone, self._detached = {}, set(), set()
            completed, self._completed = self._completed, []
            if self._failed or not (sightings or gone or detached or completed):
                return  # after a failure, what is queued is dropped: memory stays bounded
            try:
                self._write(sightings, gone, detached, completed)
            except StoreFailure as exc:
                self._fail(f"tasks are not being recorded: {exc}")

    def close(self) -> None:
        """Write what is queued and close the file (cleanly: its -wal and -shm go)."""
        with self._lock:
            try:
                self.flush()
            finally:
                if self._db is not None:
                    self._db.close()
                self._db = None

    def _queue(
        self,
        page: Iterable[tuple[Task, str | None]],
        via: str,
        tool: str | None,
        unwritten: set[str] | None = None,
    ) -> None:
        """Queue sightings; `unwritten` gets the ids of those unchanged, not written again."""
        from mcptask.protocol.tasks import TERMINAL_STATUSES  # store imports only errors at once

        key, profile, label = self._server()
        seen_at = self._now()
        with self._lock:
            pending, gone = self._pending, self._gone
            for task, session_id in page:
                task_id, status = task.taskId, task.status
                if not storable(task_id, status, session_id, tool):
                    continue  # not recorded, rather than failing the whole batch with it
                ttl = storable_ttl(task.ttl_milliseconds)
                state = (status, session_id, ttl)
                if self._written.get(task_id) == state and task_id not in gone:
                    if unwritten is not None:
                        unwritten.add(task_id)
                    continue  # written already; what was queued before is flushed in time
                gone.discard(task_id)
                pending[task_id] = (key, profile, task_id, status, session_id, ttl, seen_at,
                                    status in TERMINAL_STATUSES, via, tool, label)  # fmt: skip
                if task_id not in self._written and len(self._written) >= MEMORY:
                    self._written.clear()
                self._written[task_id] = state
            self._maybe_flush(now=via == "tools/call")

    def _maybe_flush(self, *, now: bool = False) -> None:
        due = self._clock() - self._last_flush >= FLUSH_SECONDS
        if now or due or len(self._pending) >= FLUSH_BATCH:
            self.flush()

    def _write(
        self,
        sightings: list[_Row],
        gone: Iterable[str],
        detached: Iterable[str],
        completed: Sequence[_Listing],
    ) -> None:
        key, profile, _ = self._server()
        with self._writing() as db:
            db.executemany(UPSERT_TASK, sightings)
            db.executemany(
                "UPDATE tasks SET session_id = NULL"
                " WHERE server = ? AND profile = ? AND task_id = ?",
                [(key, profile, task_id) for task_id in detached],
            )
            for started, unwritten in completed:
                found = db.execute(
                    "SELECT task_id FROM tasks WHERE server = ? AND profile = ?"
                    " AND via = 'tasks/list' AND last_seen < ?",
                    (key, profile, started),
                )
                gone = [*gone, *(task_id for (task_id,) in found if task_id not in unwritten)]
            db.executemany(
                "DELETE FROM tasks WHERE server = ? AND profile = ? AND task_id = ?",
                [(key, profile, task_id) for task_id in gone],
            )

    def _fail(self, message: str) -> None:  # recording stops; said the first time only
        if not self._failed:
            self._failed = True
            self._on_failure(message)

    def _connection(self) -> sqlite3.Connection:
        """The open file: opened, migrated and pruned when due, on first use."""
        with self._lock:
            if self._db is None:
                if self._unusable is not None:
                    raise StoreFailure(self._unusable)
                try:
                    with _ONE_WRITER:
                        self._db = open_database(self.path, then=self._prune_if_due)
                except StateError as exc:  # another user's file or directory: it names it
                    self._unusable = f"cannot use the record of known tasks: {exc.message}"
                    raise StoreFailure(self._unusable) from None
                except STORE_ERRORS as exc:
                    self._unusable = f"cannot use the record of known tasks at {self.path}: {exc}"
                    raise StoreFailure(self._unusable) from None
            return self._db

    @contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        """A write transaction (see `open_database`): StoreFailure when it fails."""
        with self._lock:
            db = self._connection()
            try:
                with _ONE_WRITER:
                    db.execute("BEGIN IMMEDIATE")
                    with db:
                        yield db
            except STORE_ERRORS as exc:
                raise StoreFailure(f"cannot write {self.path}: {exc}") from None

    def _read(self, sql: str, params: Sequence[object]) -> list[Any]:
        with self._lock:
            db = self._connection()
            try:
                return db.execute(sql, tuple(params)).fetchall()
            except STORE_ERRORS as exc:
                raise StoreFailure(f"cannot read {self.path}: {exc}") from None

    def _server(self) -> tuple[str, str, str]:
        assert self.identity is not None, "a record of every server records nothing"
        return self.identity.key, self.identity.profile, self.identity.label

    def _where(self) -> tuple[str, tuple[str, ...]]:
        if self.identity is None:
            return "1", ()
        return "server = ? AND profile = ?", (self.identity.key, self.identity.profile)

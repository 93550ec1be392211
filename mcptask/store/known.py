"""The record of known tasks: one SQLite file in the state directory, shared by every mcptask
process of the user.

Safe with concurrent processes: WAL journal, a busy timeout, and short write transactions
(`BEGIN IMMEDIATE`, one batch, `COMMIT`). The file is mode 0600, its directory 0700.

It prunes itself when it is opened, at most once every `PRUNE_EVERY_SECONDS` (the prune
reads the whole table, some 30 ms at 200,000 tasks, which no command should pay each time):
- a task past its ttl (counted from when mcptask first saw it, so a server's clock cannot make
  it go early),
- a task that has been terminal for more than `RETENTION_SECONDS` (7 days),
- a task not seen at all for `STALE_SECONDS` (30 days: a server that is never asked again);
and a task the server says it does not know is forgotten when mcptask learns it. A task
past its ttl but not yet pruned is never read back.

Tasks are kept two ways, which the readers here merge: a row per task (`tasks`), and the
pages of a listing that `list` read (`listed`, see `listings`), one row per page.
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from mcptask.store import listings, page_rows
from mcptask.store.database import STORE_ERRORS, Transaction, open_database, storable
from mcptask.store.identity import ServerIdentity
from mcptask.store.listings import MAX_TTL_MS, TERMINAL, ListedPage, Listing, PageTasks
from mcptask.store.paths import state_dir

FILE_NAME = "known-tasks.sqlite3"
SCHEMA_VERSION = 1
RETENTION_SECONDS = 7 * 24 * 3600.0
"""How long a terminal task stays recorded (for `result`, and to show how it ended)."""
STALE_SECONDS = 30 * 24 * 3600.0
"""How long a task nobody looked at stays recorded."""
PRUNE_EVERY_SECONDS = 3600.0
"""How long after a prune opening the record prunes it again."""
_LISTED = "tasks/list"
"""How a task only ever seen on a listing's page was met."""
_STAMP_STEP = 1e-6
"""More than the clock's resolution at today's dates (2.4e-7 s for a float)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tasks (
    server TEXT NOT NULL,
    profile TEXT NOT NULL DEFAULT '',
    task_id TEXT NOT NULL,
    status TEXT NOT NULL,
    session_id TEXT,
    ttl_ms INTEGER,
    expires_at REAL,
    first_seen REAL NOT NULL,
    last_seen REAL NOT NULL,
    terminal_since REAL,
    via TEXT NOT NULL,
    tool TEXT,
    label TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (server, profile, task_id)
)
"""
_PRUNED_SCHEMA = "CREATE TABLE IF NOT EXISTS pruned (at REAL NOT NULL)"
"""One row: when the record was last pruned."""
_UPSERT = """
INSERT INTO tasks (server, profile, task_id, status, session_id, ttl_ms, expires_at,
                   first_seen, last_seen, terminal_since, via, tool, label)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, CASE WHEN ?6 IS NULL THEN NULL ELSE ?7 + ?6 / 1000.0 END,
        ?7, ?7, CASE WHEN ?8 THEN ?7 END, ?9, ?10, ?11)
ON CONFLICT (server, profile, task_id) DO UPDATE SET
    status = excluded.status,
    session_id = COALESCE(excluded.session_id, tasks.session_id),
    ttl_ms = excluded.ttl_ms,
    expires_at = CASE WHEN excluded.ttl_ms IS NULL THEN NULL
                      ELSE tasks.first_seen + excluded.ttl_ms / 1000.0 END,
    last_seen = excluded.last_seen,
    terminal_since = COALESCE(tasks.terminal_since, excluded.terminal_since),
    tool = COALESCE(tasks.tool, excluded.tool)
"""
"""Numbered parameters, bound from a tuple per row: (server, profile, task_id, status,
session_id, ttl_ms, now, terminal, via, tool, label). Named ones, bound from a dict per row,
cost a third more for a list of many tasks."""
ROW_COLUMNS = "task_id, status, session_id, ttl_ms, first_seen, last_seen, via, tool"
"""The columns `merged_tasks` reads a row from."""
SELECT_ROWS = f"SELECT {ROW_COLUMNS} FROM tasks WHERE server = ? AND profile = ?"  # noqa: S608


class StoreFailure(Exception):
    """The record cannot be opened, read or written; the message says why and where."""


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
    """The method that first brought it: tools/call, tasks/list, tasks/get, tasks/cancel."""
    tool: str | None


class Sighting(NamedTuple):
    """What one answer said about a task, to be written to the record (a named tuple: a
    list of many tasks makes one per task)."""

    task_id: str
    status: str
    ttl_ms: int | None
    session_id: str | None
    via: str
    tool: str | None = None


class KnownTasks:
    """The record file, opened once per process (`open`), pruned on opening when due."""

    def __init__(self, path: Path, *, now: Callable[[], float] = time.time) -> None:
        self.path = path
        self._now = now
        self._last_stamp = float("-inf")
        self._lock = threading.Lock()
        try:
            self._db = open_database(path)
            with self._write() as db:
                db.execute(_SCHEMA)
                db.execute(_PRUNED_SCHEMA)
                db.execute(listings.SCHEMA)
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                if self._prune_due(db):
                    self._prune(db)
        except (OSError, sqlite3.Error, UnicodeEncodeError) as exc:  # STORE_ERRORS, and OS
            raise StoreFailure(f"cannot use the record of known tasks at {path}: {exc}") from None

    @classmethod
    def open(cls, environ: Mapping[str, str] | None = None) -> KnownTasks:
        """The record in the state directory the environment names."""
        return cls(state_dir(environ) / FILE_NAME)

    def close(self) -> None:
        """Close the database connection."""
        self._db.close()

    def server(self, identity: ServerIdentity) -> ServerRecord:
        """The part of the record that belongs to one server."""
        return ServerRecord(self, identity)

    def prune(self) -> int:
        """Forget expired, long-terminal and stale tasks; returns how many."""
        with self._write() as db:
            return self._prune(db)

    def _prune(self, db: sqlite3.Connection) -> int:
        now = self._now()
        cursor = db.execute(
            "DELETE FROM tasks WHERE (expires_at IS NOT NULL AND expires_at < ?)"
            " OR (terminal_since IS NOT NULL AND terminal_since < ?) OR last_seen < ?",
            (now, now - RETENTION_SECONDS, now - STALE_SECONDS),
        )
        listings.prune(db, now, retention=RETENTION_SECONDS, stale=STALE_SECONDS)
        db.execute("DELETE FROM pruned")
        db.execute("INSERT INTO pruned (at) VALUES (?)", (now,))
        return cursor.rowcount

    def _prune_due(self, db: sqlite3.Connection) -> bool:
        (at,) = db.execute("SELECT MAX(at) FROM pruned").fetchone()  # NULL when never
        if not isinstance(at, float):
            return True
        since = self._now() - at
        return not 0 <= since < PRUNE_EVERY_SECONDS  # a prune dated ahead of the clock: due

    def forget_everywhere(self, task_ids: Iterable[str] | None) -> list[str]:
        """Forget these task ids (None: every task) of every server; returns the ids that
        were recorded."""
        wanted = None if task_ids is None else list(dict.fromkeys(task_ids))
        try:
            with self._write() as db:
                rows = db.execute("SELECT DISTINCT task_id FROM tasks")
                recorded = {str(task_id) for (task_id,) in rows}
                recorded.update(*(page.task_ids for page in listings.pages(db, None)))
                if wanted is None:
                    db.execute("DELETE FROM tasks")
                    db.execute("DELETE FROM listed")
                    return sorted(recorded)
                kept = [task_id for task_id in wanted if storable(task_id)]  # others: never kept
                db.executemany("DELETE FROM tasks WHERE task_id = ?", [(t,) for t in kept])
                listings.drop_tasks(db, None, kept)
        except STORE_ERRORS as exc:
            raise StoreFailure(f"cannot write {self.path}: {exc}") from None
        return [task_id for task_id in wanted if task_id in recorded]

    # -- plumbing -------------------------------------------------------------------------------

    def _write(self) -> Transaction:
        return Transaction(self._db, self._lock)

    def _snapshot(self) -> Transaction:
        """A read transaction: what several queries read is one state of the file."""
        return Transaction(self._db, self._lock, "BEGIN")

    def _read(self, sql: str, params: Iterable[object]) -> list[tuple[object, ...]]:
        with self._lock:
            try:
                return list(self._db.execute(sql, tuple(params)))
            except STORE_ERRORS as exc:
                raise StoreFailure(f"cannot read {self.path}: {exc}") from None

    def _now_value(self) -> float:
        return self._now()

    def _stamp(self) -> float:
        """When a write happens: the clock, but later than this process's previous write,
        so that of two sightings written one after the other the second is the later one
        (even within the clock's resolution; a row wins a tie with a page)."""
        self._last_stamp = max(self._now(), self._last_stamp + _STAMP_STEP)
        return self._last_stamp


class ServerRecord:
    """The recorded tasks of one server (and profile)."""

    def __init__(self, store: KnownTasks, identity: ServerIdentity) -> None:
        self.store = store
        self.identity = identity
        self._where = (identity.key, identity.profile)

    def tasks(self) -> list[KnownTask]:
        """Every recorded task of this server, most recently first seen first: its rows and
        its listings' pages merged (the later sighting wins, a row on a tie)."""
        try:
            with self.store._snapshot() as db:
                rows = db.execute(SELECT_ROWS, self._where).fetchall()
                pages = listings.pages(db, self._where)
        except STORE_ERRORS as exc:
            raise StoreFailure(f"cannot read {self.store.path}: {exc}") from None
        return merged_tasks(rows, pages, self.store._now_value())

    def sessions(self) -> dict[str, str]:
        """Task id → the session that owns it, for the tasks recorded with one (rows only:
        a page never holds a session)."""
        rows = self.store._read(
            "SELECT task_id, session_id FROM tasks WHERE server = ? AND profile = ?"
            " AND session_id IS NOT NULL AND (expires_at IS NULL OR expires_at >= ?)",
            (*self._where, self.store._now_value()),
        )
        return {str(task_id): str(session) for task_id, session in rows}

    def count(self) -> int:
        """How many tasks of this server are recorded."""
        return len(self.tasks())

    def begin_listing(self) -> Listing:
        """A new listing of this server's pages, started now."""
        return Listing(os.urandom(8).hex(), self.store._now_value())

    def write(
        self,
        sightings: Iterable[Sighting],
        gone: Iterable[str] = (),
        detached: Iterable[str] = (),
        *,
        pages: Iterable[ListedPage] = (),
        completed: Iterable[Listing] = (),
        stopped: Iterable[Listing] = (),
    ) -> None:
        """Record what was seen, forget what is gone, unbind tasks from ended sessions: one
        transaction. `pages` are written first (each seen later than the one before, and
        the rows of their tasks take their sightings), then a `stopped` listing becomes
        rows and a `completed` one replaces the pages seen before it, then the `sightings`
        (seen after any page of the same tasks here) are written."""
        key, profile = self._where
        label = self.identity.label
        pages, gone = list(pages), list(gone)
        try:
            with self.store._write() as db:
                stamped = [(page, self.store._stamp()) for page in pages]
                page_rows.pages_to_rows(
                    db, self._where, listings.write_pages(db, self._where, stamped)
                )
                for listing in stopped:
                    taken = listings.take_listing(db, self._where, listing.listing_id)
                    page_rows.fold(db, self._where, label, taken)
                for listing in completed:
                    listings.complete(db, self._where, listing)
                now = self.store._stamp()  # under the lock: stamps and commits in one order
                db.executemany(
                    _UPSERT,
                    [
                        (
                            key,
                            profile,
                            seen.task_id,
                            seen.status,
                            seen.session_id,
                            seen.ttl_ms,
                            now,
                            seen.status in TERMINAL,
                            seen.via,
                            seen.tool,
                            label,
                        )
                        for seen in sightings
                    ],
                )
                db.executemany(
                    "UPDATE tasks SET session_id = NULL"
                    " WHERE server = ? AND profile = ? AND task_id = ?",
                    [(key, profile, task_id) for task_id in detached],
                )
                db.executemany(
                    "DELETE FROM tasks WHERE server = ? AND profile = ? AND task_id = ?",
                    [(key, profile, task_id) for task_id in gone],
                )
                listings.drop_tasks(db, self._where, gone)
        except STORE_ERRORS as exc:
            raise StoreFailure(f"cannot write {self.store.path}: {exc}") from None

    def forget(self, task_ids: Iterable[str]) -> list[str]:
        """Forget these tasks; returns the ids that were recorded."""
        wanted = list(dict.fromkeys(task_ids))
        recorded = {task.task_id for task in self.tasks()}
        self.write((), gone=[task_id for task_id in wanted if task_id in recorded])
        return [task_id for task_id in wanted if task_id in recorded]

    def forget_all(self) -> list[str]:
        """Forget every task of this server; returns their ids."""
        return self.forget(task.task_id for task in self.tasks())


def merged_tasks(
    rows: Iterable[Sequence[Any]], pages: Iterable[PageTasks], now: float
) -> list[KnownTask]:
    """Rows (`SELECT_ROWS`'s columns) and pages of one record merged, one task each: the
    later sighting gives the status and ttl (a row on a tie), the earlier one the first
    sighting; without the tasks past their ttl; most recently first seen first."""
    # task id -> the columns of a KnownTask but expires_at, updated in place; a row whose
    # columns are not what this module writes (a file edited by hand) is passed over
    merged: dict[str, list[Any]] = {row[0]: list(row) for row in rows if _is_row(row)}
    for seen_at, task_ids, statuses, ttls in pages:  # oldest first
        for task_id, status, ttl in zip(task_ids, statuses, ttls, strict=True):
            known = merged.get(task_id)
            if known is None:
                merged[task_id] = [task_id, status, None, ttl, seen_at, seen_at, _LISTED, None]
                continue
            known[4] = min(known[4], seen_at)
            if seen_at > known[5]:
                known[1], known[3], known[5] = status, ttl, seen_at
    found = []
    for task_id, status, session_id, ttl, first_seen, last_seen, via, tool in merged.values():
        expires_at = None if ttl is None else first_seen + ttl / 1000.0
        if expires_at is None or expires_at >= now:  # past its ttl, not yet pruned: gone
            found.append(
                KnownTask(
                    task_id, status, session_id, ttl, expires_at, first_seen, last_seen, via, tool
                )
            )
    found.sort(key=lambda task: (-task.first_seen, task.task_id))
    return found


def _is_row(row: Sequence[Any]) -> bool:
    """Whether `SELECT_ROWS` columns have the types this module writes."""
    task_id, status, _, ttl, first_seen, last_seen, *_ = row
    return (
        type(task_id) is str
        and type(status) is str
        and type(first_seen) is float
        and type(last_seen) is float
        and (ttl is None or (type(ttl) is int and 0 <= ttl <= MAX_TTL_MS))
    )

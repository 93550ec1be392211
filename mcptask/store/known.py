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
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from mcptask.store.identity import ServerIdentity
from mcptask.store.paths import ensure_private_dir, state_dir

FILE_NAME = "known-tasks.sqlite3"
SCHEMA_VERSION = 1
RETENTION_SECONDS = 7 * 24 * 3600.0
"""How long a terminal task stays recorded (for `result`, and to show how it ended)."""
STALE_SECONDS = 30 * 24 * 3600.0
"""How long a task nobody looked at stays recorded."""
PRUNE_EVERY_SECONDS = 3600.0
"""How long after a prune opening the record prunes it again."""
BUSY_TIMEOUT_SECONDS = 10.0
"""How long a process waits for another one's write to finish (writes take milliseconds)."""
TERMINAL = ("completed", "failed", "cancelled")

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
_SELECT_TASKS = (
    "SELECT task_id, status, session_id, ttl_ms, expires_at, first_seen, last_seen, via, tool"
    " FROM tasks WHERE server = ? AND profile = ?"
    " AND (expires_at IS NULL OR expires_at >= ?)"  # past its ttl, not yet pruned: gone
    " ORDER BY first_seen DESC, task_id"
)


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
        self._lock = threading.Lock()
        try:
            ensure_private_dir(path.parent)
            # Create the file 0600 before SQLite does (it would use the umask); its -wal and
            # -shm files take the database file's mode.
            os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
            if path.stat().st_mode & 0o077:
                path.chmod(0o600)
            self._db = sqlite3.connect(
                path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None, check_same_thread=False
            )
            self._db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_SECONDS * 1000)}")
            _use_wal(self._db)
            self._db.execute("PRAGMA synchronous = NORMAL")
            with self._write() as db:
                db.execute(_SCHEMA)
                db.execute(_PRUNED_SCHEMA)
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                if self._prune_due(db):
                    self._prune(db)
        except (OSError, sqlite3.Error) as exc:
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
                rows = db.execute("SELECT DISTINCT task_id FROM tasks ORDER BY task_id")
                recorded = [str(task_id) for (task_id,) in rows]
                if wanted is None:
                    db.execute("DELETE FROM tasks")
                    return recorded
                db.executemany("DELETE FROM tasks WHERE task_id = ?", [(t,) for t in wanted])
        except sqlite3.Error as exc:
            raise StoreFailure(f"cannot write {self.path}: {exc}") from None
        return [task_id for task_id in wanted if task_id in recorded]

    # -- plumbing -------------------------------------------------------------------------------

    def _write(self) -> _Transaction:
        return _Transaction(self._db, self._lock)

    def _read(self, sql: str, params: Iterable[object]) -> list[tuple[object, ...]]:
        with self._lock:
            try:
                return list(self._db.execute(sql, tuple(params)))
            except sqlite3.Error as exc:
                raise StoreFailure(f"cannot read {self.path}: {exc}") from None

    def _now_value(self) -> float:
        return self._now()


def _use_wal(db: sqlite3.Connection) -> None:
    """Switch the file to WAL (once: the mode persists in the file), waiting out the others.

    On a file still in rollback mode the switch needs the exclusive lock, and SQLite answers
    "database is locked" at once, without its busy handler, when another process opening
    the same new file holds a shared lock (four processes starting together did): so it is
    tried again, within the same bound as any other wait for the file.
    """
    deadline = time.monotonic() + BUSY_TIMEOUT_SECONDS
    while True:
        try:
            db.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


class _Transaction:
    """`BEGIN IMMEDIATE` ... `COMMIT` (rolled back on error): short, so others wait little."""

    def __init__(self, db: sqlite3.Connection, lock: threading.Lock) -> None:
        self._db = db
        self._lock = lock

    def __enter__(self) -> sqlite3.Connection:
        self._lock.acquire()
        try:
            self._db.execute("BEGIN IMMEDIATE")
        except BaseException:
            self._lock.release()
            raise
        return self._db

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        try:
            self._db.execute("COMMIT" if kind is None else "ROLLBACK")
        finally:
            self._lock.release()


class ServerRecord:
    """The recorded tasks of one server (and profile)."""

    def __init__(self, store: KnownTasks, identity: ServerIdentity) -> None:
        self.store = store
        self.identity = identity
        self._where = (identity.key, identity.profile)

    def tasks(self) -> list[KnownTask]:
        """Every recorded task of this server, most recently first seen first."""
        rows = self.store._read(_SELECT_TASKS, (*self._where, self.store._now_value()))
        return [KnownTask(*row) for row in rows]  # type: ignore[arg-type]

    def sessions(self) -> dict[str, str]:
        """Task id → the session that owns it, for the tasks recorded with one."""
        rows = self.store._read(
            "SELECT task_id, session_id FROM tasks WHERE server = ? AND profile = ?"
            " AND session_id IS NOT NULL AND (expires_at IS NULL OR expires_at >= ?)",
            (*self._where, self.store._now_value()),
        )
        return {str(task_id): str(session) for task_id, session in rows}

    def count(self) -> int:
        """How many tasks of this server are recorded."""
        rows = self.store._read(
            "SELECT COUNT(*) FROM tasks WHERE server = ? AND profile = ?"
            " AND (expires_at IS NULL OR expires_at >= ?)",
            (*self._where, self.store._now_value()),
        )
        count = rows[0][0]
        return count if isinstance(count, int) else 0

    def write(
        self,
        sightings: Iterable[Sighting],
        gone: Iterable[str] = (),
        detached: Iterable[str] = (),
    ) -> None:
        """Record what was seen, forget what is gone, unbind tasks from ended sessions: one
        transaction."""
        now = self.store._now_value()
        key, profile = self._where
        label = self.identity.label
        rows = [
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
        ]
        try:
            with self.store._write() as db:
                db.executemany(_UPSERT, rows)
                db.executemany(
                    "UPDATE tasks SET session_id = NULL"
                    " WHERE server = ? AND profile = ? AND task_id = ?",
                    [(key, profile, task_id) for task_id in detached],
                )
                db.executemany(
                    "DELETE FROM tasks WHERE server = ? AND profile = ? AND task_id = ?",
                    [(key, profile, task_id) for task_id in gone],
                )
        except sqlite3.Error as exc:
            raise StoreFailure(f"cannot write {self.store.path}: {exc}") from None

    def forget(self, task_ids: Iterable[str]) -> list[str]:
        """Forget these tasks; returns the ids that were recorded."""
        wanted = list(dict.fromkeys(task_ids))
        recorded = {task.task_id for task in self.tasks()}
        self.write((), gone=wanted)
        return [task_id for task_id in wanted if task_id in recorded]

    def forget_all(self) -> list[str]:
        """Forget every task of this server; returns their ids."""
        return self.forget(task.task_id for task in self.tasks())


def complete_task_ids(
    environ: Mapping[str, str], identity: ServerIdentity | None, incomplete: str
) -> list[tuple[str, str]]:
    """Recorded task ids starting with `incomplete`, with their last status, for shell
    completion: this server's when it is known, else every server's. Never creates, writes
    or fails: no record means no suggestions."""
    path = state_dir(environ) / FILE_NAME
    if not path.is_file():
        return []
    pattern = incomplete.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    sql = (
        "SELECT DISTINCT task_id, status FROM tasks WHERE task_id LIKE ? ESCAPE '\\'"
        " AND (expires_at IS NULL OR expires_at >= ?)"
    )
    params: tuple[object, ...] = (pattern, time.time())
    if identity is not None:
        sql += " AND server = ? AND profile = ?"
        params += (identity.key, identity.profile)
    try:
        db = sqlite3.connect(f"file:{path}?mode=rw", uri=True, timeout=1.0)
        try:
            rows = db.execute(sql + " ORDER BY first_seen DESC LIMIT 200", params).fetchall()
        finally:
            db.close()
    except sqlite3.Error:
        return []
    return [(str(task_id), str(status)) for task_id, status in rows]

"""The SQLite file behind the record of known tasks: private, in WAL mode, shared by every
mcptask process of the user; its schema as a list of migrations (the model is simonw/llm's
`migrations.py`); and shell completion's read of it.

Each migration runs once per file, in order, in the transaction that opens the file (table
`_migrations` names those that ran). A new schema is a new function at the end of
`MIGRATIONS`, never an edit of one that users' files have already run.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from mcptask.errors import StateError
from mcptask.store.paths import ensure_private_dir, open_no_follow, refuse_unless_own, state_dir

if TYPE_CHECKING:
    from mcptask.store.identity import ServerIdentity

FILE_NAME = "known-tasks.sqlite3"
COMPLETIONS = 200
"""How many task ids a completion offers at most."""
UNEXPIRED = "(expires_at IS NULL OR expires_at >= ?)"
BUSY_TIMEOUT_SECONDS = 10.0
"""How long a process waits for another one's write to finish (writes take milliseconds)."""
STORE_ERRORS = (OSError, sqlite3.Error, UnicodeEncodeError)
"""What using the file can raise; UnicodeEncodeError: SQLite keeps UTF-8, so a lone surrogate
(from a server's JSON or an undecodable command line) cannot be bound."""
MAX_TTL_MS = 2**63 - 1
"""The largest ttl kept (SQLite's largest integer); a larger or negative one is kept as no
ttl, which is what so long a ttl means anyway."""
_SURROGATE = re.compile("[\ud800-\udfff]")


def storable(*texts: str | None) -> bool:
    """Whether SQLite can hold every one of `texts` (None holds nothing): a lone surrogate is
    the one text UTF-8 cannot encode (`isascii`: the usual case, at once)."""
    return all(text is None or text.isascii() or not _SURROGATE.search(text) for text in texts)


def storable_ttl(ttl: int | None) -> int | None:
    """A server's ttl as the record keeps it (see `MAX_TTL_MS`)."""
    return ttl if ttl is None or 0 <= ttl <= MAX_TTL_MS else None


def open_database(path: Path, then: Callable[[sqlite3.Connection], None]) -> sqlite3.Connection:
    """The file at `path` (0600, its directory 0700), in WAL mode, migrated, and `then` done in
    the same transaction; raises STORE_ERRORS, and StateError for a file or directory another
    user could control (see `own_file`)."""
    ensure_private_dir(path.parent)
    # Create the file 0600 before SQLite does (it would use the umask); its -wal and -shm
    # files take the database file's mode.
    os.close(own_file(path, create=True))
    # Transactions are begun by hand (`BEGIN IMMEDIATE`: a write takes the lock at once) and
    # ended by `with db:` (COMMIT, or ROLLBACK on an error).
    db = sqlite3.connect(
        path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None, check_same_thread=False
    )
    try:
        use_wal(db)
        db.execute("PRAGMA synchronous = NORMAL")
        db.execute("BEGIN IMMEDIATE")
        with db:
            migrate(db)
            then(db)
    except BaseException:
        db.close()
        raise
    return db


def own_file(path: Path, *, create: bool = False) -> int:
    """A read-write descriptor of the record at `path`, not through a symbolic link (`create`:
    created if missing, made 0600); StateError for a link, or a file or -wal/-shm companion
    that is not the user's, which would take mcptask's writes elsewhere."""
    for companion in (path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        with contextlib.suppress(FileNotFoundError):
            refuse_unless_own(companion, companion.lstat())
    descriptor = open_no_follow(path, os.O_RDWR | (os.O_CREAT if create else 0))
    try:
        status = os.fstat(descriptor)
        refuse_unless_own(path, status)
        if create and status.st_mode & 0o077:
            os.fchmod(descriptor, 0o600)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def use_wal(db: sqlite3.Connection) -> None:
    """Switch the file to WAL (once: the mode persists), waiting out the others: SQLite says
    "database is locked" at once, without its busy handler, while another process opening
    the same new file holds a shared lock."""
    deadline = time.monotonic() + BUSY_TIMEOUT_SECONDS
    while True:
        try:
            db.execute("PRAGMA journal_mode = WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)


UPSERT_TASK = """
INSERT INTO tasks (server, profile, task_id, status, session_id, ttl_ms, expires_at,
                   first_seen, last_seen, terminal_since, via, tool, label)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7 + ?6 / 1000.0, ?7, ?7, CASE WHEN ?8 THEN ?7 END, ?9, ?10, ?11)
ON CONFLICT (server, profile, task_id) DO UPDATE SET
    status = excluded.status,
    session_id = COALESCE(excluded.session_id, session_id),
    ttl_ms = excluded.ttl_ms,
    expires_at = first_seen + excluded.ttl_ms / 1000.0,
    last_seen = excluded.last_seen,
    terminal_since = COALESCE(terminal_since, excluded.terminal_since),
    via = CASE WHEN via = 'tasks/list' THEN excluded.via ELSE via END,
    tool = COALESCE(tool, excluded.tool)
"""
"""Binds (server, profile, task_id, status, session_id, ttl_ms, seen at, terminal, via, tool,
label). Unqualified columns on the right are the row as it was."""


def migrate(db: sqlite3.Connection) -> None:
    """Run the migrations this file has not run yet (call within a write transaction)."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS _migrations (name TEXT PRIMARY KEY, applied_at REAL NOT NULL)"
    )
    done = {name for (name,) in db.execute("SELECT name FROM _migrations")}
    for step in MIGRATIONS:
        if step.__name__ not in done:
            step(db)
            db.execute("INSERT INTO _migrations VALUES (?, ?)", (step.__name__, time.time()))


def m001_tasks(db: sqlite3.Connection) -> None:
    """One row per task and server (and profile), and when the record was last pruned. (IF
    NOT EXISTS: files written before migrations were kept have both tables already.)"""
    db.execute(
        """
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
    )
    db.execute("CREATE TABLE IF NOT EXISTS pruned (at REAL NOT NULL)")


_LISTED_TASK = """
INSERT INTO tasks (server, profile, task_id, status, ttl_ms, expires_at, first_seen, last_seen,
                   terminal_since, via)
VALUES (?1, ?2, ?3, ?4, ?5, ?6 + ?5 / 1000.0, ?6, ?6, CASE WHEN ?7 THEN ?6 END, 'tasks/list')
ON CONFLICT (server, profile, task_id) DO UPDATE SET
    status = CASE WHEN excluded.last_seen > last_seen THEN excluded.status ELSE status END,
    ttl_ms = CASE WHEN excluded.last_seen > last_seen THEN excluded.ttl_ms ELSE ttl_ms END,
    terminal_since = CASE WHEN excluded.last_seen > last_seen
                          THEN COALESCE(terminal_since, excluded.terminal_since)
                          ELSE terminal_since END,
    first_seen = MIN(first_seen, excluded.first_seen),
    last_seen = MAX(last_seen, excluded.last_seen)
"""
"""A task of an old listing's page: the later sighting gives status and ttl, the earlier one
the first sighting (the ttl counts from it: `expires_at` is set after)."""


def m002_listed_pages_to_rows(db: sqlite3.Connection) -> None:
    """Older versions kept the tasks of `list` as pages (`listed`: a row per page, its tasks a
    JSON `[ids, statuses, ttls]`): each task becomes a row (the later sighting wins), and the
    pages go. A page that is not one (edited by hand) is dropped with them."""
    if not db.execute("SELECT 1 FROM sqlite_master WHERE name = 'listed'").fetchone():
        return
    from mcptask.protocol.tasks import TERMINAL_STATUSES

    rows: list[tuple[object, ...]] = []
    pages = db.execute("SELECT server, profile, seen_at, tasks FROM listed ORDER BY seen_at, page")
    for server, profile, seen_at, text in pages:
        try:
            ids, statuses, ttls = json.loads(text)
            entries = list(zip(ids, statuses, ttls, strict=True))
        except (ValueError, TypeError, RecursionError):
            continue
        rows.extend(
            (server, profile, task_id, status, storable_ttl(ttl), seen_at,
             status in TERMINAL_STATUSES)
            for task_id, status, ttl in entries
            if type(task_id) is type(status) is str and (ttl is None or type(ttl) is int)
        )  # fmt: skip
    db.executemany(_LISTED_TASK, rows)
    db.execute("UPDATE tasks SET expires_at = first_seen + ttl_ms / 1000.0")
    db.execute("DROP TABLE listed")


MIGRATIONS: list[Callable[[sqlite3.Connection], None]] = [m001_tasks, m002_listed_pages_to_rows]


def complete_task_ids(
    environ: Mapping[str, str], identity: ServerIdentity | None, incomplete: str
) -> list[tuple[str, str]]:
    """Recorded task ids starting with `incomplete`, with their last status, for shell
    completion: this server's when known, else every server's (most recently first seen
    first, at most `COMPLETIONS`). Read straight from the file: never creates, writes,
    migrates or fails; no record (or one `open_database` would refuse) means no suggestions."""
    path = state_dir(environ) / FILE_NAME
    if not storable(incomplete):
        return []  # no recorded id holds what the file cannot
    where, params = "", [len(incomplete), incomplete, time.time()]
    if identity is not None:
        where, params = " AND server = ? AND profile = ?", [*params, identity.key, identity.profile]
    # Several servers may hold one id: its latest sighting gives status and first_seen (with
    # MAX, SQLite takes the other columns from the row that has the maximum).
    sql = (
        "SELECT task_id, status, first_seen, MAX(last_seen) FROM tasks"  # noqa: S608
        f" WHERE substr(task_id, 1, ?) = ? AND {UNEXPIRED}{where}"
        " GROUP BY task_id ORDER BY first_seen DESC, task_id LIMIT ?"
    )
    try:
        refuse_unless_own(path.parent, path.parent.stat())
        os.close(own_file(path))
        reading = sqlite3.connect(f"file:{path}?mode=rw", uri=True, timeout=1.0)
        with contextlib.closing(reading) as db:
            rows = db.execute(sql, (*params, COMPLETIONS)).fetchall()
    except (*STORE_ERRORS, StateError):
        return []
    return [(task_id, status) for task_id, status, _, _ in rows]

"""The SQLite file behind the record of known tasks: made private, in WAL mode, written in
short transactions, so that several mcptask processes share it safely."""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from pathlib import Path

from mcptask.store.paths import ensure_private_dir

BUSY_TIMEOUT_SECONDS = 10.0
"""How long a process waits for another one's write to finish (writes take milliseconds)."""
STORE_ERRORS: tuple[type[Exception], ...] = (sqlite3.Error, UnicodeEncodeError)
"""What using the file can raise: SQLite's errors, and text it cannot hold (SQLite keeps
UTF-8, so a lone surrogate, from a server's JSON or an undecodable command line, cannot be
bound)."""


def storable(*texts: str | None) -> bool:
    """Whether SQLite can hold every one of `texts` (None: nothing to hold; see
    `STORE_ERRORS`)."""
    for text in texts:
        if text is None or text.isascii():
            continue  # the usual case, decided in C
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return False
    return True


def open_database(path: Path) -> sqlite3.Connection:
    """The file at `path` (made 0600, its directory 0700), in WAL mode; raises OSError or
    sqlite3.Error."""
    ensure_private_dir(path.parent)
    # Create the file 0600 before SQLite does (it would use the umask); its -wal and -shm
    # files take the database file's mode.
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    if path.stat().st_mode & 0o077:
        path.chmod(0o600)
    db = sqlite3.connect(
        path, timeout=BUSY_TIMEOUT_SECONDS, isolation_level=None, check_same_thread=False
    )
    db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_SECONDS * 1000)}")
    use_wal(db)
    db.execute("PRAGMA synchronous = NORMAL")
    return db


def use_wal(db: sqlite3.Connection) -> None:
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


class Transaction:
    """`BEGIN IMMEDIATE` ... `COMMIT` (rolled back on error): short, so others wait little."""

    def __init__(
        self, db: sqlite3.Connection, lock: threading.Lock, begin: str = "BEGIN IMMEDIATE"
    ) -> None:
        self._db = db
        self._lock = lock
        self._begin = begin

    def __enter__(self) -> sqlite3.Connection:
        self._lock.acquire()
        try:
            self._db.execute(self._begin)
        except BaseException:
            self._lock.release()
            raise
        return self._db

    def __exit__(self, kind: type[BaseException] | None, *rest: object) -> None:
        try:
            self._db.execute("COMMIT" if kind is None else "ROLLBACK")
        finally:
            self._lock.release()

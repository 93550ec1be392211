"""The record's file: its schema as migrations, run once each, and a file written by the
versions that kept listings as pages migrated without losing a task."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from mcptask.store.database import FILE_NAME, MIGRATIONS, complete_task_ids
from tests.unit.store.support import SERVER, Clock, open_record, recorded_tasks, statuses

# The schema of the versions before migrations were kept (`PRAGMA user_version = 1`).
OLD_SCHEMA = """
CREATE TABLE tasks (
    server TEXT NOT NULL, profile TEXT NOT NULL DEFAULT '', task_id TEXT NOT NULL,
    status TEXT NOT NULL, session_id TEXT, ttl_ms INTEGER, expires_at REAL,
    first_seen REAL NOT NULL, last_seen REAL NOT NULL, terminal_since REAL,
    via TEXT NOT NULL, tool TEXT, label TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (server, profile, task_id)
);
CREATE TABLE pruned (at REAL NOT NULL);
CREATE TABLE listed (
    server TEXT NOT NULL, profile TEXT NOT NULL, listing TEXT NOT NULL, page INTEGER NOT NULL,
    started REAL NOT NULL, seen_at REAL NOT NULL, tasks TEXT NOT NULL,
    PRIMARY KEY (server, profile, listing, page)
) WITHOUT ROWID;
PRAGMA user_version = 1;
"""


def old_file(directory: Path, now: float) -> None:
    """A record as the previous version left it: rows, and two listings' pages."""
    with sqlite3.connect(directory / FILE_NAME) as db:
        db.executescript(OLD_SCHEMA)
        db.execute("INSERT INTO pruned (at) VALUES (?)", (now,))
        db.execute(
            "INSERT INTO tasks VALUES (?, '', 'started', 'working', 's-1', NULL, NULL,"
            " ?, ?, NULL, 'tools/call', 'long_job', ?)",
            (SERVER.key, now - 50, now - 50, SERVER.label),
        )
        first = [["started", "a", "b"], ["completed", "working", "working"], [None, 60000, None]]
        pages = [
            ("l1", 0, now - 40, first),
            ("l2", 0, now - 20, [["a", "c"], ["cancelled", "working"], [60000, None]]),
            ("l2", 1, now - 10, "not a page: edited by hand"),
        ]
        for listing, number, seen_at, tasks in pages:
            db.execute(
                "INSERT INTO listed VALUES (?, '', ?, ?, ?, ?, ?)",
                (SERVER.key, listing, number, seen_at - 1, seen_at, json.dumps(tasks)),
            )


def test_a_file_of_the_previous_schema_is_migrated_without_losing_a_task(tmp_path: Path) -> None:
    clock = Clock()
    old_file(tmp_path, clock.now)
    record = open_record(tmp_path, clock)
    known = {task.task_id: task for task in recorded_tasks(record)}
    assert statuses(record) == {
        "started": "completed",  # the page saw it after the row did
        "a": "cancelled",  # the later page wins
        "b": "working",
        "c": "working",
    }
    assert (known["started"].via, known["started"].tool) == ("tools/call", "long_job")
    assert record.sessions() == {"started": "s-1"}
    # the ttl counts from the first sighting (the first page), whichever gave it
    assert known["a"].first_seen == clock.now - 40
    assert known["a"].expires_at == clock.now - 40 + 60
    assert known["a"].via == "tasks/list"
    record.close()
    with sqlite3.connect(tmp_path / FILE_NAME) as db:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
        ran = [name for (name,) in db.execute("SELECT name FROM _migrations ORDER BY rowid")]
    assert "listed" not in tables
    assert ran == [step.__name__ for step in MIGRATIONS]


def test_each_migration_runs_once(tmp_path: Path) -> None:
    clock = Clock()
    recorded_tasks(open_record(tmp_path, clock))  # a new file: every migration runs
    with sqlite3.connect(tmp_path / FILE_NAME) as db:
        db.execute("CREATE TABLE listed (server, profile, seen_at, page, tasks)")  # not again
    recorded_tasks(open_record(tmp_path, clock))
    with sqlite3.connect(tmp_path / FILE_NAME) as db:
        (runs,) = db.execute("SELECT COUNT(*) FROM _migrations").fetchone()
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
    assert runs == len(MIGRATIONS)
    assert "listed" in tables


def test_completion_reads_a_file_not_yet_migrated_without_changing_it(tmp_path: Path) -> None:
    old_file(tmp_path, Clock().now)
    env = {"MCPTASK_STATE_DIR": str(tmp_path)}
    assert complete_task_ids(env, SERVER, "st") == [("started", "working")]
    with sqlite3.connect(tmp_path / FILE_NAME) as db:
        tables = {name for (name,) in db.execute("SELECT name FROM sqlite_master")}
    assert "_migrations" not in tables

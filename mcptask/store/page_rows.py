"""Where a listing's pages meet the per-task rows of the record of known tasks.

- When pages are written, the rows that exist for the same tasks take the pages' sightings
  (status, ttl, last sighting; the earlier first sighting), so that a row never shows an
  older status once the page that had a newer one is replaced or pruned. Most listed tasks
  have no row: they are found with one query per few hundred ids, and only the rows found
  are updated.
- A listing that stopped before its last page becomes rows: those missing are inserted.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence

from mcptask.store.listings import TERMINAL, PageTasks

_Where = tuple[str, str]
LOOKUP_CHUNK = 500
"""Ids per lookup of existing rows (SQLite allows 999 parameters at the least)."""

_PAGE_TO_ROW = """
UPDATE tasks SET
    status = CASE WHEN last_seen < ?3 THEN ?1 ELSE status END,
    ttl_ms = CASE WHEN last_seen < ?3 THEN ?2 ELSE ttl_ms END,
    expires_at = CASE WHEN (CASE WHEN last_seen < ?3 THEN ?2 ELSE ttl_ms END) IS NULL THEN NULL
                      ELSE MIN(first_seen, ?3)
                           + (CASE WHEN last_seen < ?3 THEN ?2 ELSE ttl_ms END) / 1000.0 END,
    terminal_since = CASE WHEN last_seen < ?3 AND ?4 THEN COALESCE(terminal_since, ?3)
                          ELSE terminal_since END,
    first_seen = MIN(first_seen, ?3),
    last_seen = MAX(last_seen, ?3)
WHERE server = ?5 AND profile = ?6 AND task_id = ?7
"""
"""(status, ttl_ms, seen_at, terminal, server, profile, task_id): the page's sighting where
it is the later one; the earlier first sighting either way (the right-hand sides read the
row as it was)."""
_LISTED_ROW = """
INSERT OR IGNORE INTO tasks (server, profile, task_id, status, session_id, ttl_ms, expires_at,
                             first_seen, last_seen, terminal_since, via, tool, label)
VALUES (?5, ?6, ?7, ?1, NULL, ?2, CASE WHEN ?2 IS NULL THEN NULL ELSE ?3 + ?2 / 1000.0 END,
        ?3, ?3, CASE WHEN ?4 THEN ?3 END, 'tasks/list', NULL, ?8)
"""


def pages_to_rows(db: sqlite3.Connection, where: _Where, pages: Iterable[PageTasks]) -> None:
    """The rows of these pages' tasks that exist take the pages' sightings (in order)."""
    has_rows = db.execute(
        "SELECT EXISTS (SELECT 1 FROM tasks WHERE server = ? AND profile = ?)", where
    ).fetchone()[0]
    if not has_rows:
        return
    for page in pages:
        with_rows = _with_rows(db, where, page.task_ids)
        if with_rows:
            db.executemany(
                _PAGE_TO_ROW, [entry for entry in _entries(where, page) if entry[6] in with_rows]
            )


def fold(db: sqlite3.Connection, where: _Where, label: str, pages: Sequence[PageTasks]) -> None:
    """A listing that stopped early becomes rows: existing ones take its sightings, the
    others are made (as first met by `tasks/list`)."""
    pages_to_rows(db, where, pages)
    db.executemany(
        _LISTED_ROW, [(*entry, label) for page in pages for entry in _entries(where, page)]
    )


def _entries(where: _Where, page: PageTasks) -> Iterable[tuple[object, ...]]:
    seen_at = page.seen_at
    for task_id, status, ttl in zip(page.task_ids, page.statuses, page.ttls, strict=True):
        yield (status, ttl, seen_at, status in TERMINAL, *where, task_id)


def _with_rows(db: sqlite3.Connection, where: _Where, task_ids: Sequence[str]) -> set[str]:
    """Which of these tasks have a row."""
    found: set[str] = set()
    for start in range(0, len(task_ids), LOOKUP_CHUNK):
        chunk = task_ids[start : start + LOOKUP_CHUNK]
        marks = ",".join("?" * len(chunk))  # placeholders only: the ids are bound
        sql = f"SELECT task_id FROM tasks WHERE server = ? AND profile = ? AND task_id IN ({marks})"  # noqa: S608
        found.update(str(task_id) for (task_id,) in db.execute(sql, (*where, *chunk)))
    return found

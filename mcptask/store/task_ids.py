"""Recorded task ids for shell completion: read straight from the record's file, without
opening it as `KnownTasks` does (no directory made, no prune, no write)."""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Mapping

from mcptask.store import listings
from mcptask.store.database import STORE_ERRORS, storable
from mcptask.store.identity import ServerIdentity
from mcptask.store.known import FILE_NAME, ROW_COLUMNS, merged_tasks
from mcptask.store.paths import state_dir

COMPLETIONS = 200
"""How many task ids a completion offers at most."""


def complete_task_ids(
    environ: Mapping[str, str], identity: ServerIdentity | None, incomplete: str
) -> list[tuple[str, str]]:
    """Recorded task ids starting with `incomplete`, with their last status, for shell
    completion: this server's when it is known, else every server's (most recently first
    seen first, at most `COMPLETIONS`). Never creates, writes or fails: no record means no
    suggestions."""
    path = state_dir(environ) / FILE_NAME
    if not storable(incomplete) or not path.is_file():
        return []  # no recorded id holds what the file cannot
    where = None if identity is None else (identity.key, identity.profile)
    pattern = incomplete.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    sql = f"SELECT {ROW_COLUMNS} FROM tasks WHERE task_id LIKE ? ESCAPE '\\'"  # noqa: S608
    params: tuple[object, ...] = (pattern,)
    if where is not None:
        sql += " AND server = ? AND profile = ?"
        params += where
    try:
        db = sqlite3.connect(f"file:{path}?mode=rw", uri=True, timeout=1.0)
        try:
            db.execute("BEGIN")  # the rows and the pages from one state of the file
            # Several servers may hold one id: the latest row of any comes last, and wins.
            rows = db.execute(sql + " ORDER BY last_seen", params).fetchall()
            listed = db.execute(
                "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'listed'"
            ).fetchone()  # a record written before listings were kept has no such table
            # Only pages holding an id that starts so: the id's text without its closing quote.
            prefix = listings.id_text(incomplete)[:-1]
            pages = listings.pages(db, where, containing=[prefix]) if listed else []
        finally:
            db.close()
    except STORE_ERRORS:
        return []
    found = merged_tasks(rows, [_starting_with(incomplete, page) for page in pages], time.time())
    return [
        (task.task_id, task.status)
        for task in found
        if task.task_id.startswith(incomplete)  # LIKE ignores the case of ASCII letters
    ][:COMPLETIONS]


def _starting_with(prefix: str, page: listings.PageTasks) -> listings.PageTasks:
    """The page's tasks whose ids start with `prefix` (what is merged, of a large record)."""
    kept = [index for index, task_id in enumerate(page.task_ids) if task_id.startswith(prefix)]
    return listings.PageTasks(
        page.seen_at,
        [page.task_ids[index] for index in kept],
        [page.statuses[index] for index in kept],
        [page.ttls[index] for index in kept],
    )

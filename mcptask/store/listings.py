"""Listings in the record of known tasks: what one `mcptask list` read, kept one row per page.

Recording a listing of 100,000 tasks as per-task rows costs 100,000 upserts (about 5 µs each,
more than the rest of `list` together); as pages it costs one row per page of the server's.
`ServerRecord` (known.py) reads both kinds and merges them, so that nothing else tells them
apart. The rules that keep that merge exact:

- A page holds only tasks without a session to rejoin (the recorder writes the others as
  rows), so a page never binds, keeps or unbinds a session.
- The later sighting of a task wins, a row on a tie (the recorder writes a row in the same
  transaction as a page only when the row's sighting came after the page's); the earlier one
  is its first sighting, which the ttl counts from.
- A listing that reached the server's last page replaces every page of the same server and
  profile seen before it started: a task that a later complete listing no longer has is not
  one the server lists. (A page seen since, by a listing of another process that started
  earlier, stays: it may be newer than this listing's page of the same task.) Rows are never
  replaced so: a task that was got, cancelled or started stays until it is pruned, found
  gone or forgotten; and when pages are written, the rows of the same tasks take their
  sightings (`page_rows`), so no row is left with an older status than a page had.
- A listing that stopped before the last page (a limit, an interruption, an error) is folded
  into rows when its process learns that it stopped, so that only complete listings and the
  one being read stay pages. A process that dies mid-listing leaves its pages, which the next
  complete listing replaces.
- Forgetting a task, or learning that it is gone, takes it off every page it is on.
- A page that is not what this module writes (a file edited by hand) is passed over when
  read and deleted by the next write that rewrites every page (a prune, a forget of more
  than `FEW_IDS` tasks; `forget --all` deletes every page).

Each page's tasks are one JSON value, `[ids, statuses, ttls]` (three arrays of equal length):
readable by any SQLite tool, and by any later Python, unlike a pickle or marshal.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import NamedTuple

SCHEMA = """
CREATE TABLE IF NOT EXISTS listed (
    server TEXT NOT NULL,
    profile TEXT NOT NULL,
    listing TEXT NOT NULL,
    page INTEGER NOT NULL,
    started REAL NOT NULL,
    seen_at REAL NOT NULL,
    tasks TEXT NOT NULL,
    PRIMARY KEY (server, profile, listing, page)
) WITHOUT ROWID
"""


class Listing(NamedTuple):
    """One reading of a server's pages: its id, and when it started (record time)."""

    listing_id: str
    started: float


class ListedPage(NamedTuple):
    """One page of a listing, to be written: its number in the listing, and its tasks."""

    listing: Listing
    number: int
    task_ids: Sequence[str]
    statuses: Sequence[str]
    ttls: Sequence[int | None]


class PageTasks(NamedTuple):
    """One stored page as read back: when it was seen, and its tasks."""

    seen_at: float
    task_ids: list[str]
    statuses: list[str]
    ttls: list[int | None]


_Where = tuple[str, str]
"""(server key, profile)."""
_Keep = Callable[[str, str, "int | None", float], bool]
"""Whether a page keeps a task: (task id, status, ttl ms, when the page was seen)."""


def encode(page: ListedPage) -> str:
    """A page's tasks as the stored JSON text."""
    return _as_json(page.task_ids, page.statuses, page.ttls)


def _as_json(*columns: Sequence[object]) -> str:
    return json.dumps(columns, separators=(",", ":"))


def decode(seen_at: object, text: object) -> PageTasks:
    """A stored page; ValueError when it is not one."""
    try:
        value = json.loads(str(text))
    except RecursionError:  # nested too deep to parse (a file edited by hand)
        raise ValueError("not a recorded page: nested too deep") from None
    if (
        not isinstance(seen_at, float)
        or not isinstance(value, list)
        or len(value) != 3
        or not all(isinstance(column, list) for column in value)
        or not len(value[0]) == len(value[1]) == len(value[2])
        or not {*map(type, value[0]), *map(type, value[1])} <= _TEXT
        or not set(map(type, value[2])) <= _TTL
        or any(ttl is not None and not 0 <= ttl <= MAX_TTL_MS for ttl in value[2])
    ):
        raise ValueError("not a recorded page: three arrays of ids, statuses and ttls")
    return PageTasks(seen_at, *value)


_TEXT = {str}
_TTL = {int, type(None)}
TERMINAL = frozenset(("completed", "failed", "cancelled"))
FEW_IDS = 100
"""Up to how many ids a rewrite reads only the pages that hold them (one test per id)."""
MAX_TTL_MS = 2**63 - 1
"""The largest ttl kept (SQLite's largest integer); a larger or negative one is kept as no
ttl (None: it expires by no ttl), which is what so long a ttl means anyway."""


def storable_ttl(ttl: int | None) -> int | None:
    """A server's ttl as the record keeps it (see `MAX_TTL_MS`)."""
    return ttl if ttl is None or 0 <= ttl <= MAX_TTL_MS else None


def write_pages(
    db: sqlite3.Connection, where: _Where, pages: Sequence[tuple[ListedPage, float]]
) -> list[PageTasks]:
    """Store pages, each as seen at its time (a page written again replaces itself); returns
    them as they read back."""
    written = [
        PageTasks(seen_at, list(page.task_ids), list(page.statuses), list(page.ttls))
        for page, seen_at in pages
    ]
    rows = [
        (*where, page.listing.listing_id, page.number, page.listing.started, seen_at)
        for page, seen_at in pages
    ]
    db.executemany(
        "INSERT OR REPLACE INTO listed (server, profile, listing, page, started, seen_at, tasks)"
        " VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(*row, encode(page)) for row, (page, _) in zip(rows, pages, strict=True)],
    )
    return written


def complete(db: sqlite3.Connection, where: _Where, listing: Listing) -> None:
    """`listing` reached the last page: drop the other listings' pages seen before it
    started."""
    db.execute(
        "DELETE FROM listed WHERE server = ? AND profile = ? AND seen_at < ? AND listing != ?",
        (*where, listing.started, listing.listing_id),
    )


def pages(
    db: sqlite3.Connection,
    where: _Where | None,
    listing_id: str | None = None,
    *,
    containing: Sequence[str] = (),
) -> list[PageTasks]:
    """The stored pages of a server (None: of every server; of one listing, if given; that
    hold one of the texts `containing`, if any, see `id_text`), oldest sighting first."""
    sql, params = _selecting("SELECT seen_at, tasks FROM listed", where, containing)
    if listing_id is not None:
        sql += " AND listing = ?"
        params += (listing_id,)
    found = []
    for seen_at, text in db.execute(sql + " ORDER BY seen_at, page", params):
        with contextlib.suppress(ValueError):  # not a page: passed over, see above
            found.append(decode(seen_at, text))
    return found


def id_text(task_id: str) -> str:
    """How a page's text holds `task_id`: a page without this text cannot hold the task,
    and need not be decoded to know it (`encode` writes ids as `json.dumps` does)."""
    return json.dumps(task_id)


def _selecting(
    select: str, where: _Where | None, containing: Sequence[str] = ()
) -> tuple[str, tuple[object, ...]]:
    params: tuple[object, ...] = () if where is None else where
    sql = select + (" WHERE 1" if where is None else " WHERE server = ? AND profile = ?")
    if containing:
        sql += " AND (" + " OR ".join(["instr(tasks, ?) > 0"] * len(containing)) + ")"
        params += tuple(containing)
    return sql, params


def take_listing(db: sqlite3.Connection, where: _Where, listing_id: str) -> list[PageTasks]:
    """The pages of a listing that stopped early, removed (the caller folds them into rows)."""
    taken = pages(db, where, listing_id)
    db.execute(
        "DELETE FROM listed WHERE server = ? AND profile = ? AND listing = ?",
        (*where, listing_id),
    )
    return taken


def drop_tasks(db: sqlite3.Connection, where: _Where | None, task_ids: Iterable[str]) -> None:
    """Take these tasks off every page of a server (None: of every server). For a few
    tasks (one gone, a few forgotten), only the pages that can hold them are read."""
    unwanted = set(task_ids)
    if unwanted:
        few = [id_text(task_id) for task_id in unwanted] if len(unwanted) <= FEW_IDS else []
        _rewrite(db, where, lambda task_id, *_: task_id not in unwanted, containing=few)


def prune(db: sqlite3.Connection, now: float, *, retention: float, stale: float) -> None:
    """Drop pages nobody has seen for `stale` seconds, and take off the others the tasks past
    their ttl (counted from that page's sighting: no later than from the first) and the
    tasks terminal on a page older than `retention`."""
    db.execute("DELETE FROM listed WHERE seen_at < ?", (now - stale,))

    def keep(task_id: str, status: str, ttl: int | None, seen_at: float) -> bool:
        if ttl is not None and seen_at + ttl / 1000.0 < now:
            return False
        return not (status in TERMINAL and seen_at < now - retention)

    _rewrite(db, None, keep)


def _rewrite(
    db: sqlite3.Connection, where: _Where | None, keep: _Keep, containing: Sequence[str] = ()
) -> None:
    """Rewrite the pages that lose a task by `keep` (of those holding one of the texts
    `containing`, if any); delete those left empty."""
    sql, params = _selecting(
        "SELECT server, profile, listing, page, seen_at, tasks FROM listed", where, containing
    )
    changed: list[tuple[object, ...]] = []
    emptied: list[tuple[object, ...]] = []
    for server, profile, listing_id, number, seen_at, text in db.execute(sql, params).fetchall():
        key = (server, profile, listing_id, number)
        try:
            page = decode(seen_at, text)
        except ValueError:
            emptied.append(key)
            continue
        kept = [
            entry
            for entry in zip(page.task_ids, page.statuses, page.ttls, strict=True)
            if keep(*entry, page.seen_at)
        ]
        if len(kept) == len(page.task_ids):
            continue
        if not kept:
            emptied.append(key)
            continue
        ids, statuses, ttls = zip(*kept, strict=True)
        changed.append((_as_json(ids, statuses, ttls), *key))
    db.executemany(
        "UPDATE listed SET tasks = ? WHERE server = ? AND profile = ? AND listing = ? AND page = ?",
        changed,
    )
    db.executemany(
        "DELETE FROM listed WHERE server = ? AND profile = ? AND listing = ? AND page = ?",
        emptied,
    )

"""Order many pieces of text by an integer key in bounded memory.

`list` prints newest first, which needs every page before the first line. Holding every
task until then makes memory grow with the server's store; instead the pieces (already
rendered lines) are gathered in memory up to `RUN_SIZE`, and beyond that handed to SQLite (the
standard library's), in a private temporary database that SQLite deletes when it is closed:
its sort spills to disk within a bounded page cache. The result is exactly that of a stable
`sorted(..., reverse=True)` on the key: largest key first, ties in arrival order.
"""

from __future__ import annotations

import heapq
import sqlite3
from collections.abc import Iterator
from operator import itemgetter

from mcptask.errors import UsageError

RUN_SIZE = 2048
"""Pieces held in memory at most (a few hundred kilobytes of rendered tasks)."""
CACHE_KIB = 512
"""SQLite's page cache for the sort, in KiB: what it holds in memory before using its files
(bench/list_memory.py: 2048 put the peak RSS at 100,000 tasks 1.34x that at 1,000; 512: 1.29x)."""
FETCH = 512
"""Rows read back at a time."""

_BY_KEY = itemgetter(0)


class SortedRuns:
    """Pieces added with `add`, given back by `merged` largest key first (stably). Keys are
    signed 64-bit integers (microseconds span any datetime 30 times over).

    With `limit`, only the first `limit` pieces are kept: a small limit never touches the
    disk. Use as a context manager, so that the temporary database is closed.
    """

    def __init__(self, *, limit: int | None = None, run_size: int | None = None) -> None:
        self._limit = limit
        self._run_size = max(2, RUN_SIZE if run_size is None else run_size)
        self._pending: list[tuple[int, str]] = []
        self._db: sqlite3.Connection | None = None
        self._added = 0

    def __enter__(self) -> SortedRuns:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def spilled(self) -> bool:
        """Whether pieces went to the temporary database (else all are in memory)."""
        return self._db is not None

    def close(self) -> None:
        """Drop the temporary database (SQLite removes its file: nothing is left behind)."""
        if self._db is not None:
            self._db.close()
            self._db = None

    def add(self, key: int, text: str) -> None:
        """One piece, after every piece added before it."""
        self._pending.append((key, text))
        if len(self._pending) >= self._run_size:
            self._settle()

    def merged(self) -> Iterator[str]:
        """Every piece (at most `limit`), largest key first, equal keys in arrival order."""
        if self._db is None:
            self._pending.sort(key=_BY_KEY, reverse=True)
            yield from (text for _, text in self._pending[: self._limit])
            return
        self._spill()
        try:
            rows = self._db.execute(
                "SELECT text FROM pieces ORDER BY key DESC, arrival LIMIT ?",
                (-1 if self._limit is None else self._limit,),
            )
            while batch := rows.fetchmany(FETCH):
                for (text,) in batch:
                    yield bytes(text).decode("utf-8", "surrogatepass")
        except sqlite3.Error as exc:
            raise _cannot_sort(exc) from None

    # -- internals ------------------------------------------------------------------------------

    def _settle(self) -> None:
        """Memory is full: cut to a small limit and stay in memory, else hand over to SQLite."""
        if self._limit is not None and self._limit <= self._run_size // 2:
            # The pieces kept came before any added later, so a later stable sort still
            # puts them first among equals.
            self._pending = heapq.nlargest(self._limit, self._pending, key=_BY_KEY)
            return
        self._spill()

    def _spill(self) -> None:
        pieces, self._pending = self._pending, []
        try:
            if self._db is None:
                # "": a private database in a temporary file, deleted on close. The file is
                # scratch: no journal, no syncing.
                self._db = sqlite3.connect("", isolation_level=None)
                self._db.executescript(
                    f"PRAGMA cache_size = -{CACHE_KIB}; PRAGMA journal_mode = OFF;"
                    " PRAGMA synchronous = OFF; PRAGMA temp_store = FILE;"
                    " CREATE TABLE pieces (key INTEGER, arrival INTEGER, text BLOB);"
                )
            first = self._added
            self._added += len(pieces)
            self._db.execute("BEGIN")
            self._db.executemany(
                "INSERT INTO pieces VALUES (?, ?, ?)",
                (
                    # Bytes: text read from a server may hold lone surrogates.
                    (key, first + offset, text.encode("utf-8", "surrogatepass"))
                    for offset, (key, text) in enumerate(pieces)
                ),
            )
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise _cannot_sort(exc) from None


def _cannot_sort(exc: sqlite3.Error) -> UsageError:
    return UsageError(
        f"cannot sort the list newest first in a temporary file (TMPDIR names where): {exc}; "
        "--order server prints the server's order without one"
    )

"""Order many pieces of text by an integer key in bounded memory.

`list` prints newest first, which needs every page before the first line. Holding every
task until then makes memory grow with the server's store; instead the pieces (already
rendered lines) are gathered in memory up to `RUN_SIZE`, and each full run is sorted there
and written to a private temporary file (deleted when closed). At the end the runs are
merged (`heapq.merge`), each read back a chunk of `CHUNK` pieces at a time, so memory holds
one chunk per run. The result is exactly that of a stable `sorted(..., reverse=True)` on
the key: largest key first, ties in arrival order (a run sorts stably, and the merge takes
the earlier run first among equals).

The file holds `marshal` chunks (lists of `(key, text)`): written and read by this process
only, in C, and text keeps what a server sent, lone surrogates included. (An SQLite temp
table did this before: 4.4 µs a task with its key, now 2.3; at 100,000 tasks `list -o jsonl`
went from 2.8x to 2.3x the raw script's CPU in `bench/list_memory.py`, memory as flat.)
"""

from __future__ import annotations

import contextlib
import heapq
import itertools
import marshal
import tempfile
from collections.abc import Iterator
from operator import itemgetter
from typing import IO

from mcptask.errors import UsageError

RUN_SIZE = 2048
"""Pieces held in memory at most (a few hundred kilobytes of rendered tasks)."""
CHUNK = 128
"""Pieces per chunk of a run on disk: what the merge holds of each run."""

_BY_KEY = itemgetter(0)
_Piece = tuple[int, str]


class SortedRuns:
    """Pieces added with `add`, given back by `merged` largest key first (stably).

    With `limit`, only the first `limit` pieces are kept: a small limit never touches the
    disk. Use as a context manager, so that the temporary file is closed.
    """

    def __init__(self, *, limit: int | None = None, run_size: int | None = None) -> None:
        self._limit = limit
        self._run_size = max(2, RUN_SIZE if run_size is None else run_size)
        self._pending: list[_Piece] = []
        self._file: IO[bytes] | None = None
        self._runs: list[list[int]] = []
        """Per run on disk: the file offset of each of its chunks."""

    def __enter__(self) -> SortedRuns:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def spilled(self) -> bool:
        """Whether pieces went to the temporary file (else all are in memory)."""
        return self._file is not None

    def close(self) -> None:
        """Drop the temporary file (nothing is left behind)."""
        if self._file is not None:
            # Scratch: a failure to close it must not hide what ended the listing.
            with contextlib.suppress(OSError):
                self._file.close()
            self._file = None

    def add(self, key: int, text: str) -> None:
        """One piece, after every piece added before it."""
        self._pending.append((key, text))
        if len(self._pending) >= self._run_size:
            self._settle()

    def merged(self) -> Iterator[str]:
        """Every piece (at most `limit`), largest key first, equal keys in arrival order."""
        self._pending.sort(key=_BY_KEY, reverse=True)  # stable: ties keep arrival order
        if self._file is None:
            yield from (text for _, text in self._pending[: self._limit])
            return
        runs = [self._read_run(offsets) for offsets in self._runs]
        pieces = heapq.merge(*runs, iter(self._pending), key=_BY_KEY, reverse=True)
        yield from (text for _, text in itertools.islice(pieces, self._limit))

    # -- internals ------------------------------------------------------------------------------

    def _settle(self) -> None:
        """Memory is full: cut to a small limit and stay in memory, else write a run."""
        if self._limit is not None and self._limit <= self._run_size // 2:
            # The pieces kept came before any added later, so a later stable sort still
            # puts them first among equals.
            self._pending = heapq.nlargest(self._limit, self._pending, key=_BY_KEY)
            return
        run, self._pending = self._pending, []
        run.sort(key=_BY_KEY, reverse=True)
        if self._limit is not None:
            del run[self._limit :]  # no more of a run can come out (ties keep arrival order)
        try:
            if self._file is None:
                # Kept open across calls, closed by close(): no `with` can hold it.
                self._file = tempfile.TemporaryFile()  # noqa: SIM115
            file = self._file
            file.seek(0, 2)
            offsets = []
            for start in range(0, len(run), CHUNK):
                offsets.append(file.tell())
                marshal.dump(run[start : start + CHUNK], file)
            file.flush()  # a full disk says so here, as "cannot sort", not at close
            self._runs.append(offsets)
        except OSError as exc:
            raise _cannot_sort(exc) from None

    def _read_run(self, offsets: list[int]) -> Iterator[_Piece]:
        file = self._file
        assert file is not None
        for offset in offsets:
            try:
                file.seek(offset)
                # Our own scratch file, written above by this process: not untrusted data.
                chunk: list[_Piece] = marshal.load(file)  # noqa: S302
            except (OSError, EOFError, ValueError) as exc:
                raise _cannot_sort(exc) from None
            yield from chunk


def _cannot_sort(exc: Exception) -> UsageError:
    return UsageError(
        f"cannot sort the list newest first in a temporary file (TMPDIR names where): {exc}; "
        "--order server prints the server's order without one"
    )

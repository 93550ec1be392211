"""Order many pieces of text by an integer key in bounded memory: an external merge sort.

`list` prints newest first, which needs every page before the first line. Holding every
task until then makes memory grow with the server's store; instead the pieces (already
rendered lines) are gathered in runs of `RUN_SIZE`, each run sorted and written to one
unnamed temporary file, and the runs are merged at the end. The result is exactly that of a
stable `sorted(..., reverse=True)` on the key: largest key first, ties in arrival order.
"""

from __future__ import annotations

import heapq
import os
import struct
import tempfile
from collections.abc import Iterator
from operator import itemgetter
from typing import IO

from mcptask.errors import UsageError

RUN_SIZE = 2048
"""Pieces held in memory at most (a few hundred kilobytes of rendered tasks)."""
READ_BUDGET = 1 << 21
"""Bytes of read buffers shared by the runs while merging (each gets at least MIN_READ)."""
MIN_READ = 4096

_HEADER = struct.Struct("<qI")  # the key, then the byte length of the text
_BY_KEY = itemgetter(0)


class SortedRuns:
    """Pieces added with `add`, given back by `merged` largest key first (stably). Keys are
    signed 64-bit integers (microseconds span any datetime 30 times over).

    With `limit`, only the first `limit` pieces are kept: a small limit never touches the
    disk. Use as a context manager, so that the temporary file is closed.
    """

    def __init__(self, *, limit: int | None = None, run_size: int | None = None) -> None:
        self._limit = limit
        self._run_size = max(2, RUN_SIZE if run_size is None else run_size)
        self._pending: list[tuple[int, str]] = []
        self._file: IO[bytes] | None = None
        self._runs: list[tuple[int, int]] = []  # (start, end) offsets in the file

    def __enter__(self) -> SortedRuns:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def close(self) -> None:
        """Drop the temporary file (it has no name: nothing is left behind in any case)."""
        if self._file is not None:
            self._file.close()
            self._file = None

    def add(self, key: int, text: str) -> None:
        """One piece, after every piece added before it."""
        self._pending.append((key, text))
        if len(self._pending) >= self._run_size:
            self._settle()

    def merged(self) -> Iterator[str]:
        """Every piece (at most `limit`), largest key first, equal keys in arrival order."""
        self._pending.sort(key=_BY_KEY, reverse=True)
        if not self._runs:
            yield from (text for _, text in self._pending[: self._limit])
            return
        self._spill()
        assert self._file is not None
        fileno = self._file.fileno()
        chunk = max(MIN_READ, READ_BUDGET // len(self._runs))
        # Heap entries are (-key, run number, text, records): the run number breaks ties
        # in arrival order (runs were cut in arrival order), and no two entries tie on it.
        heap: list[tuple[int, int, str, Iterator[tuple[int, str]]]] = []
        for number, (start, end) in enumerate(self._runs):
            records = _records(fileno, start, end, chunk)
            for key, text in records:
                heap.append((-key, number, text, records))
                break
        heapq.heapify(heap)
        left = self._limit
        while heap and (left is None or left > 0):
            _, number, text, records = heap[0]
            yield text
            if left is not None:
                left -= 1
            following = next(records, None)
            if following is None:
                heapq.heappop(heap)
            else:
                heapq.heapreplace(heap, (-following[0], number, following[1], records))

    # -- internals ------------------------------------------------------------------------------

    def _settle(self) -> None:
        """A full run: sorted, then kept in memory cut to a small limit, else written out."""
        self._pending.sort(key=_BY_KEY, reverse=True)
        if self._limit is not None and self._limit <= self._run_size // 2:
            # The pieces kept came before any added later, so a later stable sort still
            # puts them first among equals.
            del self._pending[self._limit :]
            return
        self._spill()

    def _spill(self) -> None:
        pieces = self._pending[: self._limit]
        self._pending = []
        if not pieces:
            return
        data = b"".join(
            _HEADER.pack(key, len(encoded)) + encoded
            for key, encoded in (
                (key, text.encode("utf-8", "surrogatepass")) for key, text in pieces
            )
        )
        try:
            if self._file is None:
                self._file = tempfile.TemporaryFile()  # noqa: SIM115 - closed by close()
            start = self._file.seek(0, os.SEEK_END)
            self._file.write(data)
            self._file.flush()
        except OSError as exc:
            raise UsageError(
                f"cannot write the temporary file that sorts the list newest first "
                f"(in {tempfile.gettempdir()}): {exc.strerror or exc}; "
                "--order server prints the server's order without one"
            ) from None
        self._runs.append((start, start + len(data)))


def _records(fileno: int, start: int, end: int, chunk: int) -> Iterator[tuple[int, str]]:
    """The (key, text) records of one run, read `chunk` bytes at a time."""
    buffer = b""
    at = 0
    offset = start
    header = _HEADER.size
    while True:
        if len(buffer) - at >= header:
            key, length = _HEADER.unpack_from(buffer, at)
            stop = at + header + length
            if stop <= len(buffer):
                yield key, buffer[at + header : stop].decode("utf-8", "surrogatepass")
                at = stop
                continue
            wanted = stop - len(buffer)
        else:
            wanted = header
        if offset >= end:
            return
        more = os.pread(fileno, min(end - offset, max(chunk, wanted)), offset)
        if not more:
            return
        offset += len(more)
        buffer = buffer[at:] + more
        at = 0

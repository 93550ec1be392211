"""`list -o jsonl|ids|json` printed as the pages come, in memory that does not grow with the
list: byte for byte what `ListView` prints from the whole list (tests/unit/test_list_stream.py).

- The server's order: each page is printed as it arrives (one write and one flush per page),
  so that a reader sees the first tasks at once and `| head` stops the listing. `-o json`
  is one document: it is gathered in a temporary file and printed whole at the end, so that
  a failure half way never leaves half a document on stdout.
- Newest first: the order is known only after the last page, so nothing is printed before it.
  Each task is rendered as it comes and handed to `SortedRuns`, which keeps a few thousand
  in memory and writes the rest, sorted in runs, to a temporary file to merge at the end.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Iterator
from typing import IO

from mcptask.output.json_text import compact, indented_object
from mcptask.output.sanitize import clean
from mcptask.output.screen import Screen
from mcptask.output.sorted_runs import SortedRuns
from mcptask.output.views.list_tasks import STREAMING_FORMATS
from mcptask.protocol import Task

WRITE_SIZE = 1 << 16
"""Characters gathered before each write while printing sorted or gathered output."""
SPOOL_SIZE = 1 << 20
"""A gathered `-o json` document stays in memory up to this size, then goes to disk."""

_JSON_HEAD = '{\n  "tasks": ['
# The document `json.dumps(..., indent=2)` writes: each task indented two levels (4 spaces).
_MARGIN = "    "


class ListStream:
    """Prints tasks in one of the streaming formats (`jsonl`, `ids`, `json`).

    `sort_key`: print largest key first (newest first), after the last page; None: the
    server's order, page by page. `limit`: at most this many tasks (of the sorted order; in
    the server's order the pages are cut to it already).
    """

    def __init__(
        self,
        screen: Screen,
        *,
        sort_key: Callable[[Task], int] | None,
        limit: int | None = None,
    ) -> None:
        if screen.format not in STREAMING_FORMATS:
            raise ValueError(f"{screen.format} output does not stream")
        self.screen = screen
        self._sort_key = sort_key
        self._limit = limit
        self._json = screen.format == "json"
        self._render: Callable[[Task], str] = {
            "jsonl": _jsonl_line,
            "ids": _id_line,
            "json": _json_item,
        }[screen.format]
        self.listed = 0
        """Tasks given so far (after the status filter)."""
        self.printed = 0
        """Tasks whose output has reached stdout."""

    def write(self, pages: Iterable[list[Task]]) -> None:
        """Print every task of `pages` in the chosen order; stops early when stdout's reader
        has gone. An error from `pages` propagates: what was printed stays printed (see
        `printed`)."""
        if self._sort_key is not None:
            self._sorted(pages, self._sort_key)
        elif self._json:
            self._gathered(pages)
        else:
            self._paged(pages)

    # -- the three ways ------------------------------------------------------------------------

    def _paged(self, pages: Iterable[list[Task]]) -> None:
        render = self._render
        for page in pages:
            self.listed += len(page)
            if page:
                self.screen.text("".join([render(task) for task in page]))
                self.printed += len(page)
            if self.screen.reader_gone:
                return

    def _gathered(self, pages: Iterable[list[Task]]) -> None:
        with tempfile.SpooledTemporaryFile(
            max_size=SPOOL_SIZE, mode="w+", encoding="utf-8"
        ) as spool:
            for page in pages:
                for task in page:
                    spool.write(("\n" if self.listed == 0 else ",\n") + self._render(task))
                    self.listed += 1
            spool.seek(0)
            self._print(_document(self.listed, _chunks(spool)), self.listed)

    def _sorted(self, pages: Iterable[list[Task]], sort_key: Callable[[Task], int]) -> None:
        render = self._render
        with SortedRuns(limit=self._limit) as runs:
            for page in pages:
                self.listed += len(page)
                for task in page:
                    runs.add(sort_key(task), render(task))
            count = self.listed if self._limit is None else min(self.listed, self._limit)
            pieces: Iterator[str] = runs.merged()
            if self._json:
                pieces = _document(count, _separated(pieces))
            self._print(pieces, count)

    def _print(self, pieces: Iterable[str], count: int) -> None:
        """Write `pieces` in writes of about WRITE_SIZE; `count` tasks are in them."""
        batch: list[str] = []
        size = 0
        for piece in pieces:
            batch.append(piece)
            size += len(piece)
            if size >= WRITE_SIZE:
                self.screen.text("".join(batch))
                batch, size = [], 0
                if self.screen.reader_gone:
                    return
        if batch:
            self.screen.text("".join(batch))
        self.printed = count


def _jsonl_line(task: Task) -> str:
    return compact(task.to_wire()) + "\n"


def _id_line(task: Task) -> str:
    return clean(task.taskId) + "\n"


def _json_item(task: Task) -> str:
    return _MARGIN + indented_object(task.to_wire(), _MARGIN)


def _separated(items: Iterator[str]) -> Iterator[str]:
    """The items of the document's task array, each after its separator."""
    first = True
    for item in items:
        yield ("\n" if first else ",\n") + item
        first = False


def _document(count: int, items: Iterable[str]) -> Iterator[str]:
    """The `list -o json` document around the (separated) items of its task array."""
    yield _JSON_HEAD
    empty = True
    for item in items:
        empty = False
        yield item
    yield ("]" if empty else "\n  ]") + f',\n  "count": {count}\n}}\n'


def _chunks(spool: IO[str]) -> Iterator[str]:
    while chunk := spool.read(WRITE_SIZE):
        yield chunk

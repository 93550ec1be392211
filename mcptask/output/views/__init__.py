"""One view per command, or per group of small commands: it shows the command's result in
the chosen output format, chosen once here (`View`), not in the commands."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar, Generic, TypeVar

from mcptask.errors import UsageError
from mcptask.output.sanitize import clean
from mcptask.output.screen import OUTPUT_FORMATS, OutputFormat, Screen

Shown = TypeVar("Shown")


class View(Generic[Shown]):
    """Shows one command's result as a table, a JSON document, JSON lines or ids: `show`
    picks `table`, `document`, `jsonl` (by default the `lines`) or `ids` by the format, which
    is refused at construction (before anything is sent) when the command has no use for it.
    """

    command: ClassVar[str]
    formats: ClassVar[tuple[OutputFormat, ...]] = OUTPUT_FORMATS

    def __init__(self, screen: Screen) -> None:
        if screen.format not in self.formats:
            *first, last = self.formats
            raise UsageError(
                f"{self.command} has no {screen.format} output; use -o {', '.join(first)} or {last}"
            )
        self.screen = screen

    def show(self, shown: Shown) -> None:
        if self.screen.format == "ids":
            self.screen.text(self.screen.id_lines(self.ids(shown)))
        elif self.screen.format == "jsonl":
            self.jsonl(shown)
        elif self.screen.format == "json":
            self.screen.json(self.document(shown))
        else:
            self.table(shown)

    def table(self, shown: Shown) -> None:
        raise NotImplementedError

    def document(self, shown: Shown) -> object:
        raise NotImplementedError

    def lines(self, shown: Shown) -> Iterable[object]:
        """The JSON lines of `-o jsonl` (default: the document on one line)."""
        return [self.document(shown)]

    def ids(self, shown: Shown) -> Iterable[str]:
        raise NotImplementedError

    def jsonl(self, shown: Shown) -> None:
        for line in self.lines(shown):
            self.screen.json_line(line)

    def unrefreshed(self, errors: dict[str, str]) -> None:
        """`--known`: recorded tasks whose tasks/get failed otherwise (kept recorded)."""
        for task_id, message in errors.items():
            self.screen.warn(f"{task_id}: could not be refreshed: server error: {message}")

    def gone(self, task_ids: list[str]) -> None:
        """`--known`: recorded tasks the server no longer knows, now forgotten (stderr)."""
        if task_ids:
            count = len(task_ids)
            self.screen.warn(
                f"{count} recorded task{'s' if count != 1 else ''} no longer known to the server "
                "(expired, purged, or their session ended), now forgotten: "
                + ", ".join(clean(task_id) for task_id in task_ids)
            )

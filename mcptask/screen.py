"""The two output streams: stdout for results only; stderr for messages, prompts, progress.

Kept apart from the views so that reporting an error imports no more than Rich.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from typing import IO, Literal

from rich.console import Console
from rich.text import Text

from mcptask.sanitize import clean

OutputFormat = Literal["table", "json", "jsonl", "ids"]
OUTPUT_FORMATS: tuple[str, ...] = ("table", "json", "jsonl", "ids")


class Screen:
    """The two output streams, their consoles and the chosen output format."""

    def __init__(
        self,
        output_format: str | None,
        *,
        color: bool = True,
        stdout: IO[str] | None = None,
        stderr: IO[str] | None = None,
    ) -> None:
        self.stdout = stdout or sys.stdout
        self.stderr = stderr or sys.stderr
        no_color = None if color else True
        self.out = Console(file=self.stdout, no_color=no_color, highlight=False, soft_wrap=False)
        self.err = Console(file=self.stderr, no_color=no_color, highlight=False, soft_wrap=True)
        self.format: OutputFormat = resolve_format(output_format, self.out.is_terminal)

    # -- plain streams --------------------------------------------------------------------------

    def json(self, document: object) -> None:
        """One JSON document on stdout."""
        self.stdout.write(json.dumps(document, indent=2) + "\n")
        self.stdout.flush()

    def json_line(self, document: object) -> None:
        """One JSON object on one line of stdout, flushed at once (for streaming consumers)."""
        self.stdout.write(json.dumps(document, separators=(",", ":")) + "\n")
        self.stdout.flush()

    def ids(self, task_ids: Iterable[str]) -> None:
        """One id per line on stdout."""
        for task_id in task_ids:
            self.stdout.write(clean(task_id) + "\n")
        self.stdout.flush()

    # -- messages on stderr ---------------------------------------------------------------------

    def error(self, message: str) -> None:
        """The one-line error message of a failed command."""
        self.err.print(Text.assemble(("mcptask: error: ", "bold red"), clean(message)))

    def warn(self, message: str) -> None:
        """A one-line warning or note on stderr."""
        self.err.print(Text.assemble(("mcptask: ", "yellow"), clean(message)))

    def note(self, message: str) -> None:
        """Neutral information on stderr."""
        self.err.print(Text(clean(message), style="dim"))


def resolve_format(requested: str | None, is_terminal: bool) -> OutputFormat:
    """The output format: as requested, else a table on a terminal and JSON elsewhere."""
    if requested is None:
        return "table" if is_terminal else "json"
    if requested not in OUTPUT_FORMATS:
        raise ValueError(f"unknown output format {requested!r}; choose {', '.join(OUTPUT_FORMATS)}")
    return requested  # type: ignore[return-value]

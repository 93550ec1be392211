"""The two output streams: stdout for results only; stderr for messages, prompts, progress.
Rich is imported only when something is drawn with it: JSON and ids are written without it."""

from __future__ import annotations

import contextlib
import json
import os
import select
import sys
from collections.abc import Iterable
from functools import cached_property
from typing import IO, TYPE_CHECKING, Literal, get_args

from mcptask.output.sanitize import clean, safe_word

if TYPE_CHECKING:
    from rich.console import Console

OutputFormat = Literal["table", "json", "jsonl", "ids"]
OUTPUT_FORMATS: tuple[OutputFormat, ...] = get_args(OutputFormat)


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
        self._no_color = None if color else True
        # As requested, else a table on a terminal and JSON elsewhere.
        if output_format is None:
            output_format = "table" if _is_terminal(self.stdout) else "json"
        if output_format not in OUTPUT_FORMATS:
            choices = ", ".join(OUTPUT_FORMATS)
            raise ValueError(f"unknown output format {output_format!r}; choose {choices}")
        self.format: OutputFormat = output_format
        self.reader_gone = False
        """True once stdout's reader has gone away (`| head`): nothing more can be shown."""
        self._withheld = False
        self.lead = ""
        """What leads every message on stderr (of one server in a run over several: its name)."""

    @cached_property
    def out(self) -> Console:
        from rich.console import Console

        return Console(file=self.stdout, no_color=self._no_color, highlight=False, soft_wrap=False)

    @cached_property
    def err(self) -> Console:
        from rich.console import Console

        return Console(file=self.stderr, no_color=self._no_color, highlight=False, soft_wrap=True)

    @property
    def err_is_terminal(self) -> bool:
        """Whether stderr is a terminal as Rich sees it, without importing Rich for a plain
        pipe (not a TTY, and neither TTY_COMPATIBLE nor FORCE_COLOR says otherwise)."""
        forced = os.environ.get("TTY_COMPATIBLE") == "1" or bool(os.environ.get("FORCE_COLOR"))
        if not (_is_terminal(self.stderr) or forced):
            return False
        return self.err.is_terminal

    def json(self, document: object) -> None:
        self.text(json.dumps(document, indent=2) + "\n")

    def json_line(self, document: object) -> None:
        """One JSON object on one line of stdout, flushed at once (for streaming consumers)."""
        self.text(compact_json(document))

    def plain_lines(self, texts: Iterable[str]) -> None:
        """Each text `clean`, on a line of its own, exactly: not wrapped, and no `:name:` read
        as an emoji code, as Rich would (an id is copied and pasted whole)."""
        self.text("".join(clean(text) + "\n" for text in texts))

    def id_lines(self, task_ids: Iterable[str]) -> str:
        """The lines of `-o ids`, one id each, leaving out (with one warning on stderr) the
        ids that are not safe as shell words: `cancel $(mcptask list -o ids)` must never
        take server text for an option (`--url=...`) or split it into several words."""
        lines: list[str] = []
        for task_id in task_ids:
            text = clean(task_id)
            if safe_word(text):
                lines.append(text + "\n")
            elif not self._withheld:
                self._withheld = True
                self.warn(
                    f"left task id {text[:100]!r} out of -o ids, and any other id that starts "
                    "with '-' or holds blanks, quotes, backslashes or glob characters: such an "
                    "id is not safe as a shell word (-o json shows every id)"
                )
        return "".join(lines)

    def reader_left(self) -> bool:
        """True when stdout's reader has gone away, known without writing (for watch, which
        writes seldom): a pipe whose reading end is closed polls as an error."""
        # No poll on this system, or no descriptor: not known to have gone.
        with contextlib.suppress(AttributeError, OSError, ValueError):
            if not self.reader_gone:
                poller = select.poll()
                poller.register(self.stdout.fileno(), 0)  # errors and hang-ups only
                self.reader_gone = bool(poller.poll(0))
        return self.reader_gone

    def text(self, text: str) -> None:
        """Write and flush stdout (many lines at once: one write, one flush); a reader that
        went away (`| head`) ends output quietly, any other failure raises OutputFailure."""
        if self.reader_gone:
            return
        try:
            self.stdout.write(text)
            self.stdout.flush()
        except OSError as exc:
            self.reader_gone = True  # nothing more is tried (an error line goes to stderr)
            # Point the descriptor at /dev/null so that the interpreter's final flush of
            # what is still buffered cannot fail again at exit.
            with contextlib.suppress(OSError, ValueError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), self.stdout.fileno())
            if not isinstance(exc, BrokenPipeError):
                from mcptask.errors import OutputFailure

                raise OutputFailure(f"cannot write the output: {exc.strerror or exc}") from None

    def error(self, message: str) -> None:
        self._say(message, ("mcptask: error: ", "bold red"))

    def warn(self, message: str) -> None:
        self._say(message, ("mcptask: ", "yellow"))

    def note(self, message: str) -> None:
        self._say(message, style="dim")

    def _say(self, message: str, prefix: tuple[str, str] = ("", ""), style: str = "") -> None:
        from rich.text import Text

        self.err.print(Text.assemble(prefix, clean(self.lead + message), style=style))


class LabelledScreen(Screen):
    """One server's screen inside a run over several: the run's own streams and consoles,
    its messages on stderr led by the server's name."""

    def __init__(self, screen: Screen, label: str) -> None:
        super().__init__(screen.format, stdout=screen.stdout, stderr=screen.stderr)
        self._screen, self.lead = screen, f"{label}: "

    @property
    def out(self) -> Console:
        return self._screen.out

    @property
    def err(self) -> Console:
        return self._screen.err

    def reader_left(self) -> bool:
        """The run's: once a write found the reader gone, stdout is /dev/null, which a
        poll of this screen's own would not tell."""
        return self._screen.reader_left()


def compact_json(document: object) -> str:
    """`document` as one line of `-o jsonl`."""
    return json.dumps(document, separators=(",", ":")) + "\n"


def _is_terminal(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False

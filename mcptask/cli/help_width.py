"""Help rendered at most 80 columns wide, by the app as by the fast path (`mcptask.help`):
the same page whichever of the two prints it, and lines a reader can follow on a wide
terminal."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

import typer.core
from typer import _click

from mcptask.help import help_columns


@contextlib.contextmanager
def _capped_width() -> Iterator[None]:
    # Typer's Rich help reads its width from this module setting (else the whole terminal);
    # it is set for this page only. Imported here, not above: only a command line that asks
    # for help pays for Rich.
    from typer import rich_utils

    saved = rich_utils.MAX_WIDTH
    rich_utils.MAX_WIDTH = help_columns(os.environ)
    try:
        yield
    finally:
        rich_utils.MAX_WIDTH = saved


class CappedGroup(typer.core.TyperGroup):
    """The app's root: its help at most 80 columns wide."""

    def format_help(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        with _capped_width():
            super().format_help(ctx, formatter)


class CappedCommand(typer.core.TyperCommand):
    """A command: its help at most 80 columns wide."""

    def format_help(self, ctx: _click.Context, formatter: _click.HelpFormatter) -> None:
        with _capped_width():
            super().format_help(ctx, formatter)

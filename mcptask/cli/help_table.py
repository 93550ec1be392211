"""Render every help page of the app into `mcptask/help_pages.json`, which `--help` prints
without importing the app (see `mcptask/help.py`). Generated, committed, and checked against
the app by the tests:

    python -m mcptask.cli.help_table > mcptask/help_pages.json

Each page is kept as Typer draws it 80 columns wide on a colour terminal (Rich's standard
colours); without its SGR sequences it is what a pipe gets.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
from collections.abc import Iterator

import typer.main
from typer import rich_utils

from mcptask.cli.app import app
from mcptask.help import HELP_COLUMNS

OWN_HELP = {"reference-server"}
"""Commands that answer --help themselves (argparse): left to the app."""


def build() -> dict[str, str]:
    """command name ("" for the root) -> its styled page."""
    root = typer.main.get_command(app)
    context = root.make_context("mcptask", [], resilient_parsing=True)
    names = [""] + [
        name
        for name in root.list_commands(context)  # type: ignore[attr-defined]
        if name not in OWN_HELP and not root.get_command(context, name).hidden  # type: ignore[attr-defined]
    ]
    with _columns(HELP_COLUMNS):
        return {name: render_help([name, "--help"] if name else ["--help"]) for name in names}


def render_help(argv: list[str], *, styled: bool = True) -> str:
    """What the app prints for `argv` (a help request) on a colour terminal, or on a pipe."""
    saved = rich_utils.FORCE_TERMINAL, rich_utils.COLOR_SYSTEM
    rich_utils.FORCE_TERMINAL = styled
    rich_utils.COLOR_SYSTEM = "standard" if styled else None
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            app(args=argv, prog_name="mcptask", standalone_mode=False)
    finally:
        rich_utils.FORCE_TERMINAL, rich_utils.COLOR_SYSTEM = saved
    return out.getvalue()


@contextlib.contextmanager
def _columns(columns: int) -> Iterator[None]:
    """Render as on a terminal `columns` wide, whatever this one is."""
    saved = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(columns)
    try:
        yield
    finally:
        if saved is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = saved


def render() -> str:
    """The file `mcptask/help_pages.json`."""
    return json.dumps(build(), indent=1, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())

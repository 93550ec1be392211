"""`--help` without the app: the pages Typer renders, generated into `help_pages.json` and
printed as they are, so that help is as instant as `--version` (Typer, Rich and the command
modules stay unimported).

Help is rendered 80 columns wide, or narrower on a narrower terminal (the app caps it the
same way, see `mcptask.cli.help_width`). A page is served here only where it is exactly what
the app would print: the command line is `[COMMAND] --help` (or `-h`, or nothing at all), the
terminal is at least 80 columns wide (or stdout is not a terminal), and no variable that
changes how Rich draws is set. Anything else goes to the app, which renders the page itself.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # this module runs before every command: only what it needs is imported
    from collections.abc import Mapping
    from typing import TextIO

PAGES_FILE = Path(__file__).with_name("help_pages.json")
HELP_COLUMNS = 80
HELP_FLAGS = ("--help", "-h")
STYLES = re.compile(r"\x1b\[[0-9;]*m")
"""Rich's SGR sequences: a styled page without them is the plain page, to the character."""

RICH_VARIABLES = (
    "NO_COLOR",
    "FORCE_COLOR",
    "PY_COLORS",
    "GITHUB_ACTIONS",
    "TTY_COMPATIBLE",
    "TTY_INTERACTIVE",
    "TERMINAL_WIDTH",
    "_TYPER_FORCE_DISABLE_TERMINAL",
)
"""Variables with which Rich or Typer draw otherwise (forced colours, no colours, a width):
help is then left to the app."""


def help_columns(env: Mapping[str, str]) -> int:
    """The width help is rendered at: 80 columns, or the terminal's when it is narrower."""
    for name in ("TERMINAL_WIDTH", "COLUMNS"):  # Typer's setting, then the shell's
        value = env.get(name, "")
        if value.isdigit() and int(value) > 0:
            return min(int(value), HELP_COLUMNS)
    try:  # as shutil.get_terminal_size does, without importing shutil
        columns = os.get_terminal_size(1).columns or HELP_COLUMNS
    except OSError:  # not a terminal
        columns = HELP_COLUMNS
    return min(columns, HELP_COLUMNS)


def help_page(argv: list[str], env: Mapping[str, str], stdout: TextIO) -> str | None:
    """The page to print for `argv`, or None when the app must render it."""
    if not argv or argv in (["--help"], ["-h"]):
        command = ""
    elif len(argv) == 2 and argv[1] in HELP_FLAGS:
        command = argv[0]
    else:
        return None
    if any(name in env for name in RICH_VARIABLES) or help_columns(env) < HELP_COLUMNS:
        return None
    terminal = stdout.isatty()
    if terminal and env.get("TERM", "") in ("dumb", "unknown"):
        return None
    import json

    pages = json.loads(PAGES_FILE.read_text(encoding="utf-8"))
    page = pages.get(command)
    if not isinstance(page, str):
        return None  # not a command (the app says so), or one with help of its own
    return page if terminal else STYLES.sub("", page)

"""`--help` without the app (`mcptask/help.py`): the generated pages are the app's, and the
fast path serves one only where the app would print exactly that page."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mcptask.cli.help_table import build, render_help
from mcptask.help import PAGES_FILE, STYLES, help_page


class Terminal(io.StringIO):
    """A stdout that says it is a terminal."""

    def isatty(self) -> bool:
        return True


PIPE_ENV = {"COLUMNS": "80", "TERM": "xterm-256color"}


def test_the_pages_are_current_with_the_app() -> None:
    assert json.loads(PAGES_FILE.read_text(encoding="utf-8")) == build(), (
        "regenerate: python -m mcptask.cli.help_table > mcptask/help_pages.json"
    )


def test_a_page_without_its_styles_is_the_plain_page(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    for argv in (["--help"], ["get", "--help"], ["cancel", "--help"]):
        styled = render_help(argv)
        assert styled != STYLES.sub("", styled)  # styled at all
        assert STYLES.sub("", styled) == render_help(argv, styled=False)


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        ([], ""),
        (["--help"], ""),
        (["-h"], ""),
        (["get", "--help"], "get"),
        (["list", "-h"], "list"),
        (["cancel", "--help"], "cancel"),
    ],
)
def test_help_alone_is_served_from_the_pages(argv: list[str], command: str) -> None:
    pages = json.loads(PAGES_FILE.read_text(encoding="utf-8"))
    assert help_page(argv, PIPE_ENV, io.StringIO()) == STYLES.sub("", pages[command])
    assert help_page(argv, PIPE_ENV, Terminal()) == pages[command]


@pytest.mark.parametrize(
    "argv",
    [
        ["--url", "http://x/mcp", "--help"],  # options first: the app merges them
        ["get", "abc", "--help"],
        ["get", "--help", "extra"],
        ["nosuch", "--help"],  # the app says it is not a command
        ["reference-server", "--help"],  # argparse help of its own
        ["--version"],
        ["list"],
    ],
)
def test_anything_else_goes_to_the_app(argv: list[str]) -> None:
    assert help_page(argv, PIPE_ENV, io.StringIO()) is None


@pytest.mark.parametrize(
    "env",
    [
        {"COLUMNS": "79"},  # narrower than the pages: the app wraps to the terminal
        {"COLUMNS": "80", "NO_COLOR": "1"},
        {"COLUMNS": "80", "FORCE_COLOR": "1"},
        {"COLUMNS": "80", "TERMINAL_WIDTH": "100"},
        {"COLUMNS": "80", "GITHUB_ACTIONS": "true"},
    ],
)
def test_a_terminal_or_environment_the_pages_were_not_drawn_for_goes_to_the_app(
    env: dict[str, str],
) -> None:
    assert help_page(["get", "--help"], env, io.StringIO()) is None


def test_a_dumb_terminal_goes_to_the_app() -> None:
    assert help_page(["--help"], {"COLUMNS": "80", "TERM": "dumb"}, Terminal()) is None
    assert help_page(["--help"], {"COLUMNS": "80", "TERM": "dumb"}, io.StringIO()) is not None


def test_a_wide_terminal_gets_the_80_column_page() -> None:
    assert help_page(["--help"], {"COLUMNS": "200"}, Terminal()) is not None


def test_help_imports_neither_typer_nor_httpx_nor_rich(tmp_path: Path) -> None:
    probe = (
        "import sys\n"
        "sys.argv = ['mcptask', 'cancel', '--help']\n"
        "from mcptask.entry import main\n"
        "try:\n    main()\nexcept SystemExit as exit:\n    code = exit.code\n"
        "heavy = sorted(m for m in ('typer', 'httpx', 'rich') if m in sys.modules)\n"
        "print('HEAVY', heavy, 'EXIT', code)\n"
    )
    environment = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        env={**environment, "COLUMNS": "80"},
    )
    assert done.stdout.rstrip().endswith("HEAVY [] EXIT 0")
    assert "Usage: mcptask cancel" in done.stdout

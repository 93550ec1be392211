"""The root is a lazy group: every command is listed, in order, and a command line imports
and builds only the command it names."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer.main

from mcptask.cli.app import COMMANDS, app


def test_the_root_lists_every_command_in_order() -> None:
    root = typer.main.get_command(app)
    context = root.make_context("mcptask", [], resilient_parsing=True)
    assert root.list_commands(context) == list(COMMANDS)  # type: ignore[attr-defined]
    for name in COMMANDS:
        assert root.get_command(context, name).name == name  # type: ignore[attr-defined]
    assert root.get_command(context, "nosuch") is None  # type: ignore[attr-defined]


@pytest.mark.parametrize("argv", [["get", "--help"], ["--url", "http://x/mcp", "get", "--help"]])
def test_a_command_line_imports_only_its_command(argv: list[str]) -> None:
    probe = (
        "import sys\n"
        f"sys.argv = ['mcptask', *{argv!r}]\n"
        "from mcptask.cli.app import run\n"
        "code = run()\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('mcptask.cli.commands.'))\n"
        "print('LOADED', loaded, 'EXIT', code)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.rstrip().endswith("LOADED ['mcptask.cli.commands.one_task'] EXIT 0")


@pytest.mark.parametrize(
    ("line", "loaded"), [("mcptask ", "[]"), ("mcptask cancel ", "['cancel']")]
)
def test_bash_completes_command_names_without_building_commands(line: str, loaded: str) -> None:
    probe = (
        "import os, sys\n"
        f"os.environ.update(_MCPTASK_COMPLETE='complete_bash', COMP_WORDS={line!r})\n"
        f"os.environ['COMP_CWORD'] = '{len(line.split())}'\n"
        "from mcptask.cli.app import run\n"
        "try:\n"
        "    run([])\n"
        "finally:\n"
        "    loaded = sorted(m.rpartition('.')[2] for m in sys.modules\n"
        "                    if m.startswith('mcptask.cli.commands.'))\n"
        "    print('LOADED', loaded)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.rstrip().endswith(f"LOADED {loaded}")

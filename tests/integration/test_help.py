"""The real `mcptask --help`: the same page to the byte on a pipe and on a colour terminal
whatever else the line or the environment holds, at most 80 columns wide on a wide terminal,
wrapped on a narrow one, and no traceback when the reader stops early."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import termios

import pytest

from mcptask.cli.app import COMMANDS as ALL_COMMANDS
from tests.cli_process import mcptask_argv

COMMANDS = [name for name in ALL_COMMANDS if name != "reference-server"]  # argparse's help
APP = {"TERMINAL_WIDTH": "80"}
"""Typer's own width setting (for Rich): help is the same with it as without it."""
STYLES = re.compile(r"\x1b\[[0-9;]*m")
"""SGR sequences (bold, colours)."""


def environment(**extra: str) -> dict[str, str]:
    """This environment without what changes how help is drawn, plus `extra`."""
    drop = ("NO_COLOR", "FORCE_COLOR", "PY_COLORS", "COLUMNS", "TERMINAL_WIDTH", "GITHUB_ACTIONS")
    env = {key: value for key, value in os.environ.items() if key not in drop}
    return {**env, "TERM": "xterm-256color", "COLORTERM": "truecolor", **extra}


def on_pipe(*args: str, **extra: str) -> tuple[int, str, str]:
    done = subprocess.run(
        [*mcptask_argv(), *args], capture_output=True, text=True, env=environment(**extra)
    )
    return done.returncode, done.stdout, done.stderr


def on_terminal(
    *args: str, columns: int = 120, extra: dict[str, str] | None = None
) -> tuple[int, str]:
    """Run with stdout on a pseudo-terminal `columns` wide: (exit code, what it showed)."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    process = subprocess.Popen(
        [*mcptask_argv(), *args],
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=subprocess.DEVNULL,
        env=environment(**(extra or {})),
    )
    os.close(follower)
    shown = bytearray()
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the other side is closed
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    return process.wait(timeout=60), shown.decode().replace("\r\n", "\n")


@pytest.mark.parametrize("command", ["", *COMMANDS])
def test_on_a_pipe_the_page_is_plain_and_at_most_80_wide(command: str) -> None:
    argv = [command, "--help"] if command else ["--help"]
    shown = on_pipe(*argv)
    assert shown == on_pipe(*argv, **APP)
    code, page, errors = shown
    assert (code, errors) == (0, "")
    assert f"Usage: mcptask {command}".rstrip() in page
    assert "\x1b[" not in page
    assert 60 < max(len(line) for line in page.splitlines()) <= 80


@pytest.mark.parametrize("command", COMMANDS)
def test_help_after_options_is_the_same_page(command: str) -> None:
    assert on_pipe(command, "--help") == on_pipe("--protocol", "auto", command, "--help")


def test_on_a_wide_colour_terminal_the_page_is_styled_and_at_most_80_wide() -> None:
    code, shown = on_terminal("get", "--help")
    assert code == 0
    assert "\x1b[" in shown
    assert 60 < max(len(line) for line in STYLES.sub("", shown).splitlines()) <= 80
    assert (code, shown) == on_terminal("--protocol", "auto", "get", "--help")
    assert (code, shown) == on_terminal("get", "--help", extra=APP)
    assert on_terminal("--help") == on_terminal("--help", extra=APP)


def test_a_narrow_terminal_gets_help_wrapped_to_it() -> None:
    code, shown = on_terminal("get", "--help", columns=60, extra={"NO_COLOR": "1"})
    assert code == 0
    assert "\x1b[" not in shown  # NO_COLOR
    assert "Usage: mcptask get" in shown
    assert 50 < max(len(line) for line in shown.splitlines()) <= 60


def test_no_command_shows_the_help_as_a_usage_error() -> None:
    _, page, _ = on_pipe("--help")
    assert on_pipe() == (2, page, "")
    assert on_pipe(**APP) == (2, page, "")


@pytest.mark.parametrize("argv", [["--help"], ["get", "--help"], ["--version"]])
def test_a_reader_that_went_away_gets_no_traceback(argv: list[str]) -> None:
    reader, writer = os.pipe()
    os.close(reader)  # `mcptask --help | true`: nobody reads
    process = subprocess.Popen(
        [*mcptask_argv(), *argv], stdout=writer, stderr=subprocess.PIPE, env=environment()
    )
    os.close(writer)
    _, errors = process.communicate(timeout=60)
    assert (process.returncode, errors) == (0, b"")

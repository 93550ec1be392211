"""Whether stderr is a terminal, decided as Rich decides it, without Rich for a plain pipe."""

from __future__ import annotations

import io
import sys

import pytest

from mcptask.output.screen import Screen


@pytest.mark.parametrize(
    ("environment", "expected"),
    [
        ({}, False),
        ({"FORCE_COLOR": ""}, False),
        ({"FORCE_COLOR": "1"}, True),
        ({"TTY_COMPATIBLE": "1"}, True),
        ({"TTY_COMPATIBLE": "0", "FORCE_COLOR": "1"}, False),
    ],
)
def test_a_pipe_is_a_terminal_only_when_the_environment_says_so(
    monkeypatch: pytest.MonkeyPatch, environment: dict[str, str], expected: bool
) -> None:
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "TTY_INTERACTIVE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    screen = Screen("json", stdout=io.StringIO(), stderr=io.StringIO())
    assert screen.err_is_terminal is expected
    assert screen.err_is_terminal is screen.err.is_terminal  # Rich agrees


def test_a_plain_pipe_is_answered_without_rich(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE"):
        monkeypatch.delenv(name, raising=False)
    screen = Screen("json", stdout=io.StringIO(), stderr=io.StringIO())
    monkeypatch.setitem(sys.modules, "rich.console", None)  # importing it would now fail
    assert screen.err_is_terminal is False

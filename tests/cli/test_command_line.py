"""A command line builds only the command it names (`mcptask.cli.command_line`,
`mcptask.cli.app.build_app`): which command a line names, and that what the user sees is
the same as with the whole app."""

from __future__ import annotations

import pytest

from mcptask.cli import app as application
from mcptask.cli.command_line import command_named


@pytest.mark.parametrize(
    ("args", "command"),
    [
        (["get", "t1"], "get"),
        (["--url", "http://x/mcp", "list"], "list"),
        (["--url=http://x/mcp", "list"], "list"),
        (["--profile", "list", "get", "t1"], "get"),  # a value that is a command name
        (["-P", "prod", "cancel", "t1"], "cancel"),
        (["-Pprod", "cancel", "t1"], "cancel"),
        (["-vv", "watch"], "watch"),
        (["-v", "-o", "json", "--insecure", "reference-server", "--stdio"], "reference-server"),
        (["nosuch"], "nosuch"),  # not a command: the whole app says so
        ([], None),
        (["--url", "http://x/mcp"], None),
        (["--help"], None),  # the whole app's help lists every command
        (["-h", "get"], None),
        (["--version", "get"], None),
        (["--show-completion"], None),
        (["--no-such-option", "get"], None),
        (["-x", "get"], None),
        (["--", "get"], None),
    ],
)
def test_the_command_a_line_names(args: list[str], command: str | None) -> None:
    assert command_named(args) == command


LINES = [
    ["get"],  # a missing argument
    ["get", "t1", "--no-such-option"],
    ["cancel", "--all-working", "t1"],
    ["list", "--output", "yaml"],
    ["get", "--help"],
    ["--url", "http://127.0.0.1:9/mcp", "watch", "--help"],
    ["profiles", "--delete"],
    ["reference-server", "--no-such-option"],
]


@pytest.mark.parametrize("args", LINES, ids=" ".join)
def test_one_command_says_what_the_whole_app_says(
    args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    monkeypatch.delenv("MCPTASK_URL", raising=False)
    alone = application.run(args), capsys.readouterr()
    monkeypatch.setattr(application, "command_named", lambda args: None)
    whole = application.run(args), capsys.readouterr()
    assert alone == whole
    assert alone[0] in (0, 2)  # help, or a usage error (these lines never reach a server)


def test_the_whole_app_has_every_command() -> None:
    assert [command.name for command in application.app.registered_commands] == list(
        application.COMMANDS
    )


def test_a_named_command_is_built_alone() -> None:
    assert [command.name for command in application.build_app("get").registered_commands] == ["get"]
    assert len(application.build_app("nosuch").registered_commands) == len(application.COMMANDS)

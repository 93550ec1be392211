"""How options and the environment become connection settings, and how the CLI refuses bad
ones before anything is sent (in process: `resolve_settings` and Typer's CliRunner)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from mcptask.cli.app import app
from mcptask.cli.settings import resolve_settings
from mcptask.client.session import McpClient
from mcptask.errors import UsageError

URL = "http://127.0.0.1:9/mcp"


def test_options_win_over_the_environment() -> None:
    settings = resolve_settings(
        url=URL, server_command=None, environ={"MCPTASK_SERVER": "other-server"}
    )
    assert (settings.url, settings.server_command) == (URL, None)


def test_the_environment_names_the_server_when_no_option_does() -> None:
    settings = resolve_settings(url=None, server_command=None, environ={"MCPTASK_URL": URL})
    assert settings.url == URL
    stdio = resolve_settings(url=None, server_command=None, environ={"MCPTASK_SERVER": "srv"})
    assert stdio.server_command == "srv"


@pytest.mark.parametrize(
    ("kwargs", "environ", "message"),
    [
        ({"url": URL, "server_command": "srv"}, {}, "either --url or --server, not both"),
        ({}, {"MCPTASK_URL": URL, "MCPTASK_SERVER": "s"}, "both MCPTASK_URL and MCPTASK_SERVER"),
        ({}, {}, "no server given"),
        ({"url": URL, "protocol": "2024-01-01"}, {}, "--protocol takes one of: auto"),
        ({"url": URL, "timeout": float("inf")}, {}, "--timeout must be a positive number"),
        ({"server_command": "srv", "session_id": "s"}, {}, "apply to --url servers only"),
        ({"url": URL, "session_id": "s\u00e9"}, {}, "--session-id must be printable ASCII"),
        ({"url": URL, "header_options": ["NoColon"]}, {}, "--header takes 'Name: value'"),
    ],
)
def test_bad_settings_are_usage_errors(
    kwargs: dict[str, object], environ: dict[str, str], message: str
) -> None:
    arguments: dict[str, object] = {"url": None, "server_command": None, **kwargs}
    with pytest.raises(UsageError, match=message.replace("(", r"\(")):
        resolve_settings(**arguments, environ=environ)  # type: ignore[arg-type]


def test_a_header_value_is_never_echoed() -> None:
    with pytest.raises(UsageError) as caught:
        resolve_settings(
            url=URL, server_command=None, header_options=["X-Api-Key: s3cr\u00e9t"], environ={}
        )
    assert "X-Api-Key" in caught.value.message
    assert "s3cr" not in caught.value.message


def test_the_token_becomes_a_bearer_header_for_http_only(tmp_path: Path) -> None:
    env = {"MCPTASK_TOKEN": "from-env"}
    http = resolve_settings(url=URL, server_command=None, environ=env)
    assert http.headers == {"Authorization": "Bearer from-env"}
    assert "from-env" not in repr(http)
    stdio = resolve_settings(url=None, server_command="srv", environ=env)
    assert stdio.headers == {}
    token_file = tmp_path / "token"
    token_file.write_text("from-file\n", encoding="utf-8")
    filed = resolve_settings(url=URL, server_command=None, token_file=token_file, environ=env)
    assert filed.headers == {"Authorization": "Bearer from-file"}
    explicit = resolve_settings(
        url=URL, server_command=None, header_options=["Authorization: Basic x"], environ=env
    )
    assert explicit.headers == {"Authorization": "Basic x"}


def test_an_empty_token_file_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "token"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(UsageError, match="is empty"):
        resolve_settings(url=URL, server_command=None, token_file=empty, environ={})


def _never_connect(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    attempts: list[str] = []

    def handshake(self: McpClient, *, join_session: str | None = None) -> None:
        attempts.append("connect")
        raise AssertionError("the CLI connected although the invocation was refused")

    monkeypatch.setattr(McpClient, "connect", handshake)
    return attempts


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["connect", "-o", "ids", "--url", URL], "connect has no ids output"),
        (["watch", "-o", "ids", "--url", URL], "watch has no ids output"),
        (["list", "-o", "yaml", "--url", URL], "unknown output format 'yaml'"),
        (["list", "--status", "running", "--url", URL], "--status: unknown status 'running'"),
        (["cancel", "--url", URL], "nothing to cancel"),
        (["cancel", "a", "--status", "working", "--url", URL], "--status narrows --all-working"),
        (["watch", "a", "--status", "working", "--url", URL], "does not apply to given ids"),
        (["cancel", "a", "--wait-timeout", "inf", "--url", URL], "finite number of seconds"),
        (["connect", "http://x/mcp", "--url", URL], "either as TARGET or with --url"),
    ],
)
def test_refused_invocations_send_nothing(
    argv: list[str], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    attempts = _never_connect(monkeypatch)
    result = CliRunner().invoke(app, argv)
    assert isinstance(result.exception, UsageError), result.output
    assert message in result.exception.message
    assert attempts == []


def test_connect_target_picks_the_transport(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str | None, str | None]] = []

    def resolve(**options: object) -> None:
        seen.append((options["url"], options["server_command"]))  # type: ignore[arg-type]
        raise UsageError("stop here")

    monkeypatch.setattr("mcptask.cli.settings.resolve_settings", resolve)
    CliRunner().invoke(app, ["connect", "http://h/mcp"])
    CliRunner().invoke(app, ["connect", "my-server --stdio"])
    assert seen == [("http://h/mcp", None), (None, "my-server --stdio")]


def test_every_server_command_takes_the_shared_options() -> None:
    for command in ("connect", "list", "get", "cancel", "watch"):
        result = CliRunner().invoke(app, [command, "--help"], terminal_width=200)
        assert result.exit_code == 0
        for option in (
            "--url",
            "--server",
            "--header",
            "--token-file",
            "--session-id",
            "--timeout",
            "--output",
            "--verbose",
            "--no-color",
            "--protocol",
        ):
            assert option in result.output, (command, option)

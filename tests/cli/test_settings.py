"""How options and the environment become connection settings, and how the CLI refuses bad
ones before anything is sent (in process: `resolve_settings` and Typer's CliRunner)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from mcptask.cli.app import app, run
from mcptask.cli.options import Common
from mcptask.cli.settings import resolve
from mcptask.client.connection import ConnectionSettings
from mcptask.client.session import McpClient
from mcptask.errors import AuthError, ExitCode, UsageError
from mcptask.store.profiles import Profile, ProfileBook, Reference

URL = "http://127.0.0.1:9/mcp"


def resolved(
    environ: dict[str, str] | None = None, book: ProfileBook | None = None, **line: Any
) -> ConnectionSettings:
    return resolve(
        Common(**line),
        book=book or ProfileBook(Path("/nonexistent/profiles.toml")),
        environ=environ or {},
    ).settings


def test_options_win_over_the_environment() -> None:
    settings = resolved({"MCPTASK_SERVER": "other-server"}, url=URL)
    assert (settings.url, settings.server_command) == (URL, None)


def test_the_environment_names_the_server_when_no_option_does() -> None:
    assert resolved({"MCPTASK_URL": URL}).url == URL
    assert resolved({"MCPTASK_SERVER": "srv"}).server_command == "srv"


@pytest.mark.parametrize(
    ("line", "environ", "message"),
    [
        ({"url": URL, "server": "srv"}, {}, "either --url or --server, not both"),
        ({}, {"MCPTASK_URL": URL, "MCPTASK_SERVER": "s"}, "both MCPTASK_URL and MCPTASK_SERVER"),
        ({}, {}, "no server given"),
        ({"url": URL, "protocol": "2024-01-01"}, {}, "--protocol takes one of: auto"),
        ({"url": URL, "timeout": float("inf")}, {}, "--timeout must be a positive number"),
        ({"server": "srv", "session_id": "s"}, {}, "apply to --url servers only"),
        ({"url": URL, "session_id": "s\u00e9"}, {}, "--session-id must be printable ASCII"),
        ({"url": URL, "header": ["NoColon"]}, {}, "--header takes 'Name: value'"),
        ({"url": URL, "env": ["A=1"]}, {}, "--env applies to --server"),
        ({"server": "srv", "env": ["1A=1"]}, {}, "--env takes KEY=VALUE"),
        ({"server": "srv", "insecure": True}, {}, "apply to https:// servers only"),
        ({"url": URL, "token_env": "T", "token_file": Path("f")}, {}, "either --token-file or"),
        ({"url": URL, "token_env": "UNSET"}, {}, "the environment variable UNSET is not set"),
        ({"url": URL, "profile": "p"}, {}, "either with --profile or with --url"),
        ({"profile": "nope"}, {}, "no profile named 'nope'"),
        ({}, {"MCPTASK_PROFILE": "p", "MCPTASK_URL": URL}, "both MCPTASK_PROFILE and"),
    ],
)
def test_bad_settings_are_usage_errors(
    line: dict[str, Any], environ: dict[str, str], message: str
) -> None:
    with pytest.raises(UsageError, match=re.escape(message)):
        resolved(environ, **line)


def test_a_header_value_is_never_echoed() -> None:
    with pytest.raises(UsageError) as caught:
        resolved(url=URL, header=["X-Api-Key: s3cr\u00e9t"])
    assert "X-Api-Key" in caught.value.message
    assert "s3cr" not in caught.value.message


def test_the_token_becomes_a_bearer_header_for_http_only(tmp_path: Path) -> None:
    env = {"MCPTASK_TOKEN": "from-env", "OTHER": "from-variable"}
    http = resolved(env, url=URL)
    assert http.headers == {"Authorization": "Bearer from-env"}
    assert "from-env" not in repr(http)
    assert resolved(env, server="srv").headers == {}
    token_file = tmp_path / "token"
    token_file.write_text("from-file\n", encoding="utf-8")
    assert resolved(env, url=URL, token_file=token_file).headers == {
        "Authorization": "Bearer from-file"
    }
    assert resolved(env, url=URL, token_env="OTHER").headers == {
        "Authorization": "Bearer from-variable"
    }
    explicit = resolved(env, url=URL, header=["Authorization: Basic x"])
    assert explicit.headers == {"Authorization": "Basic x"}


def test_an_empty_token_file_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "token"
    empty.write_text("\n", encoding="utf-8")
    with pytest.raises(UsageError, match="is empty"):
        resolved(url=URL, token_file=empty)


@pytest.mark.parametrize(
    ("url", "refused"),
    [
        ("http://mcp.example.com/mcp", True),
        ("http://10.1.2.3/mcp", True),
        ("https://mcp.example.com/mcp", False),
        ("http://127.0.0.1:8765/mcp", False),
        ("http://[::1]:8765/mcp", False),
        ("http://localhost:8765/mcp", False),
    ],
)
@pytest.mark.parametrize(
    ("environ", "line"),
    [
        ({"MCPTASK_TOKEN": "t"}, {}),
        ({"T": "t"}, {"token_env": "T"}),
        ({}, {"header": ["X-Api-Key: k"]}),
        ({}, {"header": ["Authorization: Basic x"]}),
    ],
)
def test_credentials_over_plain_http_to_another_host_are_refused(
    url: str, refused: bool, environ: dict[str, str], line: dict[str, Any]
) -> None:
    book = ProfileBook(Path("/none"))
    if refused:
        host = re.escape(url.split("/")[2])
        with pytest.raises(AuthError, match=f"refusing to send credentials .* to {host},"):
            resolve(Common(url=url, **line), book=book, environ=environ)
    else:
        assert resolve(Common(url=url, **line), book=book, environ=environ).settings.headers
    harmless = resolve(Common(url=url, header=["X-Tenant: t1"]), book=book, environ={})
    assert not harmless.warnings


def test_a_profiles_credentials_over_plain_http_to_another_host_are_refused() -> None:
    remote = "http://mcp.example.com/mcp"
    book = ProfileBook(
        Path("/none"),
        {
            "token": Profile(name="token", url=remote, token=Reference("env", "T")),
            "header": Profile(name="header", url=remote, headers={"Cookie": "c"}),
        },
    )
    for name in book.profiles:
        with pytest.raises(AuthError, match=r"plain http:// to mcp\.example\.com,"):
            resolve(Common(profile=name), book=book, environ={"T": "t"})


def test_insecure_is_warned_about() -> None:
    result = resolve(
        Common(url="https://h/mcp", insecure=True), book=ProfileBook(Path("/none")), environ={}
    )
    assert result.settings.insecure
    assert any("not verified" in warning for warning in result.warnings)


def _never_connect(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    attempts: list[str] = []

    def handshake(self: McpClient, **options: object) -> None:
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
        (["cancel", "a", "--rate", "nan", "--url", URL], "--rate takes a finite number a second"),
        (["connect", "http://x/mcp", "--url", URL], "either as TARGET or with --url"),
        (["list", "--url", "http://x/mcp", "--server", "y"], "not both"),
        (["list", "--status", "sleeping", "--url", URL], "unknown status"),
        (["list", "-H", "no colon", "--url", URL], "Name: value"),
        (["list", "-o", "xml", "--url", URL], "unknown output format"),
        (["list", "--url", "ftp://x/mcp"], "invalid server URL"),
        (["list", "--url", URL, "--timeout", "inf"], "--timeout"),
        (["list", "--url", "http://u:pw@[bad/mcp"], "invalid server URL"),
        (["list", "--url", "http://host:abc/mcp"], "invalid server URL"),
    ],
)
def test_refused_invocations_send_nothing(
    argv: list[str],
    message: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    attempts = _never_connect(monkeypatch)
    result = CliRunner().invoke(app, argv)
    assert isinstance(result.exception, UsageError), result.output
    assert message in result.exception.message
    # The error contract, as the process tier checked it: exit 2, nothing on stdout, one line.
    assert run(argv) == ExitCode.USAGE
    out, err = capsys.readouterr()
    assert out == ""
    assert len(err.splitlines()) == 1, err
    assert message in err
    assert "Traceback" not in err
    assert attempts == []


def test_connect_target_picks_the_transport(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[str | None, str | None]] = []

    def fake_resolve(line: Common, **options: object) -> None:
        seen.append((line.url, line.server))
        raise UsageError("stop here")

    monkeypatch.setattr("mcptask.cli.settings.resolve", fake_resolve)
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

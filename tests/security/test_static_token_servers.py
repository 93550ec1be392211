"""A server that takes only a static bearer token (no OAuth metadata at all), against the
real `mcptask` process: the refusal says so and points at the token options; nothing is
registered, and nothing is POSTed, at a guessed endpoint (`/register`, `/token`), even when
a person is there to sign in and the guessed endpoint would answer."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_process import run_mcptask
from tests.security.hostile_oauth import HostileServer, Seen, json_answer


def _static_only(seen: Seen) -> tuple[int, dict[str, str], bytes]:
    if seen.method == "GET":
        return json_answer(404, {"error": "not_found"})
    if seen.path == "/register":  # a guessed endpoint that would take a registration
        return json_answer(201, {"client_id": "guessed", "redirect_uris": []})
    status, headers, content = json_answer(401, {"error": "unauthorized"})
    return status, {**headers, "WWW-Authenticate": 'Bearer realm="static"'}, content


def _environment(tmp_path: Path, browser: str) -> dict[str, str]:
    return {
        "MCPTASK_STATE_DIR": str(tmp_path / "state"),
        "MCPTASK_CONFIG_DIR": str(tmp_path / "config"),
        "BROWSER": browser,
    }


def _assert_told_apart(stderr: str, received: list[Seen]) -> None:
    assert "mcptask login" not in stderr
    assert [seen.path for seen in received if seen.method == "POST"] == ["/mcp"]


def test_a_static_token_server_is_told_apart_from_an_oauth_one(tmp_path: Path) -> None:
    with HostileServer(_static_only) as server:
        url = server.origin + "/mcp"
        result = run_mcptask("list", "--url", url, env=_environment(tmp_path, ""))
        received = server.seen
    result.assert_one_line_error(4, "publishes no OAuth metadata", "MCPTASK_TOKEN", "--token-file")
    _assert_told_apart(result.stderr, received)


@pytest.mark.parametrize(
    "command",
    [("login", "{url}"), ("login", "{url}", "--auth", "browser"), ("list", "--url", "{url}")],
    ids=["login", "login-browser", "list-with-a-person"],
)
def test_a_person_signing_in_registers_nowhere(tmp_path: Path, command: tuple[str, ...]) -> None:
    # BROWSER set: a person is there, so a sign-in would start (the browser never opens).
    with HostileServer(_static_only) as server:
        argv = [part.replace("{url}", server.origin + "/mcp") for part in command]
        result = run_mcptask(*argv, env=_environment(tmp_path, "/bin/false"))
        received = server.seen
    result.assert_one_line_error(4, "publishes no OAuth metadata", "MCPTASK_TOKEN", "--token-file")
    _assert_told_apart(result.stderr, received)

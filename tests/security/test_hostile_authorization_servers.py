"""Attacks by a hostile MCP server that names a hostile authorization server, against the
real `mcptask` process: configured client credentials (the README's CI recipe) must reach
only the authorization server they are bound to."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from tests.cli_process import run_mcptask
from tests.security.hostile_oauth import authorization_server, client_env, mcp_server

CLIENT = "ci-robot"
SECRET = "s3cret-of-the-organisation-" + "z" * 12
BASIC = base64.b64encode(f"{CLIENT}:{SECRET}".encode()).decode()


@pytest.mark.parametrize("method", ["auto", "client-credentials", "browser"])
@pytest.mark.parametrize("bound_to", [None, "https://login.example.com"])
def test_client_credentials_never_reach_an_authorization_server_a_url_names(
    tmp_path: Path, method: str, bound_to: str | None
) -> None:
    issuer = {"MCPTASK_CLIENT_ISSUER": bound_to} if bound_to else {}
    with authorization_server() as hostile, mcp_server(lambda: hostile.origin) as server:
        result = run_mcptask(
            "list",
            "--url",
            server.origin + "/mcp",
            "--auth",
            method,
            env=client_env(tmp_path, CLIENT, SECRET, **issuer),
        )
        received = hostile.seen
    result.assert_one_line_error(4, "refusing to send them", hostile.origin.split("//")[1])
    if bound_to is None:
        assert "MCPTASK_CLIENT_ISSUER" in result.stderr
    for seen in received:
        assert SECRET not in seen.text
        assert BASIC not in seen.text
        assert seen.method == "GET"
        assert seen.path.startswith("/.well-known/"), seen.path
    assert SECRET not in result.stderr


def test_a_profile_binds_its_client_to_its_issuer(tmp_path: Path) -> None:
    with authorization_server() as hostile, mcp_server(lambda: hostile.origin) as server:
        config = tmp_path / "config"
        config.mkdir(mode=0o700)
        (config / "profiles.toml").write_text(
            "[profiles.ci]\n"
            f'url = "{server.origin}/mcp"\n'
            'auth = "client-credentials"\n'
            f'client_id = "{CLIENT}"\n'
            'client_secret = { env = "CI_SECRET" }\n'
            'client_issuer = "https://login.example.com/"\n'
        )
        env = client_env(tmp_path, CLIENT, SECRET, CI_SECRET=SECRET)
        del env["MCPTASK_CLIENT_SECRET"]
        result = run_mcptask("list", "--profile", "ci", env=env)
        received = hostile.seen
    result.assert_one_line_error(4, "refusing to send them", "login.example.com")
    assert all(SECRET not in seen.text and BASIC not in seen.text for seen in received)


def test_bound_to_that_issuer_the_grant_goes_there(tmp_path: Path) -> None:
    # The control: the same servers, the credentials bound to this authorization server;
    # the token request reaches it with the secret (which is what the refusals prevent).
    with authorization_server() as hostile, mcp_server(lambda: hostile.origin) as server:
        result = run_mcptask(
            "list",
            "--url",
            server.origin + "/mcp",
            "--client-issuer",
            hostile.origin,
            env=client_env(tmp_path, CLIENT, SECRET),
        )
        received = hostile.seen
    assert any(seen.path == "/token" and BASIC in seen.text for seen in received)
    # The MCP server refuses the token it was given: exit 4.
    result.assert_one_line_error(4, "HTTP 401")

"""Attacks through the endpoints of sign-in, against the real `mcptask` process: OAuth over
plain http:// to another machine (played by a proxy of the test's own on 127.0.0.1), and an
authorization endpoint that is a browser switch or not a web page at all."""

from __future__ import annotations

import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

from mcptask.store import tokens
from mcptask.store.tokens import CachedToken
from tests.cli_process import run_mcptask
from tests.security.hostile_oauth import (
    HostileServer,
    Seen,
    authorization_server,
    json_answer,
    mcp_server,
)

FOLLOW_REDIRECTS = Path(__file__).resolve().parents[1] / "conformance" / "follow_redirects.py"
REMOTE = "http://mcp.example.com/mcp"


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    return {
        "MCPTASK_STATE_DIR": str(tmp_path / "state"),
        "MCPTASK_CONFIG_DIR": str(tmp_path / "config"),
        "BROWSER": "",
        **extra,
    }


def _remote_server(seen: Seen) -> tuple[int, dict[str, str], bytes]:
    """mcp.example.com and as.example.com as a proxy sees them: OAuth over plain http."""
    parts = urlsplit(seen.path)
    if parts.path.startswith("/.well-known/oauth-protected-resource"):
        return json_answer(
            200, {"resource": REMOTE, "authorization_servers": ["http://as.example.com"]}
        )
    if parts.path.startswith("/.well-known/oauth-authorization-server"):
        return json_answer(
            200,
            {
                "issuer": "http://as.example.com",
                "authorization_endpoint": "http://as.example.com/authorize",
                "token_endpoint": "http://as.example.com/token",
                "registration_endpoint": "http://as.example.com/register",
                "grant_types_supported": ["authorization_code", "client_credentials"],
                "code_challenge_methods_supported": ["S256"],
            },
        )
    if parts.path == "/token":
        return json_answer(200, {"access_token": "over-plain-http", "token_type": "Bearer"})
    challenge = (
        'Bearer resource_metadata="http://mcp.example.com/.well-known/oauth-protected-resource/mcp"'
    )
    status, headers, content = json_answer(401, {"error": "unauthorized"})
    return status, {**headers, "WWW-Authenticate": challenge}, content


@pytest.mark.parametrize("command", [["list", "--url", REMOTE], ["login", REMOTE]])
def test_no_oauth_over_plain_http_to_another_machine(tmp_path: Path, command: list[str]) -> None:
    cached = CachedToken(
        server=REMOTE,
        issuer="http://as.example.com",
        resource=REMOTE,
        client_id="c",
        grant="authorization_code",
        access_token="cached-access-token",
        token_endpoint="http://as.example.com/token",
        auth_method="none",
    )
    tokens.store_token(tmp_path / "state" / "tokens.json", cached)
    with HostileServer(_remote_server) as proxy:
        proxied = {"HTTP_PROXY": proxy.origin, "http_proxy": proxy.origin}
        result = run_mcptask(
            *command,
            env=_env(
                tmp_path,
                **proxied,
                NO_PROXY="",
                no_proxy="",
                MCPTASK_CLIENT_ID="ci-robot",
                MCPTASK_CLIENT_SECRET="s3cret-over-http",
            ),
        )
        received = proxy.seen
    # The MCP request itself goes (the user asked for it), without any OAuth token; nothing
    # of OAuth follows (no metadata, no registration, no token request).
    assert [seen.path for seen in received] == [REMOTE]
    assert "cached-access-token" not in received[0].text
    assert all("s3cret-over-http" not in seen.text for seen in received)
    result.assert_one_line_error(4, "plain http:// to mcp.example.com")


def _recording_browser(tmp_path: Path) -> tuple[Path, Path]:
    opened = tmp_path / "opened"
    browser = tmp_path / "browser"
    browser.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> "{opened}"\n')
    browser.chmod(0o700)
    return browser, opened


@pytest.mark.parametrize(
    "endpoint",
    [
        "--renderer-cmd-prefix=touch /tmp/mcptask-pwned",
        "javascript:alert(document.cookie)",
        "file:///etc/passwd",
        "http://as.example.com/authorize",
    ],
)
def test_the_browser_never_opens_a_hostile_authorization_endpoint(
    tmp_path: Path, endpoint: str
) -> None:
    browser, opened = _recording_browser(tmp_path)
    hostile = authorization_server(endpoints={"authorization_endpoint": endpoint})
    with hostile, mcp_server(lambda: hostile.origin) as server:
        result = run_mcptask(
            "login", server.origin + "/mcp", env=_env(tmp_path, BROWSER=str(browser))
        )
        received = hostile.seen
    result.assert_one_line_error(4, "refusing")
    assert not opened.exists()
    assert all(seen.method == "GET" for seen in received)  # no registration either


def test_the_sign_in_names_the_host_the_browser_opens(tmp_path: Path) -> None:
    # The authorization endpoint lives elsewhere than the issuer: the notice says where the
    # browser goes. It refuses the sign-in (back to mcptask's redirect with an error).
    def refuse(seen: Seen) -> tuple[int, dict[str, str], bytes]:
        query = {k: v[0] for k, v in parse_qs(urlsplit(seen.path).query).items()}
        back = f"{query['redirect_uri']}?error=access_denied&state={query['state']}"
        return 302, {"Location": back}, b""

    browser = tmp_path / "browser"
    browser.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FOLLOW_REDIRECTS}" "$@"\n')
    browser.chmod(0o700)
    with HostileServer(refuse) as elsewhere:
        hostile = authorization_server(
            endpoints={"authorization_endpoint": elsewhere.origin + "/authorize"}
        )
        with hostile, mcp_server(lambda: hostile.origin) as server:
            result = run_mcptask(
                "login", server.origin + "/mcp", env=_env(tmp_path, BROWSER=str(browser))
            )
    assert result.code == 4, result.stderr
    assert f"the browser opens 127.0.0.1:{elsewhere.port}" in result.stderr
    assert "access_denied" in result.stderr.splitlines()[-1]

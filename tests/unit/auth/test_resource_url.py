"""The RFC 8707 resource and a 2025-03-26 server's origin carry no user info: a password in
the server URL must never reach the authorization URL that --no-browser prints."""

from __future__ import annotations

import httpx
import pytest

from mcptask.auth import browser
from mcptask.auth.config import AuthSettings, HttpOptions, canonical_resource
from mcptask.auth.discovery import Challenge, discover
from mcptask.errors import AuthError

PASSWORD = "hunter2-in-the-url"
SERVER = f"https://alice:{PASSWORD}@MCP.example.com:443/mcp/"


def test_the_resource_drops_user_info_and_the_default_port() -> None:
    assert canonical_resource(SERVER) == "https://mcp.example.com/mcp"
    assert canonical_resource("http://u@h:80/") == "http://h"
    assert canonical_resource("http://h:8080/a/") == "http://h:8080/a"


def _origin_metadata(request: httpx.Request) -> httpx.Response:
    # A 2025-03-26 server: no PRM, its RFC 8414 metadata at its origin.
    if request.url.path != "/.well-known/oauth-authorization-server":
        return httpx.Response(404)
    assert PASSWORD not in str(request.url)
    origin = "https://mcp.example.com"
    return httpx.Response(
        200,
        json={
            "issuer": origin,
            "authorization_endpoint": origin + "/authorize",
            "token_endpoint": origin + "/token",
        },
    )


def test_the_printed_sign_in_url_holds_no_password() -> None:
    with httpx.Client(transport=httpx.MockTransport(_origin_metadata)) as http:
        discovered = discover(http, SERVER, Challenge())
    assert discovered is not None
    assert discovered.legacy
    assert PASSWORD not in discovered.resource
    assert PASSWORD not in repr(discovered.metadata)
    printed: list[str] = []
    settings = AuthSettings(client_id="c", open_browser=False, sign_in_timeout=0.2)
    with pytest.raises(AuthError, match="did not finish"):
        browser.sign_in(
            settings,
            SERVER,
            HttpOptions(),
            discovered,
            None,
            notice=printed.append,
            trace=printed.append,
        )
    (url,) = [line for line in printed if "open this URL" in line]
    assert "mcp.example.com/authorize?" in url
    assert "resource=https%3A%2F%2Fmcp.example.com%2Fmcp" in url
    assert not [line for line in printed if PASSWORD in line or "alice" in line]

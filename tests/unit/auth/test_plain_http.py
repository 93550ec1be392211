"""OAuth never over plain http:// to another machine (metadata, registration, token
requests, tokens to the MCP server), and the authorization endpoint the browser is sent to
is an https:// URL (or http:// on this machine), never a browser switch; a token that
cannot go in a header is refused on receipt."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from mcptask.auth.browser import _browser_host
from mcptask.auth.config import AuthSettings, HttpOptions, plain_remote
from mcptask.auth.discovery import ServerMetadata, get_json
from mcptask.auth.flow import McpAuth
from mcptask.auth.grants import ClientIdentity, _tokens, register, request_tokens
from mcptask.errors import AuthDiscoveryError, TokenRequestRefused
from mcptask.store import tokens
from tests.unit.auth.support import cached_token


def _recording() -> tuple[httpx.Client, list[httpx.Request]]:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        challenge = 'Bearer resource_metadata="http://mcp.example.com/.well-known/x"'
        return httpx.Response(401, headers={"WWW-Authenticate": challenge})

    return httpx.Client(transport=httpx.MockTransport(answer)), seen


@pytest.mark.parametrize(
    ("url", "plain"),
    [
        ("http://mcp.example.com/mcp", True),
        ("http://10.0.0.7:8080/mcp", True),
        ("HTTP://Mcp.Example.com/", True),
        ("https://mcp.example.com/mcp", False),
        ("http://127.0.0.1:8765/mcp", False),
        ("http://127.9.9.9/mcp", False),
        ("http://[::1]:9/mcp", False),
        ("http://localhost:9/mcp", False),
        ("http://LOCALHOST/mcp", False),
    ],
)
def test_loopback_is_the_only_plain_http_allowed(url: str, plain: bool) -> None:
    assert plain_remote(url) is plain


def test_metadata_and_registration_are_not_fetched_over_plain_http() -> None:
    client, seen = _recording()
    with pytest.raises(AuthDiscoveryError, match=r"plain http:// to as\.example\.com"):
        get_json(client, "http://as.example.com/.well-known/oauth-authorization-server", print)
    metadata = ServerMetadata(
        "https://as.example.com",
        None,
        "https://as.example.com/token",
        registration_endpoint="http://as.example.com/register",
    )
    with pytest.raises(AuthDiscoveryError, match="registration endpoint"):
        register(client, metadata, "http://127.0.0.1:1/callback", trace=print)
    assert seen == []


def test_no_token_request_over_plain_http() -> None:
    identity = ClientIdentity("c", "client_secret_basic", client_secret="s3cret")
    with pytest.raises(AuthDiscoveryError, match="token endpoint") as refused:
        request_tokens(
            HttpOptions(),
            identity,
            cached_token(
                "", token_endpoint="http://as.example.com/token", issuer="https://as.example.com"
            ),
            "client_credentials",
            trace=print,
        )
    assert "s3cret" not in str(refused.value)


def test_no_token_goes_to_a_plain_http_server_and_none_is_signed_in_for(tmp_path: Path) -> None:
    url = "http://mcp.example.com/mcp"
    cache = tmp_path / "tokens.json"
    tokens.store_token(cache, cached_token("cached-secret", server=url, resource=url))
    client, seen = _recording()
    client.auth = McpAuth(AuthSettings(cache_path=cache), url, http=HttpOptions())
    with client, pytest.raises(AuthDiscoveryError, match=r"plain http:// to mcp\.example\.com"):
        client.post(url, json={})
    assert [str(request.url) for request in seen] == [url]
    assert "Authorization" not in seen[0].headers


@pytest.mark.parametrize(
    "endpoint",
    [
        "--remote-debugging-port=9222",
        "-https://as.example.com/authorize",
        "javascript:alert(1)",
        "file:///etc/passwd",
        "data:text/html,<h1>sign in</h1>",
        "http://as.example.com/authorize",
        " https://as.example.com/authorize",
        "https:///authorize",
    ],
)
def test_the_browser_opens_only_https_authorization_endpoints(endpoint: str) -> None:
    with pytest.raises(AuthDiscoveryError):
        _browser_host(endpoint, "https://as.example.com")


def test_the_browser_host_is_shown() -> None:
    assert _browser_host("https://login.example.com/authorize", "https://as") == (
        "login.example.com"
    )
    assert _browser_host("http://127.0.0.1:9/a", "http://127.0.0.1:9") == "127.0.0.1:9"


@pytest.mark.parametrize(
    "answer",
    [
        {"access_token": "t\u00f6ken", "token_type": "Bearer"},
        {"access_token": "two words", "token_type": "Bearer"},
        {"access_token": "ok", "refresh_token": "r\u20ac", "token_type": "Bearer"},
    ],
)
def test_a_token_that_cannot_go_in_a_header_is_refused_on_receipt(answer: object) -> None:
    with pytest.raises(TokenRequestRefused, match="not printable ASCII"):
        _tokens(answer, "https://as.example.com/token", cached_token(""))

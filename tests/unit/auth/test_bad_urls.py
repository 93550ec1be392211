"""URLs that servers give and that cannot be parsed are the sign-in's own errors (exit 4),
never an internal error: an issuer urllib cannot split, endpoints httpx refuses."""

from __future__ import annotations

import httpx
import pytest

from mcptask.auth import grants
from mcptask.auth.config import HttpOptions
from mcptask.auth.discovery import Challenge, ServerMetadata, discover
from mcptask.auth.grants import ClientIdentity
from mcptask.errors import AuthDiscoveryError, TokenRequestRefused
from tests.unit.auth.support import cached_token

MCP = "https://mcp.example.com/mcp"
PRM = "https://mcp.example.com/.well-known/oauth-protected-resource/mcp"
INVALID = "https://as.example.com/t\x00"
"""A URL httpx refuses with InvalidURL (which is not an httpx.HTTPError)."""


def _prm_naming(issuer: str) -> httpx.Client:
    def handle(request: httpx.Request) -> httpx.Response:
        if str(request.url) == PRM:
            return httpx.Response(200, json={"resource": MCP, "authorization_servers": [issuer]})
        return httpx.Response(404)

    return httpx.Client(transport=httpx.MockTransport(handle))


@pytest.mark.parametrize("issuer", ["http://[bad", INVALID])
def test_an_authorization_server_that_is_no_url_is_a_discovery_error(issuer: str) -> None:
    with _prm_naming(issuer) as http, pytest.raises(AuthDiscoveryError, match="not a valid URL"):
        discover(http, MCP, Challenge())


def test_a_challenge_naming_an_invalid_metadata_url_is_a_discovery_error() -> None:
    # On the server's own origin: a URL on another is not fetched at all.
    named = Challenge({"resource_metadata": "https://mcp.example.com/t\x00"})
    with (
        _prm_naming("https://as") as http,
        pytest.raises(AuthDiscoveryError, match="not a valid URL"),
    ):
        discover(http, MCP, named)


def test_an_invalid_token_endpoint_is_a_refused_token_request() -> None:
    with pytest.raises(TokenRequestRefused, match="not a valid URL"):
        grants.request_tokens(
            HttpOptions(),
            ClientIdentity("c", "none"),
            cached_token("", token_endpoint=INVALID, issuer="https://as"),
            "refresh_token",
            refresh_token="r",
            resource=MCP,
            trace=lambda line: None,
        )


def test_an_invalid_registration_endpoint_is_a_refused_registration() -> None:
    metadata = ServerMetadata("https://as", "https://as/a", "https://as/t", INVALID)
    with (
        httpx.Client(transport=httpx.MockTransport(lambda r: httpx.Response(500))) as http,
        pytest.raises(TokenRequestRefused, match="not a valid URL"),
    ):
        grants.register(http, metadata, "http://127.0.0.1:1/callback", trace=lambda line: None)

"""Refreshing a cached token needs the credential its client authenticated with: without it,
no token request goes out (never an assertion, never the secret "None")."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from mcptask.auth import grants
from mcptask.auth.config import AuthSettings, HttpOptions
from mcptask.auth.flow import McpAuth
from mcptask.auth.grants import ClientIdentity
from mcptask.errors import AuthError
from mcptask.store import tokens
from mcptask.store.tokens import CachedToken
from tests.unit.auth.support import URL, cached_token


def _expired(auth_method: str) -> CachedToken:
    return cached_token(
        "old-access",
        grant="client_credentials",
        auth_method=auth_method,
        refresh_token="old-refresh",
        expires_at=1.0,
    )


@pytest.mark.parametrize("auth_method", ["private_key_jwt", "client_secret_basic"])
def test_a_refresh_without_the_clients_credential_is_not_attempted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, auth_method: str
) -> None:
    path = tmp_path / "tokens.json"
    tokens.store_token(path, _expired(auth_method))
    sent: list[str | None] = []

    def server(request: httpx.Request) -> httpx.Response:
        sent.append(request.headers.get("Authorization"))
        return httpx.Response(200)

    token_requests: list[httpx.Request] = []

    def token_endpoint(request: httpx.Request) -> httpx.Response:
        token_requests.append(request)
        return httpx.Response(401, json={"error": "invalid_client"})

    original = httpx.Client
    client = original(
        transport=httpx.MockTransport(server),
        auth=McpAuth(AuthSettings(client_id="c", cache_path=path), URL, http=HttpOptions()),
    )
    monkeypatch.setattr(
        httpx, "Client", lambda **kwargs: original(transport=httpx.MockTransport(token_endpoint))
    )
    with client:
        assert client.post(URL, content=b"{}").status_code == 200
    assert token_requests == []  # neither an unsigned assertion nor "c:None" went out
    assert sent == [None]
    # The server never refused the refresh token: a run with the credential may still use it.
    assert [t.access_token for t in tokens.load(path).tokens] == ["old-access"]


@pytest.mark.parametrize("auth_method", ["private_key_jwt", "client_secret_post"])
def test_a_token_request_without_the_credential_is_an_auth_error(auth_method: str) -> None:
    with pytest.raises(AuthError, match=auth_method):
        grants.request_tokens(
            HttpOptions(),
            ClientIdentity("c", auth_method),
            cached_token("", token_endpoint="https://as.test/token", issuer="https://as.test"),
            "refresh_token",
            refresh_token="r",
            resource=URL,
            trace=lambda line: None,
        )

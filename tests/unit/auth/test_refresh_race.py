"""Two processes share the token cache: a refresh that failed here (its refresh token rotated
by the other process) must not throw away the token the other process stored."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from mcptask.auth import discovery, grants
from mcptask.auth.config import AuthSettings, HttpOptions
from mcptask.auth.flow import McpAuth
from mcptask.errors import TokenRequestRefused
from mcptask.store import tokens
from mcptask.store.tokens import CachedToken
from tests.unit.auth.support import URL, cached_token

STALE = cached_token(
    "old-access",
    refresh_token="old-refresh",
    expires_at=1.0,  # long expired: it is refreshed before the first request
)
FRESH = replace(STALE, access_token="new-access", refresh_token="new-refresh", expires_at=None)


def test_dropping_a_failed_token_keeps_a_fresh_one_of_its_slot(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    tokens.store_token(path, FRESH)  # the other process's refresh, stored meanwhile
    tokens.drop_token(path, STALE)
    assert [t.access_token for t in tokens.load(path).tokens] == ["new-access"]
    tokens.drop_token(path, FRESH)  # still the one that failed: gone
    assert tokens.load(path).tokens == ()


def test_a_token_stored_by_another_process_survives_a_failed_refresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "tokens.json"
    tokens.store_token(path, STALE)

    def raced_refresh(*args: object, **kwargs: object) -> CachedToken:
        # The other process refreshed first: the server rotated the refresh token, and
        # refuses the old one it was just sent.
        tokens.store_token(path, FRESH)
        raise TokenRequestRefused("the authorization server refused: invalid_grant")

    def no_sign_in(*args: object, **kwargs: object) -> object:
        pytest.fail("signed in anew instead of using the token the other process stored")

    monkeypatch.setattr(grants, "request_tokens", raced_refresh)
    monkeypatch.setattr(discovery, "discover", no_sign_in)
    sent: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request.headers.get("Authorization"))
        ok = request.headers.get("Authorization") == "Bearer new-access"
        return httpx.Response(200 if ok else 401)

    auth = McpAuth(AuthSettings(cache_path=path), URL, http=HttpOptions())
    with httpx.Client(transport=httpx.MockTransport(handler), auth=auth) as client:
        assert client.post(URL, content=b"{}").status_code == 200
    assert sent == ["Bearer new-access"]  # the cache read again before anything was sent
    assert [t.access_token for t in tokens.load(path).tokens] == ["new-access"]

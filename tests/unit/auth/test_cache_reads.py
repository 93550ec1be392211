"""The sign-in flow reads the token cache once, not before every request of a bulk run, and
again after a 401 (a token another process stored meanwhile is then used)."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from mcptask.auth.config import AuthSettings, HttpOptions
from mcptask.auth.flow import McpAuth
from mcptask.store import tokens
from tests.unit.auth.support import URL, cached_token


def test_the_cache_is_read_once_then_again_after_a_401(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache_path = tmp_path / "tokens.json"
    # A cache that holds nothing for this server (an absent one is not even read).
    elsewhere = "https://elsewhere.example/mcp"
    tokens.store_token(cache_path, cached_token("theirs", server=elsewhere, resource=elsewhere))
    reads: list[Path] = []
    real_load = tokens.load

    def counting_load(path: Path) -> tokens.TokenCache:
        reads.append(path)
        return real_load(path)

    monkeypatch.setattr(tokens, "load", counting_load)  # the module flow reads it through
    sent: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request.headers.get("Authorization"))
        if request.headers.get("Authorization") != "Bearer stored-later":
            return httpx.Response(401) if len(sent) > 3 else httpx.Response(200)
        return httpx.Response(200)

    auth = McpAuth(AuthSettings(cache_path=cache_path), URL, http=HttpOptions())
    with httpx.Client(transport=httpx.MockTransport(handler), auth=auth) as client:
        for _ in range(3):
            assert client.post(URL, content=b"{}").status_code == 200
        assert reads == [cache_path]  # three requests, one read of a cache with nothing for URL
        tokens.store_token(
            cache_path,
            cached_token("stored-later", grant="client_credentials"),
        )
        before = len(reads)
        assert client.post(URL, content=b"{}").status_code == 200
        assert len(reads) == before + 1  # the 401 sent the flow back to the cache
    assert sent == [None, None, None, None, "Bearer stored-later"]


def test_an_absent_cache_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reads: list[Path] = []

    def counting_load(path: Path) -> tokens.TokenCache:
        reads.append(path)
        return tokens.TokenCache()

    monkeypatch.setattr(tokens, "load", counting_load)
    auth = McpAuth(AuthSettings(cache_path=tmp_path / "tokens.json"), URL, http=HttpOptions())
    transport = httpx.MockTransport(lambda request: httpx.Response(200))
    with httpx.Client(transport=transport, auth=auth) as client:
        assert client.post(URL, content=b"{}").status_code == 200
    assert reads == []

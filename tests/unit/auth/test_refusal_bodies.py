"""The auth flow reads only the headers of a 401 or 403: a refusal it passes on is left
unread, for the transport to read within its bound; one it retries is read within it too."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from mcptask.auth.config import AuthSettings, HttpOptions
from mcptask.auth.flow import McpAuth
from mcptask.errors import ProtocolViolation
from mcptask.store import tokens
from mcptask.transport.limits import ENV_MAX_ANSWER_BYTES
from tests.unit.auth.support import URL, cached_token

CACHED = cached_token("cached")


def test_a_refusal_passed_on_is_not_read_by_the_flow(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    tokens.store_token(path, CACHED)
    read: list[bytes] = []

    def body() -> Iterator[bytes]:
        for chunk in (b"{", b"}"):
            read.append(chunk)
            yield chunk

    def handler(request: httpx.Request) -> httpx.Response:
        challenge = 'Bearer error="invalid_token"'  # not insufficient_scope: no step-up
        return httpx.Response(403, headers={"WWW-Authenticate": challenge}, content=body())

    auth = McpAuth(AuthSettings(cache_path=path), URL, http=HttpOptions())
    with (
        httpx.Client(transport=httpx.MockTransport(handler), auth=auth) as client,
        client.stream("POST", URL, content=b"{}") as response,
    ):
        assert response.status_code == 403
        assert read == []  # left for the transport, which bounds what it reads


def test_a_refusal_retried_is_read_within_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_MAX_ANSWER_BYTES, "1024")
    path = tmp_path / "tokens.json"
    for client_id, access in (("a", "older"), ("b", "newer")):  # two slots: newest first
        tokens.store_token(path, replace(CACHED, client_id=client_id, access_token=access))

    def huge() -> Iterator[bytes]:
        yield b"x" * 4096  # no Content-Length: only reading finds it too large

    def handler(request: httpx.Request) -> httpx.Response:
        if request.headers["Authorization"] == "Bearer newer":
            return httpx.Response(401, content=huge())
        return httpx.Response(200)

    auth = McpAuth(AuthSettings(cache_path=path), URL, http=HttpOptions())
    with (
        httpx.Client(transport=httpx.MockTransport(handler), auth=auth) as client,
        pytest.raises(ProtocolViolation, match="larger than 1024 bytes"),
    ):
        client.post(URL, content=b"{}")

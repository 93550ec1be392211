"""A token cache entry whose fields have the wrong types is skipped, as an unreadable cache
counts as empty: it never fails a command later."""

from __future__ import annotations

import json
from pathlib import Path

import httpx

from mcptask.auth.config import AuthSettings, HttpOptions
from mcptask.auth.flow import McpAuth
from mcptask.store import tokens

URL = "https://server.test/mcp"
GOOD = {
    "server": URL,
    "issuer": "https://as.test",
    "resource": URL,
    "client_id": "c",
    "grant": "authorization_code",
    "access_token": "good",
    "token_endpoint": "https://as.test/token",
    "auth_method": "none",
    "expires_at": 4102444800,  # an integer, as JSON has it: a number is a number
}


def _write(path: Path, token_entries: list[object], client_entries: list[object]) -> None:
    document = {"version": 1, "tokens": token_entries, "clients": client_entries}
    path.write_text(json.dumps(document))
    path.chmod(0o600)  # as mcptask writes it: a cache others may read is refused


def test_entries_with_wrongly_typed_fields_are_skipped(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    bad_tokens = [
        {**GOOD, "access_token": "dated", "expires_at": "2026-01-01"},
        {**GOOD, "access_token": "flag", "expires_at": True},
        {**GOOD, "access_token": 42},
        {**GOOD, "access_token": "listed", "refresh_token": ["r"]},
    ]
    client = {"issuer": "https://as.test", "client_id": "c", "auth_method": "none"}
    _write(path, [*bad_tokens, GOOD], [{**client, "client_secret": 7}, client])
    cache = tokens.load(path)
    assert [t.access_token for t in cache.tokens] == ["good"]
    assert [c.client_secret for c in cache.clients] == [None]


def test_a_wrongly_typed_expiry_fails_no_request(tmp_path: Path) -> None:
    path = tmp_path / "tokens.json"
    _write(path, [{**GOOD, "expires_at": "2026-01-01"}], [])
    sent: list[str | None] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(request.headers.get("Authorization"))
        return httpx.Response(200)

    auth = McpAuth(AuthSettings(cache_path=path), URL, http=HttpOptions())
    with httpx.Client(transport=httpx.MockTransport(handler), auth=auth) as client:
        assert client.post(URL, content=b"{}").status_code == 200
    assert sent == [None]


def test_every_cached_field_has_its_check() -> None:
    from dataclasses import fields

    for kind in (tokens.CachedToken, tokens.CachedClient):
        for spec in fields(kind):
            assert str(spec.type) in tokens._FIELD_TYPES, f"{kind.__name__}.{spec.name}"


def test_every_cached_field_has_a_type_the_reader_checks() -> None:
    # A field added with another annotation would make every read of the cache fail.
    from dataclasses import fields

    from mcptask.store.tokens import _FIELD_TYPES, CachedClient, CachedToken

    annotations = {str(spec.type) for kind in (CachedToken, CachedClient) for spec in fields(kind)}
    assert annotations <= set(_FIELD_TYPES)

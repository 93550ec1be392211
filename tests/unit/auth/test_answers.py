"""Answers from the URLs OAuth metadata names are read bounded in size and depth: a huge or
deeply nested body is the sign-in's own error (exit 4), never an internal error."""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest

from mcptask.auth import grants
from mcptask.auth.config import HttpOptions
from mcptask.auth.discovery import Challenge, ServerMetadata, discover
from mcptask.auth.grants import ClientIdentity
from mcptask.errors import AuthDiscoveryError, TokenRequestRefused
from mcptask.transport.limits import ENV_MAX_ANSWER_BYTES
from tests.unit.auth.support import cached_token

MCP = "https://mcp.example.com/mcp"
DEEP = b"[" * 100_000 + b"]" * 100_000  # deeper than Python's recursion limit
HUGE = b'{"padding": "' + b"x" * 4096 + b'"}'
"""Larger than the bound the tests that serve it set."""


def _small_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_MAX_ANSWER_BYTES, "2048")


def _serving(body: bytes | Iterator[bytes]) -> httpx.MockTransport:
    return httpx.MockTransport(lambda request: httpx.Response(200, content=body))


def _ignore(line: str) -> None:
    pass


def test_deeply_nested_metadata_counts_as_none() -> None:
    with httpx.Client(transport=_serving(DEEP)) as http:
        found = discover(http, MCP, Challenge())
    assert found is None  # no usable metadata anywhere: no authorization server


def test_metadata_over_the_bound_is_a_discovery_error(monkeypatch: pytest.MonkeyPatch) -> None:
    _small_bound(monkeypatch)
    with (
        httpx.Client(transport=_serving(HUGE)) as http,
        pytest.raises(AuthDiscoveryError, match="larger than 2048 bytes"),
    ):
        discover(http, MCP, Challenge())


def test_metadata_over_the_bound_without_a_length_is_a_discovery_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _small_bound(monkeypatch)

    def chunks() -> Iterator[bytes]:
        yield HUGE[:1000]
        yield HUGE[1000:]

    with (
        httpx.Client(transport=_serving(chunks())) as http,
        pytest.raises(AuthDiscoveryError, match="larger than 2048 bytes"),
    ):
        discover(http, MCP, Challenge())


@pytest.mark.parametrize(("body", "words"), [(DEEP, "without a JSON object"), (HUGE, "larger")])
def test_a_token_answer_too_deep_or_too_large_is_refused(
    monkeypatch: pytest.MonkeyPatch, body: bytes, words: str
) -> None:
    if body is HUGE:
        _small_bound(monkeypatch)
    original = httpx.Client
    monkeypatch.setattr(httpx, "Client", lambda **kwargs: original(transport=_serving(body)))
    with pytest.raises(TokenRequestRefused, match=words):
        grants.request_tokens(
            HttpOptions(),
            ClientIdentity("c", "none"),
            cached_token("", token_endpoint="https://as/token", issuer="https://as"),
            "refresh_token",
            refresh_token="r",
            resource=MCP,
            trace=_ignore,
        )


@pytest.mark.parametrize(("body", "words"), [(DEEP, r"\(HTTP 200\)$"), (HUGE, "larger")])
def test_a_registration_answer_too_deep_or_too_large_is_refused(
    monkeypatch: pytest.MonkeyPatch, body: bytes, words: str
) -> None:
    if body is HUGE:
        _small_bound(monkeypatch)
    metadata = ServerMetadata("https://as", "https://as/a", "https://as/t", "https://as/register")
    with (
        httpx.Client(transport=_serving(body)) as http,
        pytest.raises(TokenRequestRefused, match=words),
    ):
        grants.register(http, metadata, "http://127.0.0.1:1/callback", trace=_ignore)

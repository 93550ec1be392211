"""Sign-in without a network: challenges, discovery order and checks, the token cache."""

from __future__ import annotations

import json
import stat
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from mcptask.auth.config import AuthSettings, HttpOptions, canonical_resource
from mcptask.auth.discovery import (
    ENV_WIDE_RESOURCE,
    Challenge,
    ServerMetadata,
    discover,
    metadata_urls,
    parse_challenge,
    prm_urls,
    resource_matches,
    token_resource,
)
from mcptask.auth.grants import configured_identity
from mcptask.errors import AuthDiscoveryError, SignInRequired
from mcptask.store import tokens
from mcptask.store.tokens import CachedToken
from tests.unit.auth.support import cached_token

MCP = "https://mcp.example.com/tenant/mcp"


def test_the_bearer_challenge_is_read_among_others() -> None:
    challenge = parse_challenge(
        'Basic realm="x", Bearer error="insufficient_scope", scope="a  b", '
        'resource_metadata="https://h/.well-known/oauth-protected-resource/mcp", '
        'error_description="say \\"hi\\", then go", Other k=v'
    )
    assert challenge.error == "insufficient_scope"
    assert challenge.scope == "a b"
    assert challenge.resource_metadata == "https://h/.well-known/oauth-protected-resource/mcp"
    assert challenge.params["error_description"] == 'say "hi", then go'
    assert "k" not in challenge.params
    assert parse_challenge(None) == Challenge()
    assert parse_challenge('Basic realm="x"') == Challenge()


def test_protected_resource_metadata_urls_in_order() -> None:
    named = Challenge({"resource_metadata": "https://mcp.example.com/custom.json"})
    assert prm_urls(MCP, named) == [
        "https://mcp.example.com/custom.json",
        "https://mcp.example.com/.well-known/oauth-protected-resource/tenant/mcp",
        "https://mcp.example.com/.well-known/oauth-protected-resource",
    ]
    assert prm_urls("http://h:8/", Challenge()) == [
        "http://h:8/.well-known/oauth-protected-resource"
    ]
    for elsewhere in ("http://169.254.169.254/latest", "https://mcp.example.com:8443/x"):
        assert prm_urls(MCP, Challenge({"resource_metadata": elsewhere})) == [
            "https://mcp.example.com/.well-known/oauth-protected-resource/tenant/mcp",
            "https://mcp.example.com/.well-known/oauth-protected-resource",
        ]


def test_authorization_server_metadata_urls_in_order() -> None:
    assert metadata_urls("https://as.example.com/tenant1") == [
        "https://as.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://as.example.com/.well-known/openid-configuration/tenant1",
        "https://as.example.com/tenant1/.well-known/openid-configuration",
    ]
    assert metadata_urls("https://as.example.com/") == [
        "https://as.example.com/.well-known/oauth-authorization-server",
        "https://as.example.com/.well-known/openid-configuration",
    ]


@pytest.mark.parametrize(
    ("resource", "matches"),
    [
        (MCP, True),
        (MCP + "/", True),
        ("https://mcp.example.com", True),
        ("https://mcp.example.com/tenant", True),
        ("https://MCP.example.com:443/tenant/mcp", True),
        ("https://mcp.example.com/ten", False),
        ("https://mcp.example.com/other/mcp", False),
        ("https://evil.example.com/tenant/mcp", False),
        ("http://mcp.example.com/tenant/mcp", False),
        ("https://mcp.example.com:8443/tenant/mcp", False),
        ("https://mcp.example.com/tenant/mcp#x", False),
    ],
)
def test_a_resource_must_be_the_server_or_a_parent_of_it(resource: str, matches: bool) -> None:
    assert resource_matches(resource, MCP) is matches


ROOT_PRM = "https://mcp.example.com/.well-known/oauth-protected-resource"
PATH_PRM = ROOT_PRM + "/tenant/mcp"
NAMED_PRM = "https://mcp.example.com/tenant/prm.json"


@pytest.mark.parametrize(
    ("resource", "found_at", "asked"),
    [
        # The server itself: as published (RFC 9728 §3.3 identity), trailing slash and all.
        (MCP + "/", PATH_PRM, MCP + "/"),
        (MCP, NAMED_PRM, MCP),
        # The root document describes the origin: its identifier is the origin's.
        ("https://mcp.example.com", ROOT_PRM, "https://mcp.example.com"),
        ("https://mcp.example.com/", ROOT_PRM, "https://mcp.example.com/"),
        # A parent path anywhere else would widen the audience: the server's own URL.
        ("https://mcp.example.com/tenant", ROOT_PRM, MCP),
        ("https://mcp.example.com/", PATH_PRM, MCP),
        ("https://mcp.example.com", NAMED_PRM, MCP),
    ],
)
def test_tokens_are_asked_for_the_server_not_a_parent(
    resource: str, found_at: str, asked: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV_WIDE_RESOURCE, raising=False)
    lines: list[str] = []
    assert token_resource(resource, MCP, found_at, lines.append) == asked
    assert bool(lines) is (asked != resource)  # -v says when it narrows


def test_a_wide_resource_is_asked_for_only_when_opted_in(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_WIDE_RESOURCE, "1")
    lines: list[str] = []
    assert token_resource("https://mcp.example.com/", MCP, PATH_PRM, lines.append) == (
        "https://mcp.example.com/"
    )
    assert ENV_WIDE_RESOURCE in lines[0]


def test_canonical_resource() -> None:
    assert canonical_resource("HTTPS://Mcp.Example.com/mcp/?q=1#f") == "https://mcp.example.com/mcp"
    assert canonical_resource("http://h:8/") == "http://h:8"


Handler = Callable[[httpx.Request], httpx.Response]


def _client(documents: dict[str, object]) -> tuple[httpx.Client, list[str]]:
    asked: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        asked.append(str(request.url))
        document = documents.get(str(request.url))
        if document is None:
            return httpx.Response(404)
        return httpx.Response(200, json=document)

    return httpx.Client(transport=httpx.MockTransport(handle)), asked


def _as(issuer: str, **extra: object) -> dict[str, object]:
    return {"issuer": issuer, "token_endpoint": issuer + "/token", **extra}


def test_discovery_asks_for_the_server_when_its_metadata_names_the_origin(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv(ENV_WIDE_RESOURCE, raising=False)
    wide = {"resource": "https://mcp.example.com/", "authorization_servers": ["https://as"]}
    issuer = {"https://as/.well-known/oauth-authorization-server": _as("https://as")}
    for found_at, asked in ((PATH_PRM, MCP), (ROOT_PRM, "https://mcp.example.com/")):
        client, _ = _client({found_at: wide, **issuer})
        found = discover(client, MCP, Challenge())
        assert found is not None
        assert found.resource == asked


def test_discovery_follows_the_mcp_order_and_stops_at_the_first_answer() -> None:
    prm = {
        "resource": MCP,
        "authorization_servers": ["https://as.example.com/tenant1"],
        "scopes_supported": ["tasks"],
    }
    client, asked = _client(
        {
            "https://mcp.example.com/.well-known/oauth-protected-resource/tenant/mcp": prm,
            "https://as.example.com/tenant1/.well-known/openid-configuration": _as(
                "https://as.example.com/tenant1", authorization_endpoint="https://as/a"
            ),
        }
    )
    found = discover(client, MCP, Challenge())
    assert found is not None
    assert found.resource == MCP
    assert found.scopes_supported == ("tasks",)
    assert found.metadata.token_endpoint == "https://as.example.com/tenant1/token"
    assert not found.legacy
    assert asked == [
        "https://mcp.example.com/.well-known/oauth-protected-resource/tenant/mcp",
        "https://as.example.com/.well-known/oauth-authorization-server/tenant1",
        "https://as.example.com/.well-known/openid-configuration/tenant1",
        "https://as.example.com/tenant1/.well-known/openid-configuration",
    ]


def test_a_foreign_resource_or_issuer_is_refused() -> None:
    prm_url = "https://mcp.example.com/.well-known/oauth-protected-resource/tenant/mcp"
    evil = {"resource": "https://evil.example.com/mcp", "authorization_servers": ["https://as"]}
    client, _ = _client({prm_url: evil})
    with pytest.raises(AuthDiscoveryError, match=r"evil\.example\.com"):
        discover(client, MCP, Challenge())
    honest = {"resource": MCP, "authorization_servers": ["https://as.example.com"]}
    client, _ = _client(
        {
            prm_url: honest,
            "https://as.example.com/.well-known/oauth-authorization-server": _as("https://x.org"),
        }
    )
    with pytest.raises(AuthDiscoveryError, match="issuer"):
        discover(client, MCP, Challenge())


def test_a_2025_03_26_server_falls_back_to_its_origin() -> None:
    origin_metadata = "https://mcp.example.com/.well-known/oauth-authorization-server"
    client, asked = _client({origin_metadata: _as("https://mcp.example.com")})
    found = discover(client, MCP, Challenge())
    assert found is not None
    assert found.legacy
    assert found.resource == MCP
    assert found.metadata.token_endpoint == "https://mcp.example.com/token"
    assert asked[-1] == origin_metadata
    client, _ = _client(
        {
            "https://mcp.example.com/.well-known/oauth-authorization-server": _as(
                "https://elsewhere.example.com"
            )
        }
    )
    with pytest.raises(AuthDiscoveryError, match="another origin"):
        discover(client, MCP, Challenge())


def test_no_metadata_at_all_is_no_authorization_server_and_no_guessed_endpoint() -> None:
    client, asked = _client({})
    assert discover(client, MCP, Challenge()) is None
    assert asked == [
        "https://mcp.example.com/.well-known/oauth-protected-resource/tenant/mcp",
        "https://mcp.example.com/.well-known/oauth-protected-resource",
        "https://mcp.example.com/.well-known/oauth-authorization-server",
    ]


def test_the_client_authenticates_as_the_server_lists(tmp_path: Path) -> None:
    metadata = ServerMetadata("https://as", "https://as/a", "https://as/t")
    secret = AuthSettings(client_id="c", client_secret="s3cr3t-value", client_issuer="https://as/")
    assert "s3cr3t-value" not in repr(secret)
    for unbound in (
        replace(secret, client_issuer=None),
        replace(secret, client_issuer="https://b"),
    ):
        with pytest.raises(SignInRequired, match="not bound"):
            configured_identity(unbound, metadata)
    identity = configured_identity(secret, metadata)
    assert identity is not None
    assert identity.auth_method == "client_secret_basic"
    post = ServerMetadata(
        "https://as", None, "https://as/t", token_endpoint_auth_methods=("client_secret_post",)
    )
    identity = configured_identity(secret, post)
    assert identity is not None
    assert identity.auth_method == "client_secret_post"
    assert "s3cr3t-value" not in repr(identity)
    only_jwt = ServerMetadata(
        "https://as", None, "https://as/t", token_endpoint_auth_methods=("private_key_jwt",)
    )
    with pytest.raises(AuthDiscoveryError, match="client-key-file"):
        configured_identity(secret, only_jwt)


def _token(server: str, access: str, **extra: object) -> CachedToken:
    fields: dict[str, object] = {
        "server": server,
        "issuer": "https://as",
        "resource": server,
        "client_id": "c",
        "grant": "authorization_code",
        "access_token": access,
        "token_endpoint": "https://as/token",
        "auth_method": "none",
        **extra,
    }
    return CachedToken(**fields)  # type: ignore[arg-type]


def test_the_token_cache_is_private_atomic_and_forgetful(tmp_path: Path) -> None:
    path = tmp_path / "state" / "tokens.json"
    tokens.store_token(path, _token("https://a/mcp", "one"))
    tokens.store_token(path, _token("https://a/mcp", "two"))  # same slot: replaced
    tokens.store_token(path, _token("https://b/mcp", "three"))
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    cache = tokens.load(path)
    assert [t.access_token for t in cache.for_server("https://a/mcp")] == ["two"]
    assert "two" not in repr(cache.for_server("https://a/mcp")[0])
    removed = tokens.forget_server(path, "https://a/mcp")
    assert [t.access_token for t in removed] == ["two"]
    assert [t.server for t in tokens.load(path).tokens] == ["https://b/mcp"]
    path.write_text("{not json")
    assert tokens.load(path).tokens == ()
    tokens.store_token(path, _token("https://c/mcp", "four"))
    assert json.loads(path.read_text())["version"] == 1


def test_expiry_has_a_leeway_that_fits_short_lives() -> None:
    now = 1000.0
    long_lived = _token("s", "t", expires_at=now + 20, issued_at=now - 3580)
    assert long_lived.expired(now)  # within 30 s of the end
    short = _token("s", "t", expires_at=now + 2, issued_at=now - 2)
    assert not short.expired(now)  # a 4 s token: the leeway is 1 s
    assert _token("s", "t").expired(now) is False  # no expiry stated


def test_a_server_that_quotes_a_secret_back_is_scrubbed(tmp_path: Path) -> None:
    from mcptask.auth import grants
    from mcptask.auth.grants import ClientIdentity
    from mcptask.errors import TokenRequestRefused
    from mcptask.transport.redact import scrub

    assert scrub("bad secret hunter2-long in hunter2-long", ["hunter2-long", None, ""]) == (
        "bad secret <redacted> in <redacted>"
    )

    def echo(request: httpx.Request) -> httpx.Response:
        body = request.content.decode()
        return httpx.Response(400, json={"error": "invalid_grant", "error_description": body})

    original = httpx.Client

    def client(**kwargs: object) -> httpx.Client:
        return original(transport=httpx.MockTransport(echo))

    identity = ClientIdentity("c", "client_secret_post", client_secret="hunter2-long")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(httpx, "Client", client)
        with pytest.raises(TokenRequestRefused) as refused:
            grants.request_tokens(
                HttpOptions(),
                identity,
                cached_token("", token_endpoint="https://as/token", issuer="https://as"),
                "refresh_token",
                refresh_token="refresh-me-please",
                resource="https://mcp/mcp",
                trace=lambda line: None,
            )
    assert "invalid_grant" in refused.value.message
    assert "hunter2-long" not in refused.value.message
    assert "refresh-me-please" not in refused.value.message

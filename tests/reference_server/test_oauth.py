"""The reference server's authorization server, request in and response out (no sockets)."""

from __future__ import annotations

import base64
import hashlib
import json
import time
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import pytest

from mcptask.reference_server.config import OAuthConfig
from mcptask.reference_server.oauth.clients import Client
from mcptask.reference_server.oauth.server import (
    AUTHORIZE_PATH,
    METADATA_PATH,
    PRM_PATH,
    REGISTER_PATH,
    TOKEN_PATH,
    AuthorizationServer,
    Request,
)

BASE = "http://127.0.0.1:9"
RESOURCE = BASE + "/mcp"
REDIRECT = "http://127.0.0.1:5555/callback"
VERIFIER = "v" * 50


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


def challenge(verifier: str = VERIFIER) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def server(clock: Clock) -> AuthorizationServer:
    config = OAuthConfig(
        token_ttl_seconds=60,
        clients=(Client("ci", "client_secret_basic", "ci-secret", preregistered=True),),
    )
    return AuthorizationServer(config, clock=clock)


def call(server: AuthorizationServer, method: str, path: str, **kwargs: Any) -> Any:
    answer = server.handle(Request(method, path, **kwargs), BASE)
    body = (
        json.loads(answer.body)
        if answer.headers.get("Content-Type") == "application/json"
        else None
    )
    return answer.status, body, answer.headers


def register(server: AuthorizationServer, method: str = "none") -> dict[str, Any]:
    document = {
        "redirect_uris": ["http://127.0.0.1/callback"],
        "token_endpoint_auth_method": method,
    }
    status, body, _ = call(server, "POST", REGISTER_PATH, body=json.dumps(document).encode())
    assert status == 201
    result: dict[str, Any] = body
    return result


def authorize(server: AuthorizationServer, client_id: str, **extra: str) -> dict[str, list[str]]:
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "state": "st",
        "code_challenge": challenge(),
        "code_challenge_method": "S256",
        "resource": RESOURCE,
        "scope": "tasks:read",
        **extra,
    }
    status, _, headers = call(server, "GET", AUTHORIZE_PATH, query=urlencode(query))
    assert status == 302
    location = headers["Location"]
    assert location.startswith(REDIRECT + "?")
    return parse_qs(urlsplit(location).query)


def token(server: AuthorizationServer, **form: str) -> tuple[int, Any]:
    status, body, _ = call(
        server, "POST", TOKEN_PATH, body=urlencode({"resource": RESOURCE, **form}).encode()
    )
    return status, body


def test_the_metadata_documents(server: AuthorizationServer) -> None:
    _, prm, _ = call(server, "GET", PRM_PATH)
    assert prm["resource"] == RESOURCE
    assert prm["authorization_servers"] == [BASE]
    _, metadata, _ = call(server, "GET", METADATA_PATH)
    assert metadata["issuer"] == BASE
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert "client_credentials" in metadata["grant_types_supported"]


def test_code_with_pkce_then_refresh_with_rotation(
    server: AuthorizationServer, clock: Clock
) -> None:
    client = register(server)
    redirect = authorize(server, client["client_id"])
    assert redirect["state"] == ["st"]
    assert redirect["iss"] == [BASE]
    code = redirect["code"][0]
    form = {"client_id": client["client_id"], "redirect_uri": REDIRECT, "code": code}
    status, body = token(server, grant_type="authorization_code", code_verifier="w" * 50, **form)
    assert (status, body["error"]) == (400, "invalid_grant")  # the wrong verifier
    redirect = authorize(server, client["client_id"])
    form["code"] = redirect["code"][0]
    status, issued = token(server, grant_type="authorization_code", code_verifier=VERIFIER, **form)
    assert status == 200
    assert issued["scope"] == "tasks:read"
    status, again = token(server, grant_type="authorization_code", code_verifier=VERIFIER, **form)
    assert (status, again["error"]) == (400, "invalid_grant")  # a code is used once
    bearer = f"Bearer {issued['access_token']}"
    assert server.check_bearer(bearer, BASE, "tasks/list") is None
    refused = server.check_bearer(bearer, BASE, "tasks/cancel")
    assert refused is not None
    assert refused.status == 403
    assert 'error="insufficient_scope"' in refused.challenge
    clock.now += 61
    expired = server.check_bearer(bearer, BASE, None)
    assert expired is not None
    assert expired.status == 401
    assert f'resource_metadata="{BASE}{PRM_PATH}"' in expired.challenge
    refresh = {"client_id": client["client_id"], "refresh_token": issued["refresh_token"]}
    status, renewed = token(server, grant_type="refresh_token", **refresh)
    assert status == 200
    assert renewed["refresh_token"] != issued["refresh_token"]
    status, reused = token(server, grant_type="refresh_token", **refresh)
    assert (status, reused["error"]) == (400, "invalid_grant")  # rotated away


def test_the_authorize_endpoint_refuses_what_it_must(server: AuthorizationServer) -> None:
    client = register(server)
    status, _, headers = call(
        server,
        "GET",
        AUTHORIZE_PATH,
        query=urlencode({"client_id": client["client_id"], "redirect_uri": "https://evil/cb"}),
    )
    assert status == 400
    assert "Location" not in headers
    assert authorize(server, client["client_id"], code_challenge_method="plain")["error"] == [
        "invalid_request"
    ]
    assert authorize(server, client["client_id"], resource="http://other/mcp")["error"] == [
        "invalid_target"
    ]


def test_client_credentials_by_basic_and_post(server: AuthorizationServer) -> None:
    basic = "Basic " + base64.b64encode(b"ci:ci-secret").decode()
    status, body, _ = call(
        server,
        "POST",
        TOKEN_PATH,
        body=urlencode({"grant_type": "client_credentials", "resource": RESOURCE}).encode(),
        authorization=basic,
    )
    assert status == 200
    assert "refresh_token" not in body
    status, body = token(
        server, grant_type="client_credentials", client_id="ci", client_secret="wrong"
    )
    assert (status, body["error"]) == (401, "invalid_client")
    status, body = token(
        server, grant_type="client_credentials", client_id="ci", client_secret="ci-secret"
    )
    assert status == 200
    assert body["scope"] == "tasks:read tasks:write"
    public = register(server)
    status, body = token(server, grant_type="client_credentials", client_id=public["client_id"])
    assert (status, body["error"]) == (400, "unauthorized_client")


def test_client_credentials_by_jwt_assertion(clock: Clock) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    from mcptask.auth.grants import ClientIdentity, signing_algorithm

    key = ec.generate_private_key(ec.SECP256R1())
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    server = AuthorizationServer(
        OAuthConfig(
            clients=(Client("robot", "private_key_jwt", public_key_pem=public, preregistered=True),)
        ),
        clock=clock,
    )
    from authlib.oauth2.auth import ClientAuth
    from authlib.oauth2.rfc7523 import PrivateKeyJWT

    identity = ClientIdentity("robot", "private_key_jwt", private_key=private)
    signer, alg = signing_algorithm(private, ("ES256",))
    auth = ClientAuth(identity.client_id, signer, PrivateKeyJWT(BASE + TOKEN_PATH, alg=alg))
    clock.now = time.time()
    body = urlencode({"grant_type": "client_credentials", "resource": RESOURCE})
    _, _, signed = auth.prepare("POST", BASE + TOKEN_PATH, {}, body)
    status, answer, _ = call(server, "POST", TOKEN_PATH, body=signed.encode())
    assert status == 200, answer
    status, answer, _ = call(server, "POST", TOKEN_PATH, body=signed.encode())
    assert (status, answer["error"]) == (401, "invalid_client")  # a replayed assertion

"""Attacks on the --oauth demo's authorization codes: a code is worth nothing to another
client, at another redirect_uri, without its PKCE verifier, or a second time; and the
authorization endpoint never sends a code to a redirect_uri the client did not register."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterator
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx
import pytest

from tests.reference_server_process import start_reference_server, stop_process
from tests.security.reference_server_peers import TIMEOUT, origin_of

REDIRECT = "http://127.0.0.1:5555/callback"
VERIFIER = "correct-horse-battery-staple-" + "v" * 30


def s256(verifier: str) -> str:
    digest = hashlib.sha256(verifier.encode()).digest()
    return base64.urlsafe_b64encode(digest).rstrip(b"=").decode()


@pytest.fixture
def base() -> Iterator[str]:
    url, proc = start_reference_server("--oauth")
    try:
        yield origin_of(url)
    finally:
        stop_process(proc)


def register(base: str) -> str:
    answer = httpx.post(
        base + "/oauth/register",
        json={"redirect_uris": [REDIRECT], "token_endpoint_auth_method": "none"},
        timeout=TIMEOUT,
    )
    assert answer.status_code == 201, answer.text
    client_id: str = answer.json()["client_id"]
    return client_id


def authorize(base: str, client_id: str, **overrides: str) -> httpx.Response:
    query = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": REDIRECT,
        "code_challenge": s256(VERIFIER),
        "code_challenge_method": "S256",
        "state": "st",
        **overrides,
    }
    return httpx.get(f"{base}/oauth/authorize?{urlencode(query)}", timeout=TIMEOUT)


def code_for(base: str, client_id: str) -> str:
    answer = authorize(base, client_id)
    assert answer.status_code == 302
    return parse_qs(urlsplit(answer.headers["Location"]).query)["code"][0]


def redeem(base: str, client_id: str, code: str, **overrides: str) -> httpx.Response:
    form = {
        "grant_type": "authorization_code",
        "client_id": client_id,
        "code": code,
        "redirect_uri": REDIRECT,
        "code_verifier": VERIFIER,
        **overrides,
    }
    return httpx.post(base + "/oauth/token", data=form, timeout=TIMEOUT)


def refused(answer: httpx.Response) -> bool:
    return answer.status_code == 400 and answer.json()["error"] == "invalid_grant"


def test_a_code_is_bound_to_its_client_redirect_and_verifier(base: str) -> None:
    alice, mallory = register(base), register(base)
    assert refused(redeem(base, mallory, code_for(base, alice)))  # stolen by another client
    assert refused(redeem(base, alice, code_for(base, alice), redirect_uri=REDIRECT + "x"))
    assert refused(redeem(base, alice, code_for(base, alice), code_verifier="w" * 50))
    assert refused(redeem(base, alice, code_for(base, alice), code_verifier=""))
    code = code_for(base, alice)
    assert redeem(base, alice, code).status_code == 200
    assert refused(redeem(base, alice, code))  # replayed


def test_no_code_goes_to_an_unregistered_redirect_or_without_pkce(base: str) -> None:
    alice = register(base)
    for evil in ("https://evil.example/callback", "http://127.0.0.1.evil.example/callback"):
        answer = authorize(base, alice, redirect_uri=evil)
        assert answer.status_code == 400
        assert "Location" not in answer.headers
    for weak in ({"code_challenge_method": "plain"}, {"code_challenge": "short"}):
        answer = authorize(base, alice, **weak)
        query = parse_qs(urlsplit(answer.headers["Location"]).query)
        assert "code" not in query
        assert query["error"] == ["invalid_request"]

"""Attacks of a web page on a reference server bound to loopback (DNS rebinding, and
cross-site requests), and an open bind nobody was warned about."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.reference_server_process import start_reference_server, stop_process
from tests.security.reference_server_peers import POST_HEADERS, TIMEOUT, origin_of

OAUTH_PATHS = (
    "/.well-known/oauth-protected-resource/mcp",
    "/.well-known/oauth-authorization-server",
    "/oauth/register",
    "/oauth/token",
    "/oauth/authorize",
)
INITIALIZE = json.dumps(
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25"}}
)


@pytest.fixture
def oauth_url() -> Iterator[str]:
    url, proc = start_reference_server("--oauth", "--seed", "working=1")
    try:
        yield url
    finally:
        stop_process(proc)


def test_a_foreign_origin_is_refused_on_every_path(oauth_url: str) -> None:
    base = origin_of(oauth_url)
    evil = {"Origin": "https://evil.example"}
    for path in (*OAUTH_PATHS, "/mcp", "/elsewhere"):
        for method in ("GET", "POST"):
            answer = httpx.request(method, base + path, headers=evil, timeout=TIMEOUT)
            assert answer.status_code == 403, (method, path, answer.text)
    # A loopback origin (the sign-in callback page, a local tool) still passes.
    local = {"Origin": base}
    metadata = httpx.get(base + OAUTH_PATHS[1], headers=local, timeout=TIMEOUT)
    assert metadata.status_code == 200


def test_a_rebound_host_name_is_refused(oauth_url: str) -> None:
    """A page of evil.example whose name now resolves to 127.0.0.1 sends Host: evil.example:
    it must neither reach /mcp nor make the metadata name it as the issuer."""
    base = origin_of(oauth_url)
    port = urlsplit(oauth_url).port
    for host in (f"evil.example:{port}", "evil.example", f"127.0.0.1:{port}.evil.example"):
        rebound = {"Host": host}
        for path in OAUTH_PATHS[:2]:
            answer = httpx.get(base + path, headers=rebound, timeout=TIMEOUT)
            assert answer.status_code == 421, (host, path, answer.text)
            assert "evil" not in answer.text.replace(host, "")
        post = httpx.post(
            oauth_url, content=INITIALIZE, headers={**POST_HEADERS, **rebound}, timeout=TIMEOUT
        )
        assert post.status_code == 421
    # Loopback names pass, with any port: a TLS terminator or proxy in front has its own.
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "LOCALHOST:8443", "[::1]:1"):
        answer = httpx.get(base + OAUTH_PATHS[1], headers={"Host": host}, timeout=TIMEOUT)
        assert answer.status_code == 200
        assert answer.json()["issuer"] == f"http://{host}"


def stderr_after_stop(*args: str) -> str:
    """What a server started with `args` wrote on stderr, once stopped."""
    _url, proc = start_reference_server(*args)
    stop_process(proc)
    return proc.stderr_text(wait=5)


def test_an_open_bind_without_a_token_is_warned_about(tmp_path: Path) -> None:
    warned = stderr_after_stop("--http", "0.0.0.0:0")
    assert "warning: listening on 0.0.0.0" in warned
    assert "without --oauth or --require-token" in warned
    token = tmp_path / "token"
    token.write_text("s3cret\n")
    assert "warning" not in stderr_after_stop(
        "--http", "0.0.0.0:0", "--require-token-file", str(token)
    )
    assert "warning" not in stderr_after_stop("--http", "0.0.0.0:0", "--oauth")
    assert "warning" not in stderr_after_stop("--http", "127.0.0.1:0")

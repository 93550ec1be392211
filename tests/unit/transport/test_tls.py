"""`mcptask.transport.tls`: http:// never builds a TLS context, https:// gets one that
verifies, and a proxy in the environment leaves the transport to httpx (which applies it).
End to end against real HTTPS and proxy servers: tests/integration/test_tls_and_proxies.py."""

from __future__ import annotations

import ssl
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest

from mcptask.transport.tls import ByScheme, endpoint_transport


class Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("Content-Length", "5")
        self.end_headers()
        self.wfile.write(b"hello")

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def plain_url() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), Hello)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def built(monkeypatch: pytest.MonkeyPatch) -> list[ssl.SSLContext | bool]:
    """The `verify` of every httpx transport (connection pool) made from now on."""
    made: list[ssl.SSLContext | bool] = []

    class Recording(httpx.HTTPTransport):
        def __init__(self, *, verify: ssl.SSLContext | bool) -> None:
            made.append(verify)
            super().__init__(verify=verify)

    monkeypatch.setattr(httpx, "HTTPTransport", Recording)
    return made


def test_plain_http_builds_no_tls_context(
    plain_url: str, built: list[ssl.SSLContext | bool]
) -> None:
    with httpx.Client(transport=ByScheme(True)) as client:
        assert client.get(plain_url).text == "hello"
    assert built == [False]  # the plain pool only: no CA bundle was loaded


def test_https_is_verified_with_what_it_was_given(built: list[ssl.SSLContext | bool]) -> None:
    context = ssl.create_default_context()
    # Nothing listens there: only the pool it reaches for matters.
    with httpx.Client(transport=ByScheme(context)) as client, pytest.raises(httpx.ConnectError):
        client.get("https://127.0.0.1:9/")
    assert built == [False, context]  # the verifying context, not the plain pool's
    assert context.verify_mode is ssl.CERT_REQUIRED


@pytest.mark.parametrize("variable", ["HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "https_proxy"])
def test_a_proxy_in_the_environment_leaves_the_transport_to_httpx(
    variable: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    assert isinstance(endpoint_transport(True), ByScheme)
    monkeypatch.setenv(variable, "http://127.0.0.1:3128")
    assert endpoint_transport(True) is None


def test_no_proxy_alone_keeps_the_fast_transport(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    assert isinstance(endpoint_transport(True), ByScheme)

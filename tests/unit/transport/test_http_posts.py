"""The transport's POSTs reach the server exactly as `httpx.Client` sends them: its headers,
timeouts, cookies, Basic credentials from the URL and auth flows."""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Generator

import httpx
import pytest

from mcptask.errors import AuthError
from mcptask.protocol.jsonrpc import request_message
from mcptask.transport.http import HttpTransport

URL = "https://server.test:8080/mcp?x=1"
Handler = Callable[[httpx.Request], httpx.Response]


def answering(seen: list[httpx.Request], *, cookie: str | None = None) -> Handler:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        body = json.loads(request.content)
        headers = {"Set-Cookie": cookie} if cookie and body["method"] == "initialize" else {}
        return httpx.Response(
            200, json={"jsonrpc": "2.0", "id": body["id"], "result": {}}, headers=headers
        )

    return handler


def wire(request: httpx.Request) -> tuple[str, str, list[tuple[bytes, bytes]], bytes, object]:
    """What a request puts on the wire, and the timeouts the transport is given."""
    return (
        request.method,
        str(request.url),
        request.headers.raw,
        request.content,
        request.extensions.get("timeout"),
    )


def test_posts_carry_what_the_client_would_send() -> None:
    seen: list[httpx.Request] = []
    ours = HttpTransport(
        URL, transport=httpx.MockTransport(answering(seen)), headers={"X-Team": "ops"}, timeout=7
    )
    ours.protocol_version = "2025-11-25"
    message = request_message(4, "tasks/get", {"taskId": "t"})
    steps = [("s-1", None), ("s-1", 2.5), ("s-2", None), ("s-1", None)]
    sent_headers = []
    for session, timeout in steps:
        ours.session_id = session
        sent_headers.append(ours._headers())
        ours.request(message, timeout=timeout)

    expected: list[httpx.Request] = []
    client = httpx.Client(
        transport=httpx.MockTransport(answering(expected)),
        headers={"X-Team": "ops"},
        timeout=httpx.Timeout(7),
    )
    body = json.dumps(message, separators=(",", ":")).encode()
    for headers, (_, timeout) in zip(sent_headers, steps, strict=True):
        given = httpx.USE_CLIENT_DEFAULT if timeout is None else httpx.Timeout(timeout)
        request = client.build_request("POST", URL, content=body, headers=headers, timeout=given)
        client.send(request).read()

    assert [wire(r) for r in seen] == [wire(r) for r in expected]
    assert (b"User-Agent", f"python-httpx/{httpx.__version__}".encode()) in seen[0].headers.raw
    assert seen[0].headers["Host"] == "server.test:8080"


def test_a_cookie_the_server_sets_goes_back_on_later_posts() -> None:
    seen: list[httpx.Request] = []
    transport = HttpTransport(
        URL, transport=httpx.MockTransport(answering(seen, cookie="affinity=node-7; Path=/"))
    )
    transport.request(request_message(1, "initialize", {}))
    transport.request(request_message(2, "tasks/list", {}))
    assert "Cookie" not in seen[0].headers
    assert seen[1].headers["Cookie"] == "affinity=node-7"


def test_userinfo_in_the_url_is_sent_as_basic_credentials() -> None:
    seen: list[httpx.Request] = []
    transport = HttpTransport(
        "http://ops:s3cret@server.test/mcp", transport=httpx.MockTransport(answering(seen))
    )
    transport.request(request_message(1, "ping", None))
    assert seen[0].headers["Authorization"] == "Basic " + base64.b64encode(b"ops:s3cret").decode()
    assert seen[0].headers["Host"] == "server.test"


class TokenOn401(httpx.Auth):
    """Sends no token until refused, then one; a second refusal stands."""

    def __init__(self) -> None:
        self.refused_bodies: list[bytes] = []

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        response = yield request
        if response.status_code == 401:
            self.refused_bodies.append(response.content)  # read before the retry
            request.headers["Authorization"] = "Bearer fresh"
            yield request


def test_the_auth_flow_retries_a_refused_post_with_its_token() -> None:
    sent: list[tuple[str | None, bytes]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append((request.headers.get("Authorization"), request.content))
        if request.headers.get("Authorization") != "Bearer fresh":
            return httpx.Response(401, content=b"sign in first")
        return answering([])(request)

    auth = TokenOn401()
    transport = HttpTransport(URL, transport=httpx.MockTransport(handler), auth=auth)
    answer = transport.request(request_message(9, "tasks/get", {"taskId": "t"}))
    assert answer["id"] == 9
    assert "result" in answer
    assert [token for token, _ in sent] == [None, "Bearer fresh"]
    assert sent[0][1] == sent[1][1]
    assert auth.refused_bodies == [b"sign in first"]


def test_a_refusal_the_flow_lets_stand_reaches_the_transport_checks() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(401, headers={"WWW-Authenticate": 'Bearer realm="x"'})

    transport = HttpTransport(URL, transport=httpx.MockTransport(handler), auth=TokenOn401())
    with pytest.raises(AuthError, match="HTTP 401") as caught:
        transport.request(request_message(1, "tasks/get", {"taskId": "t"}))
    assert 'realm="x"' in caught.value.message


def test_a_host_header_of_the_users_own_is_sent_once_as_httpx_would() -> None:
    seen: list[httpx.Request] = []
    transport = HttpTransport(
        URL, transport=httpx.MockTransport(answering(seen)), headers={"Host": "mcp.example"}
    )
    transport.request(request_message(1, "ping", None))
    assert seen[0].headers.get_list("Host") == ["mcp.example"]

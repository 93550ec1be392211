"""Sending the transport's POSTs through its httpx transport, past `httpx.Client.send`.

`Client.send` wraps every request in work that a POST to an MCP endpoint mostly does not
need: urllib's cookie jar run over every response, a timing wrapper around its body,
redirect bookkeeping and a log record, on top of `build_request` parsing the URL again. On
a bulk cancel (one POST per task, and one per confirmation) that layer cost about a fifth
of the client's CPU per request (`python bench/get_cpu.py`: 0.59 ms per tasks/get through
the Client, 0.49 ms past it, JSON answers). `send_post` does the part of it that applies to
these POSTs, the auth flow (tokens, sign-in on 401) and cookies when a server sets any, and
hands the request to the same transport: its pool, connections and keep-alive draining are
the Client's own. Redirects are not followed, as the Client (`follow_redirects` off) does
not follow them either.
"""

from __future__ import annotations

import httpx

POST = "POST"


def basic_auth(url: httpx.URL) -> httpx.Auth | None:
    """The Basic credentials of the URL's userinfo, as the Client sends them when it has no
    other auth (`http://user:pass@host/mcp`)."""
    if url.username or url.password:
        return httpx.BasicAuth(url.username, url.password)
    return None


def post_request(
    url: httpx.URL,
    content: bytes,
    *,
    base_headers: httpx.Headers,
    headers: dict[str, str],
    timeout: httpx.Timeout,
    cookies: httpx.Cookies,
) -> httpx.Request:
    """The request `Client.build_request` would make: the client's headers under the
    request's own, its cookies, and the timeout as the transport reads it."""
    merged = httpx.Headers(base_headers)
    merged.update(headers)
    return httpx.Request(
        POST,
        url,
        content=content,
        headers=merged,
        cookies=cookies if cookies.jar else None,
        extensions={"timeout": timeout.as_dict()},
    )


def send_post(
    transport: httpx.BaseTransport,
    request: httpx.Request,
    *,
    auth: httpx.Auth | None,
    cookies: httpx.Cookies,
) -> httpx.Response:
    """Send `request` as `Client.send(request, stream=True)` would: through `auth`'s flow
    (each refused response read before the request goes again), keeping the cookies that
    answers set. The response is open; the caller closes it."""
    if auth is None:
        return _send_once(transport, request, cookies)
    flow = auth.sync_auth_flow(request)
    try:
        request = next(flow)
        while True:
            response = _send_once(transport, request, cookies)
            try:
                next_request = flow.send(response)
            except StopIteration:
                return response
            except BaseException:
                response.close()
                raise
            try:  # the refused answer is read before the flow's next request
                response.read()
            finally:
                response.close()
            request = next_request
    finally:
        flow.close()


def _send_once(
    transport: httpx.BaseTransport, request: httpx.Request, cookies: httpx.Cookies
) -> httpx.Response:
    response = transport.handle_request(request)
    response.request = request
    # urllib's cookie jar is slow to run over every answer; an answer without Set-Cookie
    # would leave it unchanged anyway.
    if "set-cookie" in response.headers:
        cookies.extract_cookies(response)
    return response

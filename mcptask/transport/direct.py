"""Sending the transport's POSTs through its httpx transport, past `httpx.Client.send`.

`Client.send` wraps every request in work that a POST to an MCP endpoint mostly does not
need: urllib's cookie jar run over every response, a timing wrapper around its body,
redirect bookkeeping and a log record, on top of `build_request` parsing the URL and
merging the headers again. A bulk cancel makes one POST per task, and one per
confirmation. `Posts` makes the request `build_request` would (its header lines
merged once per header set), and `send_post` does the part of `send` that applies (the auth
flow: tokens, sign-in on 401; cookies when a server sets any) and hands it to the same
transport: its pool, connections and keep-alive draining are the Client's own. Redirects
are not followed, as the Client (`follow_redirects` off) does not follow them either.

Client CPU per tasks/get (`python bench/get_cpu.py`, JSON answers): 1.19x the raw httpx
script through the Client, 0.73x this way.
"""

from __future__ import annotations

import httpx

POST = "POST"


def basic_auth(url: httpx.URL) -> httpx.Auth | None:
    """The Basic credentials of the URL's userinfo, as the Client sends them when it has no
    other auth (`http://user:pass@host/mcp`; what httpx's private `_build_request_auth`
    does)."""
    if url.username or url.password:
        return httpx.BasicAuth(url.username, url.password)
    return None


class Posts:
    """The POSTs of one transport to one URL: built as `Client.build_request` would build
    them (the client's headers under the request's own, its cookies, the timeout as the
    transport reads it, then Host and Content-Length as httpx adds them), and sent to
    `wire`, the client's httpx transport, by `send_post`. With no `wire` (a proxy from the
    environment, reached by httpx's own transports) the Client builds and sends them.

    A transport's POSTs carry a handful of header sets (one per session and version), so
    each set's merged lines are kept (`MAX_SETS` of them): merging them again for every
    request was half of building one. The client's own headers must not change after.
    """

    MAX_SETS = 32

    def __init__(
        self,
        url: httpx.URL,
        client: httpx.Client,
        *,
        wire: httpx.BaseTransport | None,
    ) -> None:
        self._url = url
        self._client = client
        self._wire = wire
        self._auth = client.auth or basic_auth(url)
        self._lines: dict[tuple[tuple[str, str], ...], list[tuple[bytes, bytes]]] = {}
        # A Host or body header of the user's own (-H) is httpx's to reconcile.
        self._httpx_way = any(
            name in client.headers for name in ("Host", "Content-Length", "Transfer-Encoding")
        )

    def build(
        self, content: bytes, headers: dict[str, str], timeout: float | None
    ) -> httpx.Request:
        """A POST of `content` with `headers` (over the client's own), with `timeout` in
        seconds (None: the client's)."""
        given = httpx.Timeout(timeout) if timeout is not None else None
        if self._wire is None:
            return self._client.build_request(
                POST,
                self._url,
                content=content,
                headers=headers,
                timeout=given or httpx.USE_CLIENT_DEFAULT,
            )
        extensions = {"timeout": (given or self._client.timeout).as_dict()}
        cookies = self._client.cookies
        # A load balancer's affinity cookie, once set, sends every later POST this way.
        if cookies.jar or self._httpx_way:
            return httpx.Request(
                POST,
                self._url,
                content=content,
                headers=self._merged(headers),
                cookies=cookies,
                extensions=extensions,
            )
        lines = [*self._lines_for(headers), (b"Content-Length", str(len(content)).encode())]
        # `stream=`: httpx adds no header of its own, and these are the ones it would add.
        request = httpx.Request(
            POST,
            self._url,
            headers=lines,
            stream=httpx.ByteStream(content),
            extensions=extensions,
        )
        request.read()  # as `content=` does: the body is there to be read again (auth retries)
        return request

    def send(self, request: httpx.Request) -> httpx.Response:
        """Send a request `build` made; the response is open (the caller closes it)."""
        if self._wire is None:
            return self._client.send(request, stream=True)
        return send_post(self._wire, request, auth=self._auth, cookies=self._client.cookies)

    def _lines_for(self, headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
        key = tuple(headers.items())
        lines = self._lines.get(key)
        if lines is None:
            lines = [(b"Host", self._url.netloc), *self._merged(headers).raw]
            if len(self._lines) >= self.MAX_SETS:
                self._lines.clear()
            self._lines[key] = lines
        return lines

    def _merged(self, headers: dict[str, str]) -> httpx.Headers:
        merged = httpx.Headers(self._client.headers)
        merged.update(headers)
        return merged


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

"""An `HttpTransport` over `httpx.MockTransport`, and JSON-RPC answers for its handlers."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx

from mcptask.protocol.jsonrpc import JsonObject
from mcptask.transport.http import HttpTransport

URL = "https://server.test/mcp"
Handler = Callable[[httpx.Request], httpx.Response]


def transport_for(handler: Handler, **kwargs: object) -> HttpTransport:
    return HttpTransport(URL, transport=httpx.MockTransport(handler), **kwargs)  # type: ignore[arg-type]


def body(request: httpx.Request) -> JsonObject:
    decoded: JsonObject = json.loads(request.content)
    return decoded


def answer(request: httpx.Request, result: JsonObject) -> httpx.Response:
    return httpx.Response(200, json={"jsonrpc": "2.0", "id": body(request)["id"], "result": result})

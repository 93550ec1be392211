"""Raw clients of a real reference-server process, for the attacks of tests/security:
legacy (2025-11-25, sessions) and modern (2026-07-28) JSON-RPC over httpx, each with an
optional bearer token, and OAuth token requests."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

import httpx

JsonObject = dict[str, Any]
POST_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
TIMEOUT = httpx.Timeout(10.0)
MODERN = "2026-07-28"
TASKS = "io.modelcontextprotocol/tasks"
NAME_SOURCE = {"tools/call": "name", "tasks/get": "taskId", "tasks/update": "taskId"}
NAME_SOURCE["tasks/cancel"] = "taskId"


def origin_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}"


def messages_of(response: httpx.Response) -> list[JsonObject]:
    """The JSON-RPC messages of a POST answer, SSE or JSON."""
    if not response.headers.get("content-type", "").startswith("text/event-stream"):
        return [response.json()]
    found = []
    for block in response.text.replace("\r\n", "\n").split("\n\n"):
        data = [line[5:].strip() for line in block.split("\n") if line.startswith("data:")]
        if data and data[0]:
            found.append(json.loads("\n".join(data)))
    return found


def client_credentials_token(url: str, client_id: str, secret: str) -> str:
    """An access token of a pre-registered client, from the server's token endpoint."""
    answer = httpx.post(
        origin_of(url) + "/oauth/token",
        data={"grant_type": "client_credentials", "scope": "tasks:read tasks:write"},
        auth=(client_id, secret),
        timeout=TIMEOUT,
    )
    assert answer.status_code == 200, answer.text
    token: str = answer.json()["access_token"]
    return token


class Peer:
    """A client of one era (legacy: with a session opened by `initialize`)."""

    def __init__(self, url: str, token: str | None = None, *, modern: bool = False) -> None:
        self.url = url
        self.modern = modern
        self.client = httpx.Client(timeout=TIMEOUT)
        self.auth = {"Authorization": f"Bearer {token}"} if token else {}
        self.session: str | None = None
        self._next_id = 0

    def close(self) -> None:
        self.client.close()

    def initialize(self) -> None:
        answer = self.post("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}})
        assert answer.status_code == 200, answer.text
        self.session = answer.headers["Mcp-Session-Id"]

    def post(self, method: str, params: JsonObject | None = None) -> httpx.Response:
        self._next_id += 1
        body = dict(params or {})
        headers = {**POST_HEADERS, **self.auth}
        if self.modern:
            body["_meta"] = {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}},
                "io.modelcontextprotocol/clientInfo": {"name": "attacker", "version": "0"},
            }
            headers |= {"MCP-Protocol-Version": MODERN, "Mcp-Method": method}
            source = NAME_SOURCE.get(method)
            if source is not None:
                headers["Mcp-Name"] = str(body[source])
        elif self.session is not None:
            headers["Mcp-Session-Id"] = self.session
        message = {"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": body}
        return self.client.post(self.url, content=json.dumps(message), headers=headers)

    def call(self, method: str, params: JsonObject | None = None) -> JsonObject:
        """The JSON-RPC response (result or error) to one request."""
        answer = self.post(method, params)
        responses = [m for m in messages_of(answer) if m.get("id") == self._next_id]
        assert len(responses) == 1, (answer.status_code, answer.text)
        return responses[0]

    def start_task(self) -> str:
        """A long_job task (an hour long) created by this peer; its id."""
        params: JsonObject = {"name": "long_job", "arguments": {"seconds": 3600}}
        if not self.modern:
            params["task"] = {}
        result = self.call("tools/call", params)["result"]
        task_id: str = result["taskId"] if self.modern else result["task"]["taskId"]
        return task_id

"""A small hostile MCP server (2025-11-25 over HTTP, JSON answers) on 127.0.0.1, and a
listener that only records who connects to it. Each test gives the server its own tools and
its own `tasks/list` pages.

    with HostileMcp(tools=[...], pages=lambda cursor: ([...], "next")) as server:
        run_mcptask("list", "--url", server.url, "--protocol", "2025-11-25")
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.security.hostile_http import Background

Page = tuple[list[dict[str, Any]], str | None]

CAPABILITIES: dict[str, Any] = {
    "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
    "tools": {},
}


def task(task_id: str, status: str = "working") -> dict[str, Any]:
    """A task as the wire has it."""
    stamp = "2026-01-01T00:00:00Z"
    return {
        "taskId": task_id,
        "status": status,
        "createdAt": stamp,
        "lastUpdatedAt": stamp,
        "ttl": 60_000,
        "pollInterval": 1000,
    }


class _Background(Background):
    """A server of `handler`, which finds this object as its server's `owner`."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.owner = self  # type: ignore[attr-defined]
        super().__init__(server)


class HostileMcp(_Background):
    """Answers initialize, tools/list, tools/call and tasks/list as the test says."""

    def __init__(
        self,
        *,
        tools: list[dict[str, Any]] | None = None,
        pages: Callable[[str | None], Page] | None = None,
    ) -> None:
        super().__init__(_McpHandler)
        self.tools = tools or []
        self.pages = pages or (lambda cursor: ([], None))
        self.tools_cursor: Callable[[str | None], str | None] | None = None
        """The next cursor of tools/list after the given one (None: one page)."""
        self.calls: list[str] = []
        """The methods asked for, in order."""
        self.authorizations: list[str] = []
        """The Authorization headers received."""
        self.tools_listed = threading.Event()
        """Set once tools/list was answered."""
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def answer(self, method: str, params: dict[str, Any]) -> Any:
        self.calls.append(method)
        if method == "initialize":
            return {
                "protocolVersion": "2025-11-25",
                "capabilities": CAPABILITIES,
                "serverInfo": {"name": "hostile", "version": "1"},
            }
        if method == "tools/list":
            self.tools_listed.set()
            if self.tools_cursor is not None:
                cursor = self.tools_cursor(params.get("cursor"))
                return {"tools": self.tools, **({"nextCursor": cursor} if cursor else {})}
            return {"tools": self.tools}
        if method == "tools/call":
            return {"task": task("started-by-hostile")}
        if method == "tasks/list":
            tasks, cursor = self.pages(params.get("cursor"))
            return {"tasks": tasks, **({"nextCursor": cursor} if cursor else {})}
        if method in ("tasks/cancel", "tasks/get"):
            return task(params["taskId"], "cancelled")
        return None


class _McpHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive: one connection for many pages
    disable_nagle_algorithm = True

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_POST(self) -> None:
        owner: HostileMcp = self.server.owner  # type: ignore[attr-defined]
        message = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
        if "Authorization" in self.headers:
            owner.authorizations.append(self.headers["Authorization"])
        if "id" not in message:  # a notification
            self.send_response(202)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        result = owner.answer(message["method"], message.get("params") or {})
        if result is None:
            answer = {"code": -32601, "message": "method not found"}
            body = {"jsonrpc": "2.0", "id": message["id"], "error": answer}
        else:
            body = {"jsonrpc": "2.0", "id": message["id"], "result": result}
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_DELETE(self) -> None:
        self.send_response(405)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def do_GET(self) -> None:
        self.do_DELETE()


class Witness(_Background):
    """A listener that records every request made to it (and answers a JSON schema)."""

    def __init__(self) -> None:
        super().__init__(_WitnessHandler)
        self.requests: list[str] = []
        self.url = f"http://127.0.0.1:{self.port}/schema.json"


class _WitnessHandler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        owner: Witness = self.server.owner  # type: ignore[attr-defined]
        owner.requests.append(self.path)
        data = b'{"type": "string"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

"""A hostile MCP server and a hostile authorization server of the tests' own, on 127.0.0.1.

The MCP server answers every POST with 401 and a challenge whose protected resource metadata
names the authorization server the test chooses. The authorization server serves RFC 8414
metadata (endpoints the test may override) and records every request it receives, headers
and body, answering token requests with what the test sets.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.security.hostile_http import Background


@dataclass(frozen=True)
class Seen:
    """One request a hostile server received."""

    method: str
    path: str
    headers: dict[str, str]
    body: str

    @property
    def text(self) -> str:
        """Everything of the request, to look for a secret in."""
        heads = "\n".join(f"{name}: {value}" for name, value in self.headers.items())
        return f"{self.method} {self.path}\n{heads}\n\n{self.body}"


Answer = Callable[["Seen"], tuple[int, dict[str, str], bytes]]


@dataclass
class _State:
    answer: Answer
    seen: list[Seen] = field(default_factory=list)


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _serve(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length).decode("utf-8", "replace") if length else ""
        seen = Seen(self.command, self.path, dict(self.headers.items()), body)
        self.server.state.seen.append(seen)
        status, headers, content = self.server.state.answer(seen)
        self.send_response(status)
        for name, value in headers.items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(content)))
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(content)

    def do_GET(self) -> None:
        self._serve()

    def do_POST(self) -> None:
        self._serve()


class _Server(ThreadingHTTPServer):
    def __init__(self, state: _State) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.state = state


class HostileServer(Background):
    """An HTTP server on 127.0.0.1 answering with `answer`, recording every request."""

    def __init__(self, answer: Answer) -> None:
        self._state = _State(answer)
        super().__init__(_Server(self._state))
        self.origin = f"http://127.0.0.1:{self.port}"

    @property
    def seen(self) -> list[Seen]:
        return list(self._state.seen)


def client_env(tmp_path: Path, client: str, secret: str, **extra: str) -> dict[str, str]:
    """The environment of an mcptask run with configured client credentials (the docs' CI
    recipe), its state and configuration under `tmp_path`, no browser."""
    return {
        "MCPTASK_STATE_DIR": str(tmp_path / "state"),
        "MCPTASK_CONFIG_DIR": str(tmp_path / "config"),
        "BROWSER": "",
        "MCPTASK_CLIENT_ID": client,
        "MCPTASK_CLIENT_SECRET": secret,
        **extra,
    }


def json_answer(status: int, document: object) -> tuple[int, dict[str, str], bytes]:
    return status, {"Content-Type": "application/json"}, json.dumps(document).encode()


def authorization_server(
    *,
    endpoints: dict[str, str] | None = None,
    token: object | Callable[[Seen], object] | None = None,
) -> HostileServer:
    """An authorization server offering every grant, its metadata at the RFC 8414 URL (its
    issuer is its origin); `endpoints` overrides the metadata's endpoint URLs, `token` is what
    its token endpoint answers, or makes of the request (a token by default; 400 for an
    OAuth error)."""
    holder: dict[str, str] = {}

    def answer(seen: Seen) -> tuple[int, dict[str, str], bytes]:
        origin = holder["origin"]
        if seen.path.startswith("/.well-known/oauth-authorization-server"):
            metadata = {
                "issuer": origin,
                "authorization_endpoint": origin + "/authorize",
                "token_endpoint": origin + "/token",
                "registration_endpoint": origin + "/register",
                "grant_types_supported": [
                    "authorization_code",
                    "client_credentials",
                    "refresh_token",
                ],
                "token_endpoint_auth_methods_supported": ["client_secret_basic", "none"],
                "code_challenge_methods_supported": ["S256"],
                **(endpoints or {}),
            }
            return json_answer(200, metadata)
        if seen.path.startswith("/token"):
            document = token(seen) if callable(token) else token
            if document is None:
                return json_answer(200, {"access_token": "stolen-ok", "token_type": "Bearer"})
            status = 400 if isinstance(document, dict) and "error" in document else 200
            return json_answer(status, document)
        if seen.path.startswith("/register"):
            registered = {"client_id": "registered", "token_endpoint_auth_method": "none"}
            return json_answer(201, registered)
        return json_answer(404, {"error": "not_found"})

    server = HostileServer(answer)
    holder["origin"] = server.origin
    return server


def mcp_server(issuer: Callable[[], str], *, resource_path: str = "/mcp") -> HostileServer:
    """An MCP server at /mcp that refuses every POST (401) and names `issuer()` as its
    authorization server, and its origin + `resource_path` as the resource, in its protected
    resource metadata."""
    holder: dict[str, str] = {}

    def answer(seen: Seen) -> tuple[int, dict[str, str], bytes]:
        origin = holder["origin"]
        if seen.path.startswith("/.well-known/oauth-protected-resource"):
            return json_answer(
                200, {"resource": origin + resource_path, "authorization_servers": [issuer()]}
            )
        challenge = f'Bearer resource_metadata="{origin}/.well-known/oauth-protected-resource/mcp"'
        status, headers, content = json_answer(401, {"error": "unauthorized"})
        return status, {**headers, "WWW-Authenticate": challenge}, content

    server = HostileServer(answer)
    holder["origin"] = server.origin
    return server

"""Streamable HTTP transport: POST/GET/DELETE on one endpoint, for both protocol eras.

2025-11-25 (legacy): sessions (Mcp-Session-Id), a GET notification stream, DELETE.
2026-07-28 (modern): stateless POSTs whose headers mirror the body (MCP-Protocol-Version,
Mcp-Method, Mcp-Name), errors with HTTP 400/404, and `subscriptions/listen` answered with an
SSE stream that stays open. The era is chosen per POST: a body with the modern `_meta`
version goes to the ModernDispatcher, anything else to the LegacyDispatcher (GET and DELETE
are legacy-only). This module turns HTTP requests into dispatcher calls and dispatcher
replies into HTTP answers (JSON or SSE); it knows nothing about task semantics.
"""

from __future__ import annotations

import contextlib
import http
import json
import logging
import secrets
import select
import socket
import socketserver
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, NoReturn

from mcptask import __version__
from mcptask.reference_server.config import AnswerMode, Fault, ServerConfig
from mcptask.reference_server.faults import replacement_body, with_wrong_id
from mcptask.reference_server.http_policy import (
    accepted_types,
    auth_failure,
    modern_header_problem,
    origin_allowed,
)
from mcptask.reference_server.jsonrpc import (
    INVALID_REQUEST,
    PARSE_ERROR,
    JsonObject,
    MessageKind,
    classify,
    error_response,
    request_id,
)
from mcptask.reference_server.legacy import LegacyDispatcher
from mcptask.reference_server.modern import ModernDispatcher
from mcptask.reference_server.modern_wire import (
    HEADER_MISMATCH,
    ModernError,
    ModernReply,
    ModernRequest,
)
from mcptask.reference_server.router import is_modern_message
from mcptask.reference_server.sessions import Session, SessionRegistry
from mcptask.reference_server.sse import (
    HEARTBEAT,
    encode_message,
    message_event,
    plain_event,
    priming_event,
)
from mcptask.reference_server.store import TaskStore

ENDPOINT = "/mcp"
MAX_BODY = 4 * 1024 * 1024
JSON = "application/json"
EVENT_STREAM = "text/event-stream"
# Error codes for failures of the HTTP layer (JSON-RPC server-error range, as the official
# SDKs use them): a bad header or missing session, and an unknown session.
BAD_REQUEST = -32000
SESSION_NOT_FOUND = -32001
GET_EVENT_PREFIX = "get-"
# MCP-Protocol-Version values accepted on requests of a legacy session: the released
# versions that speak Streamable HTTP. A request without the header is taken as 2025-03-26
# (transport spec, backwards compatibility) and served, so the same version named
# explicitly, or 2025-06-18 (which added the header), is no reason to refuse it. The
# session's semantics stay those of the version initialize negotiated (2025-11-25).
# 2024-11-05 predates Streamable HTTP (and the header), and 2026-07-28 requests carry their
# version in `_meta` instead of a session.
LEGACY_HEADER_VERSIONS = frozenset({"2025-03-26", "2025-06-18", "2025-11-25"})
# Client reconnect delay advertised on the GET stream's priming event.
RETRY_MS = 1000
# How often an idle subscriptions/listen stream checks whether its client went away.
STREAM_POLL_SECONDS = 0.25
# How long shutdown waits for open listen streams to send their closing response.
SHUTDOWN_GRACE_SECONDS = 1.0

log = logging.getLogger("mcptask.reference_server")


@dataclass
class HttpApp:
    """What every request handler needs: settings, the protocol logic of each era served
    (None for an era switched off with --protocol-eras) and the legacy sessions."""

    config: ServerConfig
    legacy: LegacyDispatcher | None
    modern: ModernDispatcher | None
    sessions: SessionRegistry


class ReferenceHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server (a thread per connection) bound to exactly the given host."""

    daemon_threads = True
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], app: HttpApp) -> None:
        if ":" in address[0]:
            self.address_family = socket.AF_INET6
        self.app = app
        super().__init__(address, McpRequestHandler)

    def server_bind(self) -> None:
        # HTTPServer.server_bind does a reverse DNS lookup (getfqdn) that can stall for
        # seconds on machines without DNS; the name is only cosmetic, so skip it.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)


class _Done(Exception):
    """Raised after an error answer was sent, to end the handling of a request."""


class McpRequestHandler(BaseHTTPRequestHandler):
    """Handles one connection; HTTP/1.1 keep-alive serves many requests on it."""

    protocol_version = "HTTP/1.1"
    server_version = f"mcptask-reference/{__version__}"
    server: ReferenceHTTPServer

    def setup(self) -> None:
        super().setup()
        # Answers are small and latency matters (hundreds of requests on one connection):
        # without TCP_NODELAY, Nagle plus delayed ACKs can add ~40 ms per request.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    @property
    def app(self) -> HttpApp:
        return self.server.app

    def log_message(self, format: str, *args: Any) -> None:
        if self.app.config.log_requests:
            log.info("%s %s", self.address_string(), format % args)

    # -- HTTP methods ---------------------------------------------------------------------

    def do_POST(self) -> None:
        try:
            body = self._read_body()
            self._check_common()
            self._handle_post(body)
        except _Done:
            pass

    def do_GET(self) -> None:
        try:
            self._check_common()
            if self.app.legacy is None:
                self._method_not_allowed()  # 2026-07-28 has no GET stream
            self._handle_get()
        except _Done:
            pass

    def do_DELETE(self) -> None:
        try:
            self._read_body()
            self._check_common()
            if self.app.legacy is None:
                self._method_not_allowed()  # 2026-07-28 has no sessions to end
            session = self._require_session()
            self.app.sessions.remove(session.id)
            self._send(200)
        except _Done:
            pass

    def _method_not_allowed(self) -> NoReturn:
        self.close_connection = True  # the request body, if any, is left unread
        allow = "GET, POST, DELETE" if self.app.legacy is not None else "POST"
        self._fail(405, BAD_REQUEST, "Method not allowed", {"Allow": allow})

    def do_PUT(self) -> None:
        with contextlib.suppress(_Done):
            self._method_not_allowed()

    def do_PATCH(self) -> None:
        with contextlib.suppress(_Done):
            self._method_not_allowed()

    # -- POST -----------------------------------------------------------------------------

    def _handle_post(self, body: bytes) -> None:
        if self.headers.get_content_type() != JSON:
            self._fail(415, BAD_REQUEST, "Content-Type must be application/json")
        if not {JSON, EVENT_STREAM} <= accepted_types(self.headers.get("Accept")):
            self._fail(406, BAD_REQUEST, "Accept must list application/json and text/event-stream")
        try:
            message = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            self._fail(400, PARSE_ERROR, "Parse error")
        if isinstance(message, list):
            self._fail(400, INVALID_REQUEST, "Batch requests are not supported")
        kind = classify(message)
        if kind is MessageKind.INVALID:
            self._fail(400, INVALID_REQUEST, "Invalid JSON-RPC message", msg_id=request_id(message))
        modern, legacy = self.app.modern, self.app.legacy
        if modern is not None and (legacy is None or is_modern_message(message)):
            self._handle_modern(modern, message)
            return
        assert legacy is not None
        method = message.get("method") if kind is MessageKind.REQUEST else None
        # A new session per initialize: a client re-initializing after a 404 gets a fresh
        # one, and the old id (if any) is simply ignored.
        new_session = method == "initialize"
        session = self.app.sessions.create() if new_session else self._require_session()
        count = session.count_request()
        try:
            if kind is MessageKind.REQUEST:
                assert isinstance(method, str)
                self._answer(legacy, method, message, session, new_session)
            else:
                legacy.handle(message, session.id)
                self._send(202)
        finally:
            limit = self.app.config.drop_session_after
            if limit is not None and count >= limit:
                self.app.sessions.remove(session.id)

    def _answer(
        self,
        legacy: LegacyDispatcher,
        method: str,
        message: JsonObject,
        session: Session,
        new_session: bool,
    ) -> None:
        config = self.app.config
        if (
            config.answer is AnswerMode.SSE
            and config.fault is None
            and legacy.closes_stream(message)
        ):
            self._answer_after_closing(legacy, message, session)
            return
        reply = legacy.handle(message, session.id)
        assert reply.response is not None
        headers = {"Mcp-Session-Id": session.id} if new_session else {}
        self._deliver(method, reply.response, reply.related, headers, resumable=True)

    def _answer_after_closing(
        self, legacy: LegacyDispatcher, message: JsonObject, session: Session
    ) -> None:
        """SSE polling (SEP-1699): send the priming event with a retry delay, close the
        stream, then handle the request; its messages wait for the client to resume the
        stream with GET and Last-Event-ID."""
        stream = secrets.token_hex(6)
        session.open_post_stream(stream)
        self.close_connection = True
        self._send(
            200,
            priming_event(f"{stream}-0", RETRY_MS),
            EVENT_STREAM,
            {"Cache-Control": "no-cache"},
        )
        with contextlib.suppress(OSError):  # the client may be gone already: no matter
            self.connection.shutdown(socket.SHUT_WR)
        reply = legacy.handle(message, session.id)
        assert reply.response is not None
        session.finish_post_stream(stream, [*reply.related, reply.response])

    def _deliver(
        self,
        method: str,
        response: JsonObject,
        related: list[JsonObject],
        headers: dict[str, str],
        *,
        resumable: bool,
    ) -> None:
        """Answer a request with HTTP 200: JSON or SSE per --answer, broken per --fault.

        `resumable` (2025-11-25): SSE events carry ids, after a priming event. 2026-07-28
        streams have neither (no Last-Event-ID resumption).
        """
        config = self.app.config
        fault = config.fault if method.startswith("tasks/") else None
        if fault is Fault.DROP:
            self.close_connection = True  # no answer at all: the client sees a closed socket
            return
        if fault is not None:
            body = replacement_body(fault)
            if body is not None:
                content_type = "text/html" if fault is Fault.WRONG_CONTENT_TYPE else JSON
                self._send(200, body, content_type, headers)
                return
            response = with_wrong_id(response)
        if config.answer is AnswerMode.JSON:
            self._send(200, encode_message(response).encode(), JSON, headers)
            return
        # One SSE stream per request: (priming event,) request-related notifications, then
        # the response. The whole stream goes out with a Content-Length so the connection
        # stays usable for the next request (keep-alive).
        if resumable:
            stream = secrets.token_hex(6)
            events = [priming_event(f"{stream}-0")]
            for index, item in enumerate([*related, response], start=1):
                events.append(message_event(f"{stream}-{index}", item))
        else:
            events = [plain_event(item) for item in [*related, response]]
            headers["X-Accel-Buffering"] = "no"
        headers["Cache-Control"] = "no-cache"
        self._send(200, b"".join(events), EVENT_STREAM, headers)

    # -- POST, 2026-07-28 -----------------------------------------------------------------

    def _handle_modern(self, modern: ModernDispatcher, message: JsonObject) -> None:
        # Stateless: any Mcp-Session-Id is ignored, and none is ever minted.
        reply = modern.handle(message, self._check_modern_headers)
        if reply.subscription is not None:
            self._stream_subscription(modern, reply)
            return
        if reply.response is None:
            self._send(reply.http_status)  # a notification: 202, no body
            return
        if reply.http_status != 200:
            self._send(reply.http_status, encode_message(reply.response).encode(), JSON)
            return
        self._deliver(message["method"], reply.response, reply.related, {}, resumable=False)

    def _check_modern_headers(self, request: ModernRequest) -> None:
        problem = modern_header_problem(
            lambda name: self.headers.get(name), request.method, request.version, request.params
        )
        if problem is not None:
            raise ModernError(HEADER_MISMATCH, problem)

    def _stream_subscription(self, modern: ModernDispatcher, reply: ModernReply) -> None:
        """The response stream of subscriptions/listen: the acknowledgement, then task
        notifications as they happen, heartbeat comments while idle. It ends when the
        client goes away, or (with the listen response) when the server shuts down."""
        subscription = reply.subscription
        assert subscription is not None
        self.close_connection = True
        head = self._head(
            200,
            {
                "Content-Type": EVENT_STREAM,
                "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no",
                "Transfer-Encoding": "chunked",
            },
        )
        heartbeat = self.app.config.heartbeat_seconds
        try:
            self.wfile.write(head + _chunk(b"".join(plain_event(m) for m in reply.related)))
            self.log_request(200)
            last_write = time.monotonic()
            while True:
                messages = subscription.wait(STREAM_POLL_SECONDS)
                if messages is None:
                    closing = plain_event(modern.listen_closed(subscription))
                    self.wfile.write(_chunk(closing) + b"0\r\n\r\n")
                    break
                if messages:
                    self.wfile.write(_chunk(b"".join(plain_event(m) for m in messages)))
                    last_write = time.monotonic()
                elif time.monotonic() - last_write >= heartbeat:
                    self.wfile.write(_chunk(HEARTBEAT))
                    last_write = time.monotonic()
                if self._peer_closed():
                    break
        except OSError:
            pass  # the client went away mid-write
        finally:
            modern.hub.remove(subscription)

    def _peer_closed(self) -> bool:
        """True when the client closed its end of the connection (EOF is readable)."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            if not readable:
                return False
            peeked: bytes = self.connection.recv(1, socket.MSG_PEEK)
            return peeked == b""
        except OSError:
            return True

    # -- GET: the session's notification stream -------------------------------------------

    def _handle_get(self) -> None:
        if not self.app.config.get_stream:
            self._fail(
                405, BAD_REQUEST, "This server offers no GET stream", {"Allow": "POST, DELETE"}
            )
        if EVENT_STREAM not in accepted_types(self.headers.get("Accept")):
            self._fail(406, BAD_REQUEST, "Accept must list text/event-stream")
        session = self._require_session()
        last_event_id = self.headers.get("Last-Event-ID")
        post = _post_event(last_event_id)
        if post is not None and session.has_post_stream(post[0]):
            self._resume_post_stream(session, *post)
            return
        token, cursor = session.open_stream()
        resume = _get_event_number(last_event_id)
        if resume is not None:
            cursor = resume
        head = self._head(
            200,
            {
                "Content-Type": EVENT_STREAM,
                "Cache-Control": "no-cache",
                "Transfer-Encoding": "chunked",
            },
        )
        self.close_connection = True
        try:
            self.wfile.write(head + _chunk(priming_event(f"{GET_EVENT_PREFIX}{cursor}", RETRY_MS)))
            self.log_request(200)
            while True:
                events = session.wait_events(token, cursor, self.app.config.heartbeat_seconds)
                if events is None:
                    break
                if not events:
                    # A comment line: clients ignore it, and a dead socket fails the write.
                    self.wfile.write(_chunk(HEARTBEAT))
                    continue
                data = b"".join(
                    message_event(f"{GET_EVENT_PREFIX}{event_id}", msg) for event_id, msg in events
                )
                self.wfile.write(_chunk(data))
                cursor = events[-1][0]
                session.mark_sent(cursor)
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            return  # the client went away; it may resume with Last-Event-ID

    def _resume_post_stream(self, session: Session, stream: str, after: int) -> None:
        """GET with the Last-Event-ID of a POST stream the server closed early: the rest of
        that stream (only its own messages, never the GET stream's), then the end."""
        head = self._head(
            200,
            {
                "Content-Type": EVENT_STREAM,
                "Cache-Control": "no-cache",
                "Transfer-Encoding": "chunked",
            },
        )
        self.close_connection = True
        try:
            self.wfile.write(head)
            self.log_request(200)
            while (
                messages := session.post_stream_messages(
                    stream, after, self.app.config.heartbeat_seconds
                )
            ) is None:
                if session.closed or not session.has_post_stream(stream):
                    break
                self.wfile.write(_chunk(HEARTBEAT))
            if messages:
                data = b"".join(
                    message_event(f"{stream}-{number}", message) for number, message in messages
                )
                self.wfile.write(_chunk(data))
            self.wfile.write(b"0\r\n\r\n")
        except OSError:
            return  # the client went away; it may resume again

    # -- shared checks --------------------------------------------------------------------

    def _check_common(self) -> None:
        if self.path.split("?", 1)[0] != ENDPOINT:
            self._fail(404, BAD_REQUEST, f"Not found; the MCP endpoint is {ENDPOINT}")
        origin = self.headers.get("Origin")
        if origin is not None and not origin_allowed(origin):
            self._fail(403, BAD_REQUEST, f"Origin not allowed: {origin}")
        config = self.app.config
        refused = auth_failure(
            self.headers.get("Authorization"), config.require_token, config.forbid_token
        )
        if refused is not None:
            self._fail(
                refused.status,
                BAD_REQUEST,
                refused.message,
                {"WWW-Authenticate": refused.challenge},
            )

    def _require_session(self) -> Session:
        session_id = self.headers.get("Mcp-Session-Id")
        if not session_id:
            self._fail(400, BAD_REQUEST, "Missing Mcp-Session-Id header")
        session = self.app.sessions.get(session_id)
        if session is None:
            self._fail(404, SESSION_NOT_FOUND, "Session not found")
        version = self.headers.get("MCP-Protocol-Version")
        if version is not None and version not in LEGACY_HEADER_VERSIONS:
            self._fail(400, BAD_REQUEST, f"Unsupported MCP-Protocol-Version: {version}")
        return session

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            return self._read_chunked()
        length_text = self.headers.get("Content-Length")
        if length_text is None:
            return b""
        try:
            length = int(length_text)
        except ValueError:
            length = -1
        if not 0 <= length <= MAX_BODY:
            self.close_connection = True
            self._fail(413 if length > MAX_BODY else 400, BAD_REQUEST, "Bad Content-Length")
        return self.rfile.read(length)

    def _read_chunked(self) -> bytes:
        parts: list[bytes] = []
        total = 0
        while True:
            size_line = self.rfile.readline(1024).split(b";")[0].strip()
            try:
                size = int(size_line, 16)
            except ValueError:
                size = -1
            total += size
            if size < 0 or total > MAX_BODY:
                self.close_connection = True
                self._fail(400, BAD_REQUEST, "Bad chunked body")
            if size == 0:
                while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return b"".join(parts)
            parts.append(self.rfile.read(size))
            self.rfile.readline(1024)

    # -- writing --------------------------------------------------------------------------

    def _head(self, status: int, headers: Mapping[str, str]) -> bytes:
        lines = [
            f"{self.protocol_version} {status} {http.HTTPStatus(status).phrase}",
            f"Server: {self.version_string()}",
            f"Date: {self.date_time_string()}",
        ]
        lines.extend(f"{name}: {value}" for name, value in headers.items())
        if self.close_connection:
            lines.append("Connection: close")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def _send(
        self,
        status: int,
        body: bytes = b"",
        content_type: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        all_headers = dict(headers or {})
        if content_type is not None:
            all_headers["Content-Type"] = content_type
        all_headers["Content-Length"] = str(len(body))
        # Head and body in one write: one TCP segment for small answers.
        self.wfile.write(self._head(status, all_headers) + body)
        self.log_request(status, len(body))

    def _fail(
        self,
        status: int,
        code: int,
        message: str,
        headers: Mapping[str, str] | None = None,
        msg_id: str | int | None = None,
    ) -> NoReturn:
        """Answer an HTTP-layer error with a JSON-RPC error body, then stop handling."""
        body = encode_message(error_response(msg_id, code, message)).encode()
        self._send(status, body, JSON, headers)
        raise _Done


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


def _post_event(last_event_id: str | None) -> tuple[str, int] | None:
    """(stream, number) of an event id of a POST answer stream (`3fa2b81c09d4-0`)."""
    if last_event_id is None or last_event_id.startswith(GET_EVENT_PREFIX):
        return None
    stream, sep, number = last_event_id.rpartition("-")
    if not sep or not stream or not number.isdigit():
        return None
    return stream, int(number)


def _get_event_number(last_event_id: str | None) -> int | None:
    """The number in a GET-stream event id (`get-12`); None for ids of other streams."""
    if last_event_id is None or not last_event_id.startswith(GET_EVENT_PREFIX):
        return None
    try:
        number = int(last_event_id.removeprefix(GET_EVENT_PREFIX))
    except ValueError:
        return None
    return number if number >= 0 else None


def serve_http(
    config: ServerConfig,
    legacy: LegacyDispatcher | None,
    modern: ModernDispatcher | None,
    store: TaskStore,
    announce: Callable[[str], None],
) -> None:
    """Serve until interrupted; `announce` receives the endpoint URL once listening."""
    sessions = SessionRegistry()
    if config.notify and legacy is not None:
        store.add_listener(
            lambda view: sessions.broadcast(legacy.status_notification(view), view.owner)
        )
    app = HttpApp(config, legacy, modern, sessions)
    server = ReferenceHTTPServer((config.host, config.port), app)
    try:
        host = f"[{config.host}]" if ":" in config.host else config.host
        announce(f"http://{host}:{server.server_address[1]}{ENDPOINT}")
        server.serve_forever(poll_interval=0.5)
    finally:
        if modern is not None:
            modern.hub.close_all(SHUTDOWN_GRACE_SECONDS)
        server.server_close()

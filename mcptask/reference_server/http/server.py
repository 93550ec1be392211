"""The HTTP server: one /mcp endpoint. A request gets the checks every request gets (path,
Origin, bearer token; for a POST the body, Content-Type, Accept, one JSON-RPC message), then
goes to the endpoint of the era the router decides: LegacyEndpoint (http/legacy.py), or
ModernEndpoint, the 2026-07-28 one, here: stateless POSTs whose headers mirror the body
(MCP-Protocol-Version, Mcp-Method, Mcp-Name), errors with HTTP 400/404, and
`subscriptions/listen` answered with an SSE stream that stays open. It has no sessions: any
Mcp-Session-Id is ignored and none is minted; GET and DELETE are not allowed."""

from __future__ import annotations

import contextlib
import json
import logging
import signal
import socket
import socketserver
import threading
import time
from collections.abc import Callable, Iterator
from http.server import ThreadingHTTPServer
from types import FrameType
from typing import NoReturn

from mcptask.reference_server.config import FaultKind, ProtocolEras, ServerConfig
from mcptask.reference_server.eras.modern import ModernDispatcher
from mcptask.reference_server.eras.modern_wire import HEADER_MISMATCH, ModernError, ModernRequest
from mcptask.reference_server.eras.router import Router
from mcptask.reference_server.faults import FaultPlan
from mcptask.reference_server.http.framing import (
    BAD_REQUEST,
    EVENT_STREAM,
    JSON,
    Done,
    Exchange,
    message_event,
)
from mcptask.reference_server.http.legacy import LegacyEndpoint
from mcptask.reference_server.http.policy import (
    accepted_types,
    auth_failure,
    host_allowed,
    modern_header_problem,
    origin_allowed,
)
from mcptask.reference_server.oauth.server import PATHS as OAUTH_PATHS
from mcptask.reference_server.oauth.server import AuthorizationServer, Refusal
from mcptask.reference_server.oauth.server import Request as OAuthRequest
from mcptask.reference_server.store import TaskStore
from mcptask.reference_server.wire import (
    INVALID_MESSAGE,
    INVALID_REQUEST,
    PARSE_ERROR,
    JsonObject,
    MessageKind,
    Reply,
    classify,
    request_id,
)

ENDPOINT = "/mcp"
# Faults that refuse a request before it is handled.
REFUSALS = frozenset({FaultKind.BUSY, FaultKind.RATE_LIMITED})
# How often an idle subscriptions/listen stream checks whether its client went away.
STREAM_POLL_SECONDS = 0.25
# How long shutdown waits for open listen streams to send their closing response (each
# writer only wakes and writes one chunk: the bound matters on a starved machine alone).
SHUTDOWN_GRACE_SECONDS = 5.0

log = logging.getLogger("mcptask.reference_server")


class ModernEndpoint:
    """The 2026-07-28 side of the /mcp endpoint; one per server, shared by connections."""

    allow = "POST"

    def __init__(self, dispatcher: ModernDispatcher) -> None:
        self.dispatcher = dispatcher
        self.config = dispatcher.config

    def get(self, exchange: Exchange) -> NoReturn:
        """2026-07-28 has no GET stream, and no sessions to DELETE."""
        exchange.method_not_allowed(self.allow)

    delete = get

    def post(self, exchange: Exchange, message: JsonObject) -> None:
        def check_headers(request: ModernRequest) -> None:
            problem = modern_header_problem(
                exchange.headers.get, request.method, request.version, request.params
            )
            if problem is not None:
                raise ModernError(HEADER_MISMATCH, problem)

        reply = self.dispatcher.handle(message, check_headers, exchange.principal)
        if reply.subscription is not None:
            self._stream_subscription(exchange, reply)
        elif reply.response is None:
            exchange.send(reply.http_status)  # a notification: 202, no body
        elif reply.http_status != 200:
            exchange.answer_status(reply.http_status, reply.response)
        else:
            exchange.deliver(message["method"], reply.response, reply.related, {}, resumable=False)

    def _stream_subscription(self, exchange: Exchange, reply: Reply) -> None:
        """The response stream of subscriptions/listen: the acknowledgement, then task
        notifications as they happen, heartbeat comments while idle. It ends when the
        client goes away, or (with the listen response) when the server shuts down."""
        subscription = reply.subscription
        assert subscription is not None
        heartbeat = self.config.heartbeat_seconds

        def events() -> Iterator[bytes]:
            last_write = time.monotonic()
            while (messages := subscription.wait(STREAM_POLL_SECONDS)) is not None:
                if messages or time.monotonic() - last_write >= heartbeat:
                    yield b"".join(message_event(m) for m in messages)
                    last_write = time.monotonic()
                if exchange.peer_closed():
                    raise ConnectionAbortedError
            yield message_event(self.dispatcher.listen_closed(subscription))

        exchange.close_connection = True
        try:
            first = b"".join(message_event(m) for m in reply.related)
            exchange.stream(first, events(), unbuffered=True)
        finally:
            self.dispatcher.hub.remove(subscription)


# The endpoint of one era: post, get, delete, and `allow` (the Allow of a 405).
EraEndpoint = LegacyEndpoint | ModernEndpoint


class ReferenceHTTPServer(ThreadingHTTPServer):
    """The HTTP server of `config` (a thread per connection), bound to exactly its host
    (port 0: a free port) and not yet serving."""

    daemon_threads = True
    request_queue_size = 128

    def __init__(
        self, config: ServerConfig, router: Router, store: TaskStore, plan: FaultPlan | None = None
    ) -> None:
        if ":" in config.host:
            self.address_family = socket.AF_INET6
        self.config = config
        self.router = router
        self.endpoints: dict[ProtocolEras, EraEndpoint] = {}
        if router.legacy is not None:
            self.endpoints[ProtocolEras.LEGACY] = LegacyEndpoint(router.legacy, store)
        if router.modern is not None:
            self.endpoints[ProtocolEras.MODERN] = ModernEndpoint(router.modern)
        self.oauth = AuthorizationServer(config.oauth) if config.oauth is not None else None
        self.plan = plan or FaultPlan(config.fault_switches)
        super().__init__((config.host, config.port), McpRequestHandler)

    @property
    def url(self) -> str:
        host = self.server_name
        host = f"[{host}]" if ":" in host else host
        return f"http://{host}:{self.server_port}{ENDPOINT}"

    def endpoint(self, message: JsonObject | None) -> EraEndpoint:
        """The endpoint of the message's era (None: a request without one, GET or DELETE)."""
        router = self.router
        return self.endpoints[
            router.era_without_message() if message is None else router.era_of(message)
        ]

    def close(self) -> None:
        if self.router.modern is not None:  # GET streams stop with their connections
            self.router.modern.hub.close_all(SHUTDOWN_GRACE_SECONDS)
        self.server_close()

    def server_bind(self) -> None:
        # HTTPServer.server_bind does a reverse DNS lookup (getfqdn) that can stall for
        # seconds on machines without DNS; the name is only cosmetic, so skip it.
        socketserver.TCPServer.server_bind(self)
        host, port = self.server_address[:2]
        self.server_name = str(host)
        self.server_port = int(port)


class McpRequestHandler(Exchange):
    """The HTTP methods of /mcp, each handed to the endpoint of its era."""

    server: ReferenceHTTPServer

    def setup(self) -> None:
        self.config = self.server.config
        self.plan = self.server.plan
        super().setup()
        # An idle connection (no request, or a request trickling in) is closed after this
        # long: a read that times out ends BaseHTTPRequestHandler's loop of requests.
        self.connection.settimeout(self.config.connection_idle_seconds or None)

    def handle_one_request(self) -> None:
        self.request_message, self.fault, self.principal = None, None, None
        super().handle_one_request()

    def do_POST(self) -> None:  # noqa: N802 - the name BaseHTTPRequestHandler calls
        with contextlib.suppress(Done):
            self._check_origin_and_host()
            body = self.read_body()
            if self._served_by_oauth(body):
                return
            self._check_common()
            message = self._read_message(body)
            if self.server.oauth is not None:  # the scope the method needs
                authorization = self.headers.get("Authorization")
                method = message.get("method")  # absent in a response
                self._refuse(self.server.oauth.check_bearer(authorization, self._origin(), method))
            self.request_message = message
            self.fault = self.plan.draw(message)
            if self.fault in REFUSALS:
                self.refuse_for_fault()
            if self.fault is FaultKind.RESET:
                self.reset_connection()
            try:
                self.server.endpoint(message).post(self, message)
            except ConnectionError:
                # The client went away before its answer (after a slow one, say): no
                # traceback, the connection is simply over.
                self.close_connection = True
                log.info("the client went away before the answer to %s", message.get("method"))

    def do_GET(self) -> None:  # noqa: N802 - the name BaseHTTPRequestHandler calls
        with contextlib.suppress(Done):
            self._check_origin_and_host()
            if self._served_by_oauth(b""):
                return
            self._check_common()
            self.server.endpoint(None).get(self)

    def do_DELETE(self) -> None:  # noqa: N802 - the name BaseHTTPRequestHandler calls
        with contextlib.suppress(Done):
            self._check_origin_and_host()
            self.read_body()
            self._check_common()
            self.server.endpoint(None).delete(self)

    def do_PUT(self) -> None:  # noqa: N802 - the name BaseHTTPRequestHandler calls
        with contextlib.suppress(Done):
            self._check_origin_and_host()
            self.method_not_allowed(self.server.endpoint(None).allow)

    do_PATCH = do_PUT  # noqa: N815 - the name BaseHTTPRequestHandler calls

    def _read_message(self, body: bytes) -> JsonObject:
        """The one JSON-RPC message a POST carries; error answers for anything else."""
        if self.headers.get_content_type() != JSON:
            self.fail(415, BAD_REQUEST, "Content-Type must be application/json")
        if not {JSON, EVENT_STREAM} <= accepted_types(self.headers.get("Accept")):
            self.fail(406, BAD_REQUEST, "Accept must list application/json and text/event-stream")
        try:
            message = json.loads(body)
        except (ValueError, UnicodeDecodeError, RecursionError):  # nested past the stack too
            self.fail(400, PARSE_ERROR, "Parse error")
        if isinstance(message, list):
            self.fail(400, INVALID_REQUEST, "Batch requests are not supported")
        if classify(message) is MessageKind.INVALID:
            self.fail(400, INVALID_REQUEST, INVALID_MESSAGE, msg_id=request_id(message))
        assert isinstance(message, dict)
        return message

    def _check_origin_and_host(self) -> None:
        """Every path, every method: refuse foreign Origins (403) and, on a loopback bind,
        Host headers that do not name this server (421), against DNS rebinding. The body
        is left unread, so the connection ends with the refusal."""
        origin = self.headers.get("Origin")
        host = self.headers.get("Host")
        if origin is not None and not origin_allowed(origin):
            self.close_connection = True
            self.fail(403, BAD_REQUEST, f"Origin not allowed: {origin}")
        if not host_allowed(host, self.config.host):
            self.close_connection = True
            self.fail(421, BAD_REQUEST, f"Host not allowed: {host}")

    def _check_common(self) -> None:
        if self.path.split("?", 1)[0] != ENDPOINT:
            self.fail(404, BAD_REQUEST, f"Not found; the MCP endpoint is {ENDPOINT}")
        authorization = self.headers.get("Authorization")
        oauth = self.server.oauth
        config = self.config
        if oauth is None:
            self._refuse(auth_failure(authorization, config.require_token, config.forbid_token))
        else:
            self._refuse(oauth.check_bearer(authorization, self._origin(), None))
            # Tasks belong to the client their token was issued to (tasks spec: MUST).
            self.principal = oauth.principal(authorization)

    # -- --oauth: the authorization server beside /mcp ---------------------------------------

    def _served_by_oauth(self, body: bytes) -> bool:
        """Answer a request to the authorization server's paths; False for other paths."""
        path, _, query = self.path.partition("?")
        if self.server.oauth is None or path not in OAUTH_PATHS:
            return False
        answer = self.server.oauth.handle(
            OAuthRequest(
                self.command,
                path,
                query,
                body,
                self.headers.get_content_type(),
                self.headers.get("Authorization"),
            ),
            self._origin(),
        )
        self.send(answer.status, answer.body, headers=answer.headers)
        return True

    def _refuse(self, refused: Refusal | None) -> None:
        if refused is not None:
            self.fail(
                refused.status,
                BAD_REQUEST,
                refused.message,
                {"WWW-Authenticate": refused.challenge},
            )

    def _origin(self) -> str:
        """This server as its clients name it (the resource and issuer of --oauth)."""
        host = self.headers.get("Host") or f"{self.server.server_name}:{self.server.server_port}"
        return f"http://{host}"


def serve_http(
    config: ServerConfig,
    router: Router,
    store: TaskStore,
    announce: Callable[[str], None],
    plan: FaultPlan | None = None,
) -> None:
    """Serve until SIGTERM or SIGINT; `announce` receives the endpoint URL once listening.

    The signal asks serve_forever to return (within its 0.1 s poll interval) rather than raising
    in the serving thread: raised while socketserver starts a request's thread, an exception
    makes it shut that connection down under the handler, which then loses its last write
    (a listen stream its closing response).
    """
    server = ReferenceHTTPServer(config, router, store, plan)

    def stop(signum: int, frame: FrameType | None) -> None:
        # shutdown() waits for serve_forever to return, so it cannot run on this thread.
        threading.Thread(target=server.shutdown, name="shutdown", daemon=True).start()

    previous = {signum: signal.signal(signum, stop) for signum in (signal.SIGTERM, signal.SIGINT)}
    try:
        announce(server.url)
        server.serve_forever(poll_interval=0.1)  # how soon a stop is noticed
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        server.close()

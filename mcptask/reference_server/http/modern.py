"""Streamable HTTP of the 2026-07-28 era: stateless POSTs whose headers mirror the body
(MCP-Protocol-Version, Mcp-Method, Mcp-Name), errors with HTTP 400/404, and
`subscriptions/listen` answered with an SSE stream that stays open. No sessions: any
Mcp-Session-Id is ignored and none is minted; GET and DELETE are not allowed."""

from __future__ import annotations

import time
from typing import NoReturn

from mcptask.reference_server.eras.modern import ModernDispatcher
from mcptask.reference_server.eras.modern_wire import (
    HEADER_MISMATCH,
    ModernError,
    ModernRequest,
)
from mcptask.reference_server.http.framing import (
    HEARTBEAT,
    LAST_CHUNK,
    Exchange,
    chunk,
    message_event,
)
from mcptask.reference_server.http.policy import modern_header_problem
from mcptask.reference_server.wire import JsonObject, Reply

# How often an idle subscriptions/listen stream checks whether its client went away.
STREAM_POLL_SECONDS = 0.25
# How long shutdown waits for open listen streams to send their closing response (each
# writer only wakes and writes one chunk: the bound matters on a starved machine alone).
SHUTDOWN_GRACE_SECONDS = 5.0


class ModernEndpoint:
    """The 2026-07-28 side of the /mcp endpoint; one per server, shared by connections."""

    allow = "POST"

    def __init__(self, dispatcher: ModernDispatcher) -> None:
        self.dispatcher = dispatcher
        self.config = dispatcher.config

    def shutdown(self) -> None:
        """End every open listen stream with its response (within a grace period)."""
        self.dispatcher.hub.close_all(SHUTDOWN_GRACE_SECONDS)

    def get(self, exchange: Exchange) -> NoReturn:
        """2026-07-28 has no GET stream, and no sessions to DELETE."""
        exchange.method_not_allowed(self.allow)

    delete = get

    def post(self, exchange: Exchange, message: JsonObject) -> None:
        """One stateless request (or notification), checked against its headers."""

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
        exchange.close_connection = True
        head = exchange.event_stream_head(unbuffered=True)
        heartbeat = self.config.heartbeat_seconds
        try:
            exchange.wfile.write(head + chunk(b"".join(message_event(m) for m in reply.related)))
            exchange.log_request(200)
            last_write = time.monotonic()
            while True:
                messages = subscription.wait(STREAM_POLL_SECONDS)
                if messages is None:
                    closing = message_event(self.dispatcher.listen_closed(subscription))
                    exchange.wfile.write(chunk(closing) + LAST_CHUNK)
                    break
                if messages:
                    exchange.wfile.write(chunk(b"".join(message_event(m) for m in messages)))
                    last_write = time.monotonic()
                elif time.monotonic() - last_write >= heartbeat:
                    exchange.wfile.write(chunk(HEARTBEAT))
                    last_write = time.monotonic()
                if exchange.peer_closed():
                    break
        except OSError:
            pass  # the client went away mid-write
        finally:
            self.dispatcher.hub.remove(subscription)

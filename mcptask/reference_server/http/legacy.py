"""Streamable HTTP of the 2025-11-25 era: sessions (Mcp-Session-Id), POSTs answered as JSON
or resumable SSE, the session's GET notification stream, and DELETE.

Also SSE polling (SEP-1699): a POST stream the server closes after its priming event, whose
messages the client gets by resuming it with GET and Last-Event-ID (the fixture
test_reconnection, and the sse-cut fault switch).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import secrets
import socket
from collections.abc import Iterator
from http.cookies import CookieError, SimpleCookie

from mcptask.reference_server.config import AnswerMode, FaultKind
from mcptask.reference_server.eras.legacy import LegacyDispatcher
from mcptask.reference_server.http.framing import (
    BAD_REQUEST,
    EVENT_STREAM,
    LAST_CHUNK,
    Exchange,
    chunk,
    message_event,
    priming_event,
)
from mcptask.reference_server.http.policy import accepted_types
from mcptask.reference_server.http.sessions import Session, SessionRegistry
from mcptask.reference_server.records import TaskView
from mcptask.reference_server.store import TaskStore
from mcptask.reference_server.wire import JsonObject, MessageKind, classify

# An unknown session (JSON-RPC server-error range, as the official SDKs use it).
SESSION_NOT_FOUND = -32001
GET_STREAM = "get"
AFFINITY_COOKIE = "mcptask-affinity"
# MCP-Protocol-Version values accepted on requests of a legacy session: the released
# versions that speak Streamable HTTP (a request without the header is taken as 2025-03-26
# and served). The session's semantics stay those initialize negotiated (2025-11-25).
LEGACY_HEADER_VERSIONS = frozenset({"2025-03-26", "2025-06-18", "2025-11-25"})
# Client reconnect delay advertised on the GET stream's priming event.
RETRY_MS = 1000

log = logging.getLogger("mcptask.reference_server")


class LegacyEndpoint:
    """The 2025-11-25 side of the /mcp endpoint; one per server, shared by connections."""

    allow = "GET, POST, DELETE"

    def __init__(self, dispatcher: LegacyDispatcher, store: TaskStore) -> None:
        self.dispatcher = dispatcher
        self.config = dispatcher.config
        self.sessions = SessionRegistry(self.config.session_idle_seconds)
        dispatcher.principal_of = self.sessions.principal_of
        if self.config.notify:
            store.add_listener(
                lambda view: self.sessions.broadcast(
                    dispatcher.status_notification(view), view.owner
                )
            )
        if self.config.get_stream:
            store.add_listener(self._ask_on_get_stream)

    def post(self, exchange: Exchange, message: JsonObject) -> None:
        """A request, notification or response of a session (initialize opens one)."""
        kind = classify(message)
        method = message.get("method") if kind is MessageKind.REQUEST else None
        # A new session per initialize (the old id, if any, is ignored).
        new_session = method == "initialize"
        if new_session:
            session = self.sessions.create(exchange.principal)
        else:
            session = self._require_session(exchange)
        count = session.count_request()
        try:
            if isinstance(method, str):
                self._answer(exchange, method, message, session, new_session)
            else:
                self.dispatcher.handle(message, session.id)
                exchange.send(202)
        finally:
            limit = self.config.drop_session_after
            if limit is not None and count >= limit:
                self.sessions.remove(session.id)

    def _answer(
        self,
        exchange: Exchange,
        method: str,
        message: JsonObject,
        session: Session,
        new_session: bool,
    ) -> None:
        if exchange.fault is FaultKind.SSE_CUT:
            retry_ms = self.config.fault_switches.retry_after_s * 1000
            self._answer_after_closing(exchange, message, session, retry_ms)
            return
        plain_sse = self.config.answer is AnswerMode.SSE and self.config.fault is None
        if plain_sse and exchange.fault is None and method == "tasks/result":
            self._answer_as_it_goes(exchange, message, session)
            return
        if plain_sse and self.dispatcher.closes_stream(message):
            self._answer_after_closing(exchange, message, session, RETRY_MS)
            return
        reply = self.dispatcher.handle(message, session.id)
        assert reply.response is not None
        headers = {"Mcp-Session-Id": session.id} if new_session else {}
        if new_session and self.config.affinity_cookie:
            headers["Set-Cookie"] = f"{AFFINITY_COOKIE}={session.id}; Path=/; HttpOnly"
        exchange.deliver(method, reply.response, reply.related, headers, resumable=True)

    def _answer_after_closing(
        self, exchange: Exchange, message: JsonObject, session: Session, retry_ms: int
    ) -> None:
        """SSE polling (SEP-1699): send the priming event with a retry delay, close the
        stream, then handle the request; its messages wait for a GET with Last-Event-ID."""
        stream = secrets.token_hex(6)
        session.open_post_stream(stream)
        exchange.close_connection = True
        exchange.send(
            200,
            priming_event(f"{stream}-0", retry_ms),
            EVENT_STREAM,
            {"Cache-Control": "no-cache"},
        )
        with contextlib.suppress(OSError):  # the client may be gone already: no matter
            exchange.connection.shutdown(socket.SHUT_WR)
        reply = self.dispatcher.handle(message, session.id)
        assert reply.response is not None
        if exchange.answer_or_not():
            session.finish_post_stream(stream, [*reply.related, reply.response])

    def _answer_as_it_goes(self, exchange: Exchange, message: JsonObject, session: Session) -> None:
        """tasks/result as an SSE stream written as it goes: each question to the client the
        moment it is asked, then the notifications of the request and the response."""
        stream = secrets.token_hex(6)
        numbers = itertools.count(1)
        broken = False

        def write(data: bytes) -> None:  # (asks come from the handling thread: no lock)
            nonlocal broken
            if broken:
                return
            try:
                exchange.wfile.write(data)
                exchange.wfile.flush()
            except OSError:
                broken = True

        def event(item: JsonObject) -> bytes:
            return chunk(message_event(item, f"{stream}-{next(numbers)}"))

        write(exchange.event_stream_head() + chunk(priming_event(f"{stream}-0")))
        exchange.log_request(200)
        reply = self.dispatcher.handle(message, session.id, lambda request: write(event(request)))
        assert reply.response is not None
        if not exchange.answer_or_not():
            return
        write(b"".join(event(item) for item in [*reply.related, reply.response]) + LAST_CHUNK)
        if broken:
            exchange.close_connection = True

    def _ask_on_get_stream(self, view: TaskView) -> None:
        """A task asks something new: its creator's session is asked on its GET stream,
        once, if that stream is open then."""
        announced = self.dispatcher.asking.announce(view)
        if announced is None:
            return
        session_id, requests = announced
        session = self.sessions.get(session_id) if session_id is not None else None
        if session is None or not session.listening:
            return
        for request in requests:
            session.push(request)

    def get(self, exchange: Exchange) -> None:
        """The session's notification stream, or the rest of a POST stream it resumes."""
        if not self.config.get_stream:
            exchange.fail(
                405, BAD_REQUEST, "This server offers no GET stream", {"Allow": "POST, DELETE"}
            )
        if EVENT_STREAM not in accepted_types(exchange.headers.get("Accept")):
            exchange.fail(406, BAD_REQUEST, "Accept must list text/event-stream")
        session = self._require_session(exchange)
        last_event_id = exchange.headers.get("Last-Event-ID")
        stream, number = _event_id(last_event_id)
        if stream != GET_STREAM and session.has_post_stream(stream):
            self._resume_post_stream(exchange, session, stream, number)
            return
        token, cursor = session.open_stream()
        if stream == GET_STREAM and number <= session.last_id:
            # (an id from beyond what was sent would skip the notifications still to come)
            cursor = number
        heartbeat = self.config.heartbeat_seconds

        def events() -> Iterator[bytes]:
            nonlocal cursor
            while (batch := session.wait_events(token, cursor, heartbeat)) is not None:
                yield b"".join(message_event(msg, f"{GET_STREAM}-{n}") for n, msg in batch)
                if batch:
                    cursor = batch[-1][0]
                    session.mark_sent(cursor)

        session.listening += 1
        try:
            exchange.stream(priming_event(f"{GET_STREAM}-{cursor}", RETRY_MS), events())
        finally:
            session.listening -= 1

    def _resume_post_stream(
        self, exchange: Exchange, session: Session, stream: str, after: int
    ) -> None:
        """GET with the Last-Event-ID of a POST stream the server closed early: the rest of
        that stream, then the end."""
        log.info("GET with Last-Event-ID %s-%d resumes a closed POST stream", stream, after)
        heartbeat = self.config.heartbeat_seconds

        def events() -> Iterator[bytes]:
            while (messages := session.post_stream_messages(stream, after, heartbeat)) is None:
                if session.closed or not session.has_post_stream(stream):
                    return
                yield b""
            if messages:
                yield b"".join(message_event(m, f"{stream}-{n}") for n, m in messages)

        exchange.stream(b"", events())

    def delete(self, exchange: Exchange) -> None:
        session = self._require_session(exchange)
        self.sessions.remove(session.id)
        exchange.send(200)

    def _require_session(self, exchange: Exchange) -> Session:
        session_id = exchange.headers.get("Mcp-Session-Id")
        if not session_id:
            exchange.fail(400, BAD_REQUEST, "Missing Mcp-Session-Id header")
        session = self.sessions.get(session_id)
        if session is None or session.principal != exchange.principal:
            # (another client's session, --oauth: as if it did not exist)
            exchange.fail(404, SESSION_NOT_FOUND, "Session not found")
        if self.config.affinity_cookie and not _has_affinity(exchange, session.id):
            exchange.fail(400, BAD_REQUEST, f"Missing the {AFFINITY_COOKIE} cookie")
        version = exchange.headers.get("MCP-Protocol-Version")
        if version is not None and version not in LEGACY_HEADER_VERSIONS:
            exchange.fail(400, BAD_REQUEST, f"Unsupported MCP-Protocol-Version: {version}")
        return session


def _has_affinity(exchange: Exchange, session_id: str) -> bool:
    cookies = SimpleCookie()
    with contextlib.suppress(CookieError):
        cookies.load(exchange.headers.get("Cookie", ""))
    morsel = cookies.get(AFFINITY_COOKIE)
    return morsel is not None and morsel.value == session_id


def _event_id(last_event_id: str | None) -> tuple[str, int]:
    """(stream, number) of an event id: `get-12` of the GET stream, `3fa2b81c09d4-0` of a
    POST answer stream; ("", 0) for no id or a malformed one."""
    stream, sep, number = (last_event_id or "").rpartition("-")
    if not sep or not stream or not (number.isascii() and number.isdigit()):
        return "", 0
    return stream, int(number)

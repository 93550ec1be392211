"""Streamable HTTP sessions: ids, request counts, and the buffered GET notification stream."""

from __future__ import annotations

import secrets
import threading
import time
from collections import OrderedDict, deque

from mcptask.reference_server.wire import JsonObject

EVENT_BUFFER_SIZE = 1000
# Closed POST streams kept for resumption, per session (the oldest are forgotten first).
POST_STREAM_LIMIT = 64


class Session:
    """One MCP session and the notifications waiting for (or already sent on) its GET stream,
    numbered 1, 2, ... and kept in a bounded buffer so a client can resume a dropped stream
    with Last-Event-ID. Opening a GET stream ends the previous one, so no message goes out
    on two streams."""

    def __init__(self, session_id: str, principal: str | None = None) -> None:
        self.id = session_id
        # The client the session belongs to (--oauth): requests with another client's
        # token do not find it.
        self.principal = principal
        self.last_used = time.monotonic()
        self._cond = threading.Condition()
        self._events: deque[tuple[int, JsonObject]] = deque(maxlen=EVENT_BUFFER_SIZE)
        self._last_id = 0
        self._sent_upto = 0
        self._generation = 0
        self._requests = 0
        # POST answer streams the server closed early: the messages owed on each (numbered
        # from 1 after its priming event 0), None until they are ready.
        self._post_streams: OrderedDict[str, list[JsonObject] | None] = OrderedDict()
        self.closed = False
        # How many GET streams are being served (a question is sent there only if one is).
        self.listening = 0

    def count_request(self) -> int:
        with self._cond:
            self._requests += 1
            self.last_used = time.monotonic()
            return self._requests

    @property
    def last_id(self) -> int:
        with self._cond:
            return self._last_id

    def push(self, message: JsonObject) -> None:
        with self._cond:
            self._last_id += 1
            self._events.append((self._last_id, message))
            self._cond.notify_all()

    def open_stream(self) -> tuple[int, int]:
        """Start serving a GET stream: (stream token, id of the last event any stream sent,
        where a stream without Last-Event-ID continues)."""
        with self._cond:
            self._generation += 1
            self._cond.notify_all()  # an older stream sees the new generation and ends
            return self._generation, self._sent_upto

    def wait_events(
        self, token: int, after: int, timeout: float
    ) -> list[tuple[int, JsonObject]] | None:
        """Events newer than `after`, waiting up to `timeout` seconds for the first one: []
        on timeout, None when the stream must end (session closed, or a newer stream)."""
        with self._cond:
            self._cond.wait_for(
                lambda: self._ended(token) or self._last_id > after, timeout=timeout
            )
            if self._ended(token):
                return None
            self.last_used = time.monotonic()  # a stream still open keeps the session alive
            return [(event_id, msg) for event_id, msg in self._events if event_id > after]

    def open_post_stream(self, stream: str) -> None:
        """Remember a POST answer stream that is closed before its messages are ready."""
        with self._cond:
            self._post_streams[stream] = None
            while len(self._post_streams) > POST_STREAM_LIMIT:
                self._post_streams.popitem(last=False)

    def finish_post_stream(self, stream: str, messages: list[JsonObject]) -> None:
        """The messages of a closed POST stream are ready (the last one is the response)."""
        with self._cond:
            if stream in self._post_streams:
                self._post_streams[stream] = list(messages)
                self._cond.notify_all()

    def has_post_stream(self, stream: str) -> bool:
        with self._cond:
            return stream in self._post_streams

    def post_stream_messages(
        self, stream: str, after: int, timeout: float
    ) -> list[tuple[int, JsonObject]] | None:
        """The messages of a closed POST stream numbered after `after`, once they are all
        ready, waiting up to `timeout` seconds; None meanwhile (or when it is gone)."""
        with self._cond:
            self._cond.wait_for(
                lambda: self.closed or self._post_streams.get(stream, ()) is not None,  # or gone
                timeout=timeout,
            )
            messages = self._post_streams.get(stream)
            if self.closed or messages is None:
                return None
            return list(enumerate(messages, start=1))[after:]

    def mark_sent(self, event_id: int) -> None:
        with self._cond:
            self._sent_upto = max(self._sent_upto, event_id)

    def close(self) -> None:
        with self._cond:
            self.closed = True
            self._cond.notify_all()

    def _ended(self, token: int) -> bool:
        return self.closed or token != self._generation


class SessionRegistry:
    """All live sessions of the HTTP server; one unused for `idle_seconds` (0: never) is
    forgotten."""

    def __init__(self, idle_seconds: float = 0.0) -> None:
        self._lock = threading.Lock()
        self._sessions: dict[str, Session] = {}
        self._idle_seconds = idle_seconds

    def create(self, principal: str | None = None) -> Session:
        """A new session of `principal` (--oauth), its id random visible ASCII (spec)."""
        session = Session(secrets.token_hex(16), principal)
        self._forget_idle()
        with self._lock:
            self._sessions[session.id] = session
        return session

    def get(self, session_id: str) -> Session | None:
        self._forget_idle()
        with self._lock:
            return self._sessions.get(session_id)

    def principal_of(self, session_id: str | None) -> str | None:
        with self._lock:
            session = self._sessions.get(session_id) if session_id is not None else None
        return None if session is None else session.principal

    def _forget_idle(self) -> None:
        if not self._idle_seconds:
            return
        horizon = time.monotonic() - self._idle_seconds
        with self._lock:
            idle = [s for s in self._sessions.values() if s.last_used < horizon]
            for session in idle:
                del self._sessions[session.id]
        for session in idle:
            session.close()

    def remove(self, session_id: str) -> None:
        with self._lock:
            session = self._sessions.pop(session_id, None)
        if session is not None:
            session.close()

    def broadcast(self, message: JsonObject, owner: str | None) -> None:
        """Queue a notification for every session that may see the task it is about."""
        with self._lock:
            targets = [
                s for s in self._sessions.values() if owner is None or owner in (s.id, s.principal)
            ]
        for session in targets:
            session.push(message)

"""Transports carry JSON-RPC messages to a server and back (Streamable HTTP, stdio), and turn
httpx and OS errors into mcptask errors: nothing above them sees httpx."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Protocol

from mcptask.protocol.jsonrpc import JsonObject

DEFAULT_TIMEOUT_SECONDS = 30.0
"""How long one answer may take in all, unless `--timeout` or a profile says otherwise."""

WireLog = Callable[[str], None]
"""Receives one human-readable line per message on the wire (already redacted)."""

NotificationHandler = Callable[[JsonObject], None]
"""Receives each notification the server sends, from whatever thread the transport uses."""

Reply = Callable[[JsonObject], None]
"""Sends our JSON-RPC response to one request of the server's, in the session the request
came in; from any thread; raises what sending raises."""

ServerRequestHandler = Callable[[JsonObject, Reply], None]
"""Receives each request the server sends (`elicitation/create`, ...) with the way to answer
it; it must return at once (the stream it came on is still being read) and may answer later,
from another thread. Without a handler such requests are not answered (stdio refuses them)."""


class Transport(Protocol):
    """The base of every transport: the session methods do nothing by default (only
    Streamable HTTP has sessions)."""

    kind: str
    """`http` or `stdio`, for display."""
    target: str
    """The URL or the command line, for display (credentials never included)."""
    concurrent: bool
    """`request` may be called from two threads at once, each request travelling on its own
    (what lets a bulk cancel confirm one task while it cancels the next)."""
    timeout: float = DEFAULT_TIMEOUT_SECONDS
    """How long one answer may take in all (--timeout), unless a request says otherwise."""
    session_id: str | None = None
    """The Streamable HTTP session in use, if any."""
    protocol_version: str | None = None
    """The negotiated protocol version, sent with every HTTP request once known."""
    _log: WireLog | None = None
    _handler: NotificationHandler | None = None
    _request_handler: ServerRequestHandler | None = None

    def request(
        self,
        message: JsonObject,
        *,
        timeout: float | None = None,
        headers: dict[str, str] | None = None,
        session: str | None = None,
    ) -> JsonObject:
        """Send a request and return the server's response to it (result or error), with
        per-request HTTP `headers`, in an existing `session` instead of the current one
        (both ignored where there are none)."""
        ...

    def subscribe(
        self, message: JsonObject, *, headers: dict[str, str] | None, stop: threading.Event
    ) -> None:
        """Send a long-lived request whose answer is a stream of notifications for the
        handler, until `stop` or the stream's end. HTTP blocks (run it in a thread); stdio
        only writes the request. Never raises: polling stays the baseline."""
        ...

    def notify(self, message: JsonObject) -> None: ...

    def close(self) -> None:
        """Release the connection or child process; ends a session this process created."""
        ...

    def listen(self, stop: threading.Event) -> None:
        """Follow the server's own stream of notifications until `stop` (HTTP: the session's
        GET stream; stdio pushes arrive anyway). Failures never surface."""
        return None  # a default (an empty body would make it abstract)

    def set_notification_handler(self, handler: NotificationHandler | None) -> None:
        """Route the server's notifications to `handler` (None drops them)."""
        self._handler = handler

    def set_request_handler(self, handler: ServerRequestHandler | None) -> None:
        """Route the requests the server sends to `handler` (None: leave them unanswered)."""
        self._request_handler = handler

    def join_session(self, session_id: str) -> None:
        """Send later requests in an existing session that this process did not create."""
        ...

    def keep_session(self) -> None:
        """Never DELETE the current session: it is to outlive this process."""
        return None

    def reset_session(self) -> None:
        """Forget the current session so that the next initialize starts a new one."""
        return None

    def end_session(self) -> None:
        """End the current session on the server if this process created it."""
        return None

    def _trace(self, line: str) -> None:
        if self._log is not None:
            self._log(line)

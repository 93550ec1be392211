"""One HTTP exchange in bytes: request bodies, heads, JSON or SSE answers (per --answer,
broken per --fault), chunked event streams, and what the fault switches do to an answer.
It knows HTTP and SSE, not the protocol eras, whose endpoints decide what to send."""

from __future__ import annotations

import http
import logging
import secrets
import select
import socket
import struct
from collections.abc import Iterable, Mapping
from http.server import BaseHTTPRequestHandler
from typing import Any, NoReturn

from mcptask import __version__
from mcptask.reference_server.config import AnswerMode, Fault, FaultKind, ServerConfig
from mcptask.reference_server.faults import (
    FaultPlan,
    die,
    padded,
    tampered,
)
from mcptask.reference_server.wire import (
    JsonObject,
    encode_message,
    error_response,
    request_id,
)

MAX_BODY = 4 * 1024 * 1024
JSON = "application/json"
EVENT_STREAM = "text/event-stream"
# Error code for failures of the HTTP layer (JSON-RPC server-error range, as the official
# SDKs use it): a bad header, a missing session, a refused method.
BAD_REQUEST = -32000
# The end of a chunked body.
LAST_CHUNK = b"0\r\n\r\n"

log = logging.getLogger("mcptask.reference_server")


class Done(Exception):
    """Raised after an error answer was sent, to end the handling of a request."""


def chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


class Exchange(BaseHTTPRequestHandler):
    """Handles one connection (HTTP/1.1 keep-alive: many requests); the subclass sets the
    server's settings (`config`, `plan`) in setup and gives the do_* methods."""

    protocol_version = "HTTP/1.1"
    server_version = f"mcptask-reference/{__version__}"
    config: ServerConfig
    plan: FaultPlan
    # Per request of the connection: its JSON-RPC message (None before it is read), the
    # fault the switches drew for it, and who its bearer token speaks for (--oauth).
    request_message: JsonObject | None = None
    fault: FaultKind | None = None
    principal: str | None = None

    def setup(self) -> None:
        super().setup()
        # Answers are small and latency matters (hundreds of requests on one connection):
        # without TCP_NODELAY, Nagle plus delayed ACKs can add ~40 ms per request.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:
        if self.config.log_requests:
            log.info("%s %s", self.address_string(), format % args)

    def read_body(self) -> bytes:
        """The request body (Content-Length or chunked); 400/413 when it is malformed."""
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
            self.fail(413 if length > MAX_BODY else 400, BAD_REQUEST, "Bad Content-Length")
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
                self.fail(400, BAD_REQUEST, "Bad chunked body")
            if size == 0:
                while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return b"".join(parts)
            parts.append(self.rfile.read(size))
            self.rfile.readline(1024)

    def peer_closed(self) -> bool:
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            if not readable:
                return False
            peeked: bytes = self.connection.recv(1, socket.MSG_PEEK)
            return peeked == b""
        except OSError:
            return True

    def head(self, status: int, headers: Mapping[str, str]) -> bytes:
        lines = [
            f"{self.protocol_version} {status} {http.HTTPStatus(status).phrase}",
            f"Server: {self.version_string()}",
            f"Date: {self.date_time_string()}",
        ]
        lines.extend(f"{name}: {value}" for name, value in headers.items())
        if self.close_connection:
            lines.append("Connection: close")
        return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")

    def event_stream_head(self, *, unbuffered: bool = False) -> bytes:
        """The head of a chunked SSE stream (`unbuffered`: ask proxies not to buffer it)."""
        headers = {"Content-Type": EVENT_STREAM, "Cache-Control": "no-cache"}
        if unbuffered:
            headers["X-Accel-Buffering"] = "no"
        headers["Transfer-Encoding"] = "chunked"
        return self.head(200, headers)

    def stream(self, first: bytes, events: Iterable[bytes], *, unbuffered: bool = False) -> None:
        """A chunked SSE stream after which the connection closes: `first`, then each piece
        of `events` as a chunk (b"": a heartbeat comment, which clients ignore and a dead
        socket fails), then the end. An OSError, raised by `events` too, ends it there: the
        client went away (it may resume with Last-Event-ID)."""
        head = self.event_stream_head(unbuffered=unbuffered)
        self.close_connection = True
        try:
            self.wfile.write(head + (chunk(first) if first else b""))
            self.log_request(200)
            for data in events:
                self.wfile.write(chunk(data or HEARTBEAT))
            self.wfile.write(LAST_CHUNK)
        except OSError:
            pass

    def send(
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
        self.wfile.write(self.head(status, all_headers) + body)
        self.log_request(status, len(body))

    def fail(
        self,
        status: int,
        code: int,
        message: str,
        headers: Mapping[str, str] | None = None,
        msg_id: str | int | None = None,
    ) -> NoReturn:
        """Answer an HTTP-layer error with a JSON-RPC error body, then stop handling."""
        body = encode_message(error_response(msg_id, code, message)).encode()
        self.send(status, body, JSON, headers)
        raise Done

    def method_not_allowed(self, allow: str) -> NoReturn:
        self.close_connection = True  # the request body, if any, is left unread
        self.fail(405, BAD_REQUEST, "Method not allowed", {"Allow": allow})

    def deliver(
        self,
        method: str,
        response: JsonObject,
        related: list[JsonObject],
        headers: dict[str, str],
        *,
        resumable: bool,
    ) -> None:
        """Answer with HTTP 200: JSON or SSE per --answer, broken per --fault or as the
        fault switches drew. `resumable` (2025-11-25): SSE events carry ids after a priming
        event; 2026-07-28 streams have neither (an sse-cut there loses the answer)."""
        if not self.answer_or_not():
            return
        if self.fault is FaultKind.OVERSIZED:
            self.send_oversized(200, response, headers)
            return
        if self.fault is FaultKind.SSE_CUT:
            # The stream ends before the response, and nothing can resume it: lost.
            self.send(200, b"", EVENT_STREAM, {**headers, "Cache-Control": "no-cache"})
            return
        config = self.config
        answer = tampered(config.fault, method, response)
        if answer is None:
            self.close_connection = True  # drop: the client sees a closed socket
            return
        if isinstance(answer, bytes):
            content_type = "text/html" if config.fault is Fault.WRONG_CONTENT_TYPE else JSON
            self.send(200, answer, content_type, headers)
            return
        response = answer
        if config.answer is AnswerMode.JSON:
            self.send(200, encode_message(response).encode(), JSON, headers)
            return
        # One SSE stream per request, sent whole with a Content-Length (keep-alive).
        if resumable:
            stream = secrets.token_hex(6)
            events = [priming_event(f"{stream}-0")]
            for index, item in enumerate([*related, response], start=1):
                events.append(message_event(item, f"{stream}-{index}"))
        else:
            events = [message_event(item) for item in [*related, response]]
            headers["X-Accel-Buffering"] = "no"
        headers["Cache-Control"] = "no-cache"
        self.send(200, b"".join(events), EVENT_STREAM, headers)

    def refuse_for_fault(self) -> NoReturn:
        """busy (503) or rate-limited (429), with Retry-After: the request is not handled."""
        status = 503 if self.fault is FaultKind.BUSY else 429
        wait = self.config.fault_switches.retry_after_s
        self.fail(
            status,
            BAD_REQUEST,
            f"{http.HTTPStatus(status).phrase}: try again in {wait} s (fault switch)",
            {"Retry-After": str(wait)},
            msg_id=request_id(self.request_message),
        )

    def reset_connection(self) -> NoReturn:
        """reset: abort the connection, the request unhandled (SO_LINGER 0: a TCP RST)."""
        self.close_connection = True
        linger = struct.pack("ii", 1, 0)
        try:
            self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
            self.connection.close()
        except OSError:
            pass  # already gone: no matter
        raise Done

    def answer_or_not(self) -> bool:
        """Just before an answer: end the process (--die-after), lose the answer (lost:
        returns False, the connection closes) or hold it back (slow)."""
        last_words = self.plan.answering(self.request_message)
        if last_words is not None:
            die(last_words)
        if self.fault is FaultKind.LOST:
            self.close_connection = True
            return False
        if self.fault is FaultKind.SLOW:
            self.plan.sleep(self.config.fault_switches.delay_ms / 1000)
        return True

    def answer_status(self, status: int, response: JsonObject) -> None:
        """A JSON answer with an HTTP error status, as the switches drew."""
        if not self.answer_or_not():
            return
        if self.fault is FaultKind.OVERSIZED:
            self.send_oversized(status, response, {})
            return
        self.send(status, encode_message(response).encode(), JSON)

    def send_oversized(self, status: int, response: JsonObject, headers: dict[str, str]) -> None:
        """oversized: a JSON body with its Content-Length, or (SSE, HTTP 200) one event in a
        chunked stream."""
        answer = padded(response, self.config.fault_switches.oversize_bytes)
        try:
            if status == 200 and self.config.answer is AnswerMode.SSE:
                self.wfile.write(self.event_stream_head())
                write = self.wfile.write
                answer.write(lambda piece: write(chunk(piece)), b"event: message\ndata: ", b"\n\n")
                self.wfile.write(LAST_CHUNK)
            else:
                all_headers = {**headers, "Content-Type": JSON, "Content-Length": str(answer.size)}
                self.wfile.write(self.head(status, all_headers))
                answer.write(self.wfile.write)
        except OSError:
            self.close_connection = True


HEARTBEAT = b": heartbeat\n\n"


def message_event(message: JsonObject, event_id: str | None = None) -> bytes:
    id_line = f"id: {event_id}\n" if event_id is not None else ""
    return f"event: message\n{id_line}data: {encode_message(message)}\n\n".encode()


def priming_event(event_id: str, retry_ms: int | None = None) -> bytes:
    """An event with an id and empty data: lets the client resume with Last-Event-ID."""
    retry = f"retry: {retry_ms}\n" if retry_ms is not None else ""
    return f"id: {event_id}\n{retry}data:\n\n".encode()

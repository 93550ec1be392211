"""Server-Sent Events answers: where a stream got to (the last resumable event id and the
server's `retry:`), for resuming it, and the end of the stream behind the response, read
when it comes at once (`StreamEnds`)."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator
from dataclasses import dataclass

import httpx
from httpx_sse import ServerSentEvent, SSEError

from mcptask.errors import McptaskError

DRAIN_SECONDS = 0.05
"""How long the end of an unbounded stream is waited for once our response is in it."""
MISSES = 2
"""Streams whose end did not come in time before a transport stops waiting for ends."""


@dataclass
class StreamEnds:
    """Reading the end of an answer's event stream, so that its connection is kept.

    httpx reuses a connection only when its answer was read to the end. A server that answers
    each POST with a chunked event stream (no Content-Length, as the official SDK 1.x servers
    do) ends it right behind the response; one that leaves it open would hold the read until
    the read timeout. So the rest is read with a deadline: at `DRAIN_SECONDS` a timer shuts
    the reading side of the connection's socket (the `network_stream` response extension's),
    the read ends and the connection is closed. After `MISSES` such streams a transport no
    longer waits: each stream is closed at once, and its connection with it.
    """

    misses: int = 0

    @property
    def waits(self) -> bool:
        """Whether waiting for a stream's end is still worth trying with this server."""
        return self.misses < MISSES

    def read_rest(self, response: httpx.Response, rest: Iterator[object]) -> None:
        """Read what is left of `response` (`rest`: its remaining events) if its end comes in
        time; else leave it for the caller to close. Never raises: the answer is in."""
        stream = response.extensions.get("network_stream")
        sock = stream.get_extra_info("socket") if stream is not None else None
        if not isinstance(sock, socket.socket) or not self.waits:
            return
        claimed = threading.Lock()  # by the cut or by the end of the read: the first wins

        def cut() -> None:
            if not claimed.acquire(blocking=False):
                return  # the end came in time
            # On a duplicate of its descriptor: the socket object is httpcore's.
            with (
                contextlib.suppress(OSError),
                socket.fromfd(sock.fileno(), sock.family, sock.type) as duplicate,
            ):
                duplicate.shutdown(socket.SHUT_RD)

        timer = threading.Timer(DRAIN_SECONDS, cut)
        timer.daemon = True
        timer.start()
        try:
            for _ in rest:
                pass
        except (httpx.HTTPError, SSEError, McptaskError):
            pass  # a broken or cut rest costs its connection, not the answer
        finally:
            in_time = claimed.acquire(blocking=False)
            timer.cancel()
        if not in_time:
            self.misses += 1


@dataclass
class StreamPosition:
    """Where an answer's event stream got to: the last event id and the server's `retry:`."""

    last_id: str | None = None
    retry_ms: int | None = None

    def saw(self, event: ServerSentEvent) -> None:
        """Take the event's id if it can be sent back as `Last-Event-ID` (printable ASCII):
        a server's id that cannot travel in a header makes its stream not resumable."""
        if event.id and event.id.isascii() and event.id.isprintable():  # 0x20..0x7E
            self.last_id = event.id
        if event.retry is not None:
            self.retry_ms = event.retry


def media_type(response: httpx.Response) -> str:
    """The response's Content-Type without parameters, lower-case ("" when absent)."""
    content_type: str = response.headers.get("Content-Type", "")
    return content_type.split(";")[0].strip().lower()

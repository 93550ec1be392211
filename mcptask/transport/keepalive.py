"""Keeping the connection of an answer whose event stream ends just behind our response.

httpx reuses a connection only when its answer was read to the end. A server that answers
each POST with a chunked event stream (no Content-Length, as the official SDK 1.x servers
do) ends that stream right after the response, but waiting for the end with the request's
read timeout would stall on a server that leaves its streams open. So mcptask closed such an
answer after the response, and paid a new TCP (and TLS) connection for every request.

Here the connections take a short read timeout while an answer is drained (`read_to_end`):
an end that is on its way is read within `GRACE_SECONDS` and the connection is kept; a stream
that stays open costs that grace, its connection is closed, and after `MISSES` such streams
the pool stops waiting. httpx's `HTTPTransport` takes no network backend of ours, so
`KeepAliveTransport` gives it a pool that has one (the `network_backend` of httpcore's
`ConnectionPool`), built as httpx builds its own.
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Iterable, Iterator

import httpcore
import httpx
from httpx_sse import SSEError

from mcptask.errors import McptaskError

GRACE_SECONDS = 0.02
"""How long one read of a drained answer may wait for its end (servers send it at once)."""
DRAIN_SECONDS = 0.1
"""How long draining one answer may take in all (a stream that keeps talking is closed)."""
MISSES = 2
"""Answers whose end did not come in time before a pool no longer waits for one."""


class KeepAliveTransport(httpx.HTTPTransport):
    """httpx's transport over a connection pool whose connections can be drained briefly."""

    def __init__(self, verify: ssl.SSLContext | bool) -> None:
        # Not super().__init__(): it would build a pool (and an SSL context) only to drop it.
        # HTTPTransport keeps nothing else; its requests go to `_pool` (httpx 0.18 to 0.28).
        self.backend = PatientBackend()
        self._pool = httpcore.ConnectionPool(
            ssl_context=httpx.create_ssl_context(verify=verify),
            max_connections=100,  # httpx's default limits
            max_keepalive_connections=20,
            keepalive_expiry=5.0,
            network_backend=self.backend,
        )


class PatientBackend(httpcore.NetworkBackend):
    """httpcore's own sockets, each able to wait briefly (`DrainableStream.drain_until`)."""

    def __init__(self) -> None:
        self._sockets = httpcore.SyncBackend()
        self.misses = 0

    @property
    def waits(self) -> bool:
        """Whether draining an answer is still worth trying on this pool."""
        return self.misses < MISSES

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        stream = self._sockets.connect_tcp(host, port, timeout, local_address, socket_options)
        return DrainableStream(stream, self)

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        return DrainableStream(
            self._sockets.connect_unix_socket(path, timeout, socket_options), self
        )

    def sleep(self, seconds: float) -> None:
        self._sockets.sleep(seconds)


class DrainableStream(httpcore.NetworkStream):
    """One connection's socket; while it is drained, no read waits past the grace."""

    def __init__(self, stream: httpcore.NetworkStream, backend: PatientBackend) -> None:
        self._stream = stream
        self.backend = backend
        self.drain_until: float | None = None
        """While an answer is drained: when draining gives up (time.monotonic())."""

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        if self.drain_until is not None:
            # A stream that keeps talking (comments, a trickle) is cut here too, not only
            # one that falls silent: every read waits no longer than the grace and the end.
            left = self.drain_until - time.monotonic()
            if left <= 0:
                raise httpcore.ReadTimeout("the drained answer did not end in time")
            timeout = min(GRACE_SECONDS, left, timeout if timeout is not None else left)
        return self._stream.read(max_bytes, timeout)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, timeout)

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        secured = self._stream.start_tls(ssl_context, server_hostname, timeout)
        return DrainableStream(secured, self.backend)

    def get_extra_info(self, info: str) -> object:
        return self._stream.get_extra_info(info)


def read_to_end(response: httpx.Response, rest: Iterator[object]) -> None:
    """Read what is left of an unbounded answer (`rest`: its remaining events) if its end
    comes at once, so that its connection is kept; else leave it for the caller to close
    (the connection then goes). Never raises for the stream's sake: the answer is in."""
    stream = response.extensions.get("network_stream")
    if not isinstance(stream, DrainableStream) or not stream.backend.waits:
        return
    stream.drain_until = time.monotonic() + DRAIN_SECONDS
    try:
        for _ in rest:
            pass
    except httpx.ReadTimeout:
        stream.backend.misses += 1
    except (httpx.HTTPError, SSEError, McptaskError):
        return  # a broken rest costs its connection, not the answer
    finally:
        stream.drain_until = None

"""Bounded reading of answers: limited in size and depth, checked to be JSON-RPC; and of
Server-Sent Events answers, where a stream got to (for resuming it) and its end.

Both transports, and sign-in's requests to authorization servers, use these: an answer over
`max_answer_bytes` (default 32 MiB, `MCPTASK_MAX_ANSWER_BYTES`) or nested deeper than
`MAX_DEPTH` is refused as a protocol violation (exit 8), and nothing is read without a bound.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from importlib.util import find_spec
from itertools import chain
from typing import Any

import httpx
from httpx_sse import ServerSentEvent, SSEError

from mcptask.errors import HttpTimeout, McptaskError, ProtocolViolation, UsageError
from mcptask.protocol.jsonrpc import JsonObject, check_message, is_response

DEFAULT_MAX_ANSWER_BYTES = 32 * 1024 * 1024
ENV_MAX_ANSWER_BYTES = "MCPTASK_MAX_ANSWER_BYTES"
MAX_DEPTH = 128
"""Deeper than any task, tool result or error a server has reason to send."""


def max_answer_bytes() -> int:
    """The bound on one answer (an HTTP body, an SSE event, a stdio line), in bytes."""
    text = os.environ.get(ENV_MAX_ANSWER_BYTES)
    if not text:
        return DEFAULT_MAX_ANSWER_BYTES
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1024:
        raise UsageError(f"{ENV_MAX_ANSWER_BYTES} takes a number of bytes, at least 1024")
    return value


@dataclass(frozen=True)
class Deadline:
    """When an answer must be in, in full (`time.monotonic`): httpx's timeouts are per read,
    so a server trickling a byte at a time, or an event stream kept open with pings, would
    otherwise hold mcptask for as long as it likes."""

    at: float
    seconds: float
    target: str

    @classmethod
    def after(cls, seconds: float, target: str) -> Deadline:
        return cls(time.monotonic() + seconds, seconds, target)

    def left(self) -> float:
        """Seconds until the time is up (0 once it is)."""
        return max(0.0, self.at - time.monotonic())

    def check(self) -> None:
        if time.monotonic() > self.at:
            raise HttpTimeout(f"{self.target} did not answer within {self.seconds:g}s (--timeout)")


class BoundedStream(httpx.SyncByteStream):
    """A response body that refuses to be read past `limit` bytes, as sent and as httpx
    decodes them (a small gzip body may inflate a thousandfold), or past `deadline`.

    `decoded` counts the bytes the way httpx decodes them (the encodings of Content-Encoding
    undone last first; unknown ones left alone), without keeping them.
    """

    def __init__(
        self,
        inner: httpx.SyncByteStream,
        limit: int,
        encodings: Sequence[str],
        deadline: Deadline | None,
    ) -> None:
        self._inner = inner
        self._limit = limit
        self._deadline = deadline
        self.decoded = 0
        self._stages: list[_Inflater] = []
        for encoding in reversed([value.strip().lower() for value in encodings]):
            if encoding in ("gzip", "deflate"):
                self._stages.append(_Inflater(encoding))
            elif encoding in _UNCOUNTED and any(find_spec(name) for name in _UNCOUNTED[encoding]):
                # httpx would decode it (its module is installed), and nothing here can count it.
                raise ProtocolViolation(
                    f"the server's answer is {encoding}-encoded, which mcptask cannot bound"
                )

    def __iter__(self) -> Iterator[bytes]:
        total = 0
        for chunk in self._inner:
            if self._deadline is not None:
                self._deadline.check()
            total += len(chunk)
            # The decoded size is counted before httpx decodes: a bomb never inflates in full.
            pieces: Iterable[bytes] = (chunk,)
            for stage in self._stages:  # lazily: one piece of each stage held at a time
                pieces = chain.from_iterable(map(stage.pieces, pieces))
            self.decoded += sum(map(len, pieces))
            if total > self._limit or self.decoded > self._limit:
                raise too_large(self._limit)
            yield chunk

    def close(self) -> None:
        self._inner.close()


def bound(response: httpx.Response, limit: int, deadline: Deadline | None = None) -> None:
    """Make `response` refuse a body over `limit`, or still coming at `deadline` (before any
    of it is read)."""
    length = response.headers.get("Content-Length", "")
    if length.isdigit() and int(length) > limit:
        raise too_large(limit)
    if isinstance(response.stream, httpx.SyncByteStream):
        encodings = response.headers.get_list("Content-Encoding", split_commas=True)
        response.stream = BoundedStream(response.stream, limit, encodings, deadline)


_PIECE = 64 * 1024
"""The most decoded bytes held at once while counting."""


_UNCOUNTED = {"br": ("brotli", "brotlicffi"), "zstd": ("zstandard",)}


class _Inflater:
    """One gzip or deflate layer, inflated a piece at a time (as httpx's decoders do: a
    deflate body may lack its zlib header; what follows a gzip member's end is ignored)."""

    def __init__(self, encoding: str) -> None:
        self._gzip = encoding == "gzip"
        self._inflater = zlib.decompressobj(zlib.MAX_WBITS | (16 if self._gzip else 0))
        self._first = True
        self._broken = False

    def pieces(self, data: bytes) -> Iterator[bytes]:
        first, self._first = self._first, False
        while not (self._broken or self._inflater.eof):
            try:
                piece = self._inflater.decompress(data, _PIECE)
            except zlib.error:
                if first and not self._gzip:
                    self._inflater, first = zlib.decompressobj(-zlib.MAX_WBITS), False
                    continue
                self._broken = True  # httpx's decoder fails on it too (DecodingError)
                return
            first = False
            data = self._inflater.unconsumed_tail
            if piece:
                yield piece
            if not data and len(piece) < _PIECE:
                return


def too_large(limit: int) -> ProtocolViolation:
    return ProtocolViolation(
        f"the server's answer is larger than {limit} bytes ({ENV_MAX_ANSWER_BYTES} sets the bound)"
    )


def decode(text: str | bytes, *, context: str, not_json: str | None = None) -> JsonObject:
    """One JSON-RPC message from text: valid JSON, not too deep, shaped like JSON-RPC.

    `not_json` replaces the message for text that is not JSON at all.
    """
    return check_message(parse_json(text, context=context, not_json=not_json), context=context)


def parse_json(text: str | bytes, *, context: str, not_json: str | None = None) -> Any:
    """A JSON value from text, refused when invalid or nested deeper than `MAX_DEPTH`."""
    try:
        value: Any = json.loads(text)
    except (ValueError, UnicodeDecodeError):
        raise ProtocolViolation(not_json or f"{context} is not valid JSON") from None
    except RecursionError:
        raise ProtocolViolation(f"{context} is nested too deeply") from None
    # Every level opens a bracket: the walk of the decoded value is skipped for text with too
    # few brackets to nest too deeply (most answers).
    if isinstance(text, str):
        brackets = text.count("{") + text.count("[")
    else:
        brackets = text.count(b"{") + text.count(b"[")
    if brackets > MAX_DEPTH and _depth_exceeds(value, MAX_DEPTH):
        raise ProtocolViolation(f"{context} is nested deeper than {MAX_DEPTH} levels")
    return value


def own_response(message: JsonObject, request_id: object) -> JsonObject:
    """Check that a response answers our request (an error with a null id is accepted)."""
    if not is_response(message):
        raise ProtocolViolation("the server answered with a request instead of a response")
    if message.get("id") != request_id and not ("error" in message and message.get("id") is None):
        raise ProtocolViolation(
            f"the server answered request {request_id!r} with the id {message.get('id')!r}"
        )
    return message


def parse_json_or_none(text: str | bytes, *, context: str) -> Any:
    try:
        return parse_json(text, context=context)
    except ProtocolViolation:
        return None


def _depth_exceeds(value: object, limit: int) -> bool:
    """True when containers nest deeper than `limit` (iterative: no recursion to exhaust).

    Level by level, keeping only the containers: a page of tasks is mostly scalars, and
    every scalar handled in Python costs as much as decoding it did, so a container with
    none below it (each task of a page) is passed over by a test that runs in C.
    """
    level: list[Any] = [value] if type(value) in _CONTAINERS else []
    depth = 1
    while level:
        if depth > limit:
            return True
        below: list[Any] = []
        for item in level:
            children = item.values() if type(item) is dict else item
            if _CONTAINERS.isdisjoint(map(type, children)):
                continue
            below += [child for child in children if type(child) in _CONTAINERS]
        level, depth = below, depth + 1
    return False


_CONTAINERS = frozenset((dict, list))
"""What `json.loads` makes of objects and arrays (exactly these types)."""


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

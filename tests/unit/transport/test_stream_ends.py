"""The HTTP transport keeps a connection whose chunked event stream ends right behind the
response, and closes one whose stream stays open without waiting long for it, against a
scripted server on 127.0.0.1 that writes its answers in separate pieces as real servers do."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator

import pytest

from mcptask.protocol.jsonrpc import request_message
from mcptask.transport import limits
from mcptask.transport.http import HttpTransport


class ChunkedSseServer:
    """Answers every POST with a chunked text/event-stream holding the response; ends the
    stream a moment later (`ends=True`) or leaves it open."""

    def __init__(self, *, ends: bool, trickles: bool = False) -> None:
        self.ends = ends
        self.trickles = trickles
        """After the response, an SSE comment every 5 ms, never the end."""
        self.connections = 0
        self._listener = socket.socket()
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(8)
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}/mcp"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self._listener.accept()
            except OSError:
                return
            self.connections += 1
            connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._serve, args=(connection,), daemon=True).start()

    def _serve(self, connection: socket.socket) -> None:
        buffer = b""
        with connection:
            while True:
                while b"\r\n\r\n" not in buffer:
                    data = connection.recv(65536)
                    if not data:
                        return
                    buffer += data
                head, _, buffer = buffer.partition(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length:")[1].split(b"\r\n")[0])
                while len(buffer) < length:
                    buffer += connection.recv(65536)
                body, buffer = buffer[:length], buffer[length:]
                request = json.loads(body)
                answer = {"jsonrpc": "2.0", "id": request["id"], "result": {"echo": request["id"]}}
                event = f"event: message\r\ndata: {json.dumps(answer)}\r\n\r\n".encode()
                connection.sendall(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n"
                    b"transfer-encoding: chunked\r\n\r\n"
                    + f"{len(event):x}\r\n".encode() + event + b"\r\n"
                )  # fmt: skip
                while self.trickles:
                    time.sleep(0.005)
                    try:
                        connection.sendall(b"8\r\n: ping\n\n\r\n")
                    except OSError:
                        return  # the client gave up on this stream and closed it
                if not self.ends:
                    continue  # the stream stays open: this connection is never reused
                time.sleep(0.002)  # the end is a write of its own, as the SDK's is
                connection.sendall(b"0\r\n\r\n")

    def close(self) -> None:
        self._listener.close()


@pytest.fixture(params=[True, False], ids=["ends", "stays-open"])
def server(request: pytest.FixtureRequest) -> Iterator[ChunkedSseServer]:
    scripted = ChunkedSseServer(ends=request.param)
    yield scripted
    scripted.close()


def test_each_answer_arrives_and_the_connection_is_kept_when_the_stream_ends(
    server: ChunkedSseServer,
) -> None:
    transport = HttpTransport(server.url, timeout=10)
    try:
        answers = [transport.request(request_message(n, "ping", None)) for n in range(1, 7)]
    finally:
        transport.close()
    assert [answer["result"]["echo"] for answer in answers] == list(range(1, 7))
    if server.ends:
        assert server.connections == 1
    else:
        assert server.connections == 6  # each stream left open costs its connection


def test_a_transport_stops_waiting_after_streams_that_stay_open() -> None:
    server = ChunkedSseServer(ends=False)
    transport = HttpTransport(server.url, timeout=10)
    ends = transport.stream_ends
    try:
        for n in range(1, limits.MISSES + 1):
            assert ends.waits
            transport.request(request_message(n, "ping", None))
        assert not ends.waits  # no more grace spent on this server
        assert transport.request(request_message(99, "ping", None))["result"] == {"echo": 99}
    finally:
        transport.close()
        server.close()


def test_a_stream_that_keeps_talking_is_not_drained_past_its_deadline() -> None:
    server = ChunkedSseServer(ends=False, trickles=True)
    transport = HttpTransport(server.url, timeout=10)
    try:
        # Each read is answered at once: only the drain's deadline ends it.
        assert transport.request(request_message(1, "ping", None))["result"] == {"echo": 1}
        assert transport.stream_ends.misses == 1
    finally:
        transport.close()
        server.close()

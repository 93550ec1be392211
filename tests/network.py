"""Small network pieces the tests put in front of a server: a TLS terminator and a CONNECT
proxy. Threads on 127.0.0.1; each is a context manager that stops what it started.

    with TlsTerminator(upstream_port, server_context) as tls, ConnectProxy() as proxy:
        ...  # https://127.0.0.1:{tls.port}/mcp, HTTPS_PROXY=http://127.0.0.1:{proxy.port}
"""

from __future__ import annotations

import contextlib
import select
import socket
import ssl
import threading
from types import TracebackType
from typing import Self


def _pump(left: socket.socket, right: socket.socket) -> None:
    """Copy bytes both ways until either side closes."""
    sockets = [left, right]
    try:
        while True:
            readable, _, _ = select.select(sockets, [], [], 0.5)
            for source in readable:
                data = source.recv(65536)
                if not data:
                    return
                (right if source is left else left).sendall(data)
    except OSError:
        return
    finally:
        for end in sockets:
            with contextlib.suppress(OSError):
                end.close()


class _Listener:
    """Accepts connections on 127.0.0.1 in a thread and hands each to `serve`."""

    def __init__(self) -> None:
        self._socket = socket.socket()
        self._socket.bind(("127.0.0.1", 0))
        self._socket.listen(32)
        self._socket.settimeout(0.2)
        self.port: int = self._socket.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self.accepted = 0
        """Connections accepted so far (how many TCP connections the client opened)."""

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self._socket.close()

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                connection, _ = self._socket.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.accepted += 1
            threading.Thread(target=self.serve, args=(connection,), daemon=True).start()

    def serve(self, connection: socket.socket) -> None:
        raise NotImplementedError


class TlsTerminator(_Listener):
    """HTTPS on its own port, forwarding the plain bytes to an HTTP server on `upstream`."""

    def __init__(self, upstream: int, context: ssl.SSLContext) -> None:
        super().__init__()
        self._upstream = upstream
        self._context = context
        self.handshake_failures = 0

    def serve(self, connection: socket.socket) -> None:
        try:
            connection.settimeout(5)
            secure = self._context.wrap_socket(connection, server_side=True)
            secure.settimeout(None)
        except (OSError, ssl.SSLError):
            self.handshake_failures += 1  # the client refused our certificate
            connection.close()
            return
        upstream = socket.create_connection(("127.0.0.1", self._upstream))
        _pump(secure, upstream)


class ConnectProxy(_Listener):
    """An HTTP proxy that only tunnels (`CONNECT host:port`); it records every target."""

    def __init__(self) -> None:
        super().__init__()
        self.targets: list[str] = []

    def serve(self, connection: socket.socket) -> None:
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = connection.recv(4096)
            if not chunk:
                connection.close()
                return
            head += chunk
        request_line = head.split(b"\r\n", 1)[0].decode("latin-1")
        method, target, _ = request_line.split(" ", 2)
        if method != "CONNECT":
            connection.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            connection.close()
            return
        self.targets.append(target)
        host, _, port = target.rpartition(":")
        upstream = socket.create_connection((host.strip("[]"), int(port)))
        connection.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
        _pump(connection, upstream)


FAULT_KINDS = ("busy", "rate-limited", "gateway", "reset", "lost")
"""What FaultProxy can do to a request:

- busy: 503 with Retry-After: 0, the request not forwarded
- rate-limited: 429 with Retry-After: 0, not forwarded
- gateway: 502, not forwarded
- reset: the connection closed without an answer, not forwarded
- lost: forwarded (the server acts), then the connection closed: the answer is lost
"""


class FaultProxy:
    """A reverse proxy in front of an MCP endpoint that breaks a share of the POSTs of chosen
    JSON-RPC methods, deterministically (`seed`). GET streams are refused (405); the rest
    goes through. `faults` records (method, kind) for every fault it injected."""

    def __init__(
        self,
        upstream: str,
        *,
        rate: float,
        kinds: tuple[str, ...] = FAULT_KINDS,
        methods: frozenset[str] = frozenset({"tasks/get", "tasks/list", "tasks/cancel"}),
        seed: int = 1,
    ) -> None:
        import random
        from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

        import httpx

        self.upstream = upstream
        self.faults: list[tuple[str, str]] = []
        self._random = random.Random(seed)
        self._lock = threading.Lock()
        self._client = httpx.Client(timeout=60)
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                # Head and body go out in separate writes: without TCP_NODELAY, Nagle plus
                # the client's delayed ACK add ~40 ms to every answer.
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def log_message(self, format: str, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                self._reply(405, {"Allow": "POST, DELETE"}, b"")

            def do_DELETE(self) -> None:
                self._forward("DELETE", b"")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                method = proxy._method(body)
                kind = proxy._fault(method, rate, kinds, methods)
                if kind in ("busy", "rate-limited", "gateway"):
                    status = {"busy": 503, "rate-limited": 429, "gateway": 502}[kind]
                    self._reply(status, {"Retry-After": "0"}, b"")
                elif kind == "reset":
                    self.close_connection = True
                else:
                    self._forward("POST", body, lose=kind == "lost")

            def _forward(self, verb: str, body: bytes, *, lose: bool = False) -> None:
                skip = {"host", "content-length", "connection", "accept-encoding"}
                headers = {k: v for k, v in self.headers.items() if k.lower() not in skip}
                answer = proxy._client.request(verb, proxy.upstream, content=body, headers=headers)
                if lose:
                    self.close_connection = True
                    return
                passed = {
                    k: v
                    for k, v in answer.headers.items()
                    if k.lower()
                    not in ("content-length", "transfer-encoding", "connection", "content-encoding")
                }
                self._reply(answer.status_code, passed, answer.content)

            def _reply(self, status: int, headers: dict[str, str], content: bytes) -> None:
                self.send_response(status)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.send_header("Content-Length", str(len(content)))
                self.end_headers()
                self.wfile.write(content)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/mcp"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._client.close()

    @staticmethod
    def _method(body: bytes) -> str:
        import json

        try:
            message = json.loads(body)
        except ValueError:
            return ""
        method = message.get("method") if isinstance(message, dict) else None
        return method if isinstance(method, str) else ""

    def _fault(
        self, method: str, rate: float, kinds: tuple[str, ...], methods: frozenset[str]
    ) -> str | None:
        if method not in methods:
            return None
        with self._lock:
            if self._random.random() >= rate:
                return None
            kind = self._random.choice(kinds)
            self.faults.append((method, kind))
            return kind

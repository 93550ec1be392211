"""A hostile Streamable HTTP server of the tests' own, on 127.0.0.1: each POST is answered by
a function of the request's JSON-RPC id that writes the raw answer itself."""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Self

Answer = Callable[[BaseHTTPRequestHandler, object], None]
"""Write the whole HTTP answer to the request with this JSON-RPC id."""


@contextlib.contextmanager
def hostile_server(answer: Answer, get: Answer | None = None) -> Iterator[str]:
    """Serve `answer` to every POST, and `get` (with the path for id) to every GET (else
    405); yield the endpoint URL."""

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            message = json.loads(self.rfile.read(length) or b"{}")
            with contextlib.suppress(OSError):  # the client may hang up: that is the point
                answer(self, message.get("id"))

        def do_GET(self) -> None:
            if get is not None:
                with contextlib.suppress(OSError):
                    get(self, self.path)
                return
            self.send_response(405)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, format: str, *args: object) -> None:
            pass

    class Server(ThreadingHTTPServer):
        def handle_error(self, request: object, client_address: object) -> None:
            pass  # a client hanging up on a hostile answer is the expected end

    with Background(Server(("127.0.0.1", 0), Handler)) as running:
        yield f"http://127.0.0.1:{running.port}/mcp"


class Background:
    """An HTTP server (on 127.0.0.1) served by a thread from enter to exit: the one way the
    security tier runs its hostile peers."""

    def __init__(self, server: ThreadingHTTPServer) -> None:
        server.daemon_threads = True
        self._server = server
        self.port: int = server.server_address[1]
        self._thread = threading.Thread(target=server.serve_forever, daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

"""In-process transports of the reference server, for tests of what goes on the wire.

    with http_server(seed=(("working", 2),), fault_switches=...) as server:
        session = server.initialize()                 # a 2025-11-25 session id
        server.post(tasks_request("tasks/get", "working-001"), session)   # an httpx.Response
        server.raw_post(body, session)                # what a raw socket reads back

    with stdio_server(...) as server:
        server.write(message); server.read_line()     # newline-delimited JSON-RPC on pipes

Both run the real transport over a TaskStore on a ManualClock (time stands still) with a
FaultPlan whose sleep is `server.sleeps.append` unless a test gives its own: a slow answer
is held back without sleeping.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import socket
import threading
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any, BinaryIO

import httpx

from mcptask.reference_server.config import ServerConfig
from mcptask.reference_server.eras.router import Router
from mcptask.reference_server.faults import FaultPlan
from mcptask.reference_server.http.server import ReferenceHTTPServer
from mcptask.reference_server.server import populate
from mcptask.reference_server.stdio import StdioServer
from mcptask.reference_server.store import TaskStore
from tests.conformance.fixtures.workers import WorkerStore
from tests.reference_server.harness import DEADLINE, JsonObject
from tests.reference_server.manual_clock import ManualClock

ACCEPT = "application/json, text/event-stream"
_ids = iter(range(1, 1_000_000))


def request(method: str, params: JsonObject | None = None) -> JsonObject:
    """A JSON-RPC request with a fresh id."""
    message: JsonObject = {"jsonrpc": "2.0", "id": next(_ids), "method": method}
    if params is not None:
        message["params"] = params
    return message


def tasks_request(method: str, task_id: str) -> JsonObject:
    """A 2025-11-25 task request naming one task."""
    return request(method, {"taskId": task_id})


def sse_data(text: str) -> list[JsonObject]:
    """The JSON-RPC messages of the events of an SSE body (events without data skipped)."""
    messages = []
    for event in text.split("\n\n"):
        data = [line[5:].strip() for line in event.splitlines() if line.startswith("data:")]
        if data and data[0]:
            messages.append(json.loads("\n".join(data)))
    return messages


class HttpServer:
    """A running in-process HTTP reference server."""

    def __init__(self, url: str, store: TaskStore, plan: FaultPlan, sleeps: list[float]) -> None:
        self.url = url
        self.store = store
        self.plan = plan
        self.sleeps = sleeps
        self.client = httpx.Client(timeout=DEADLINE)

    def headers(self, session: str | None) -> dict[str, str]:
        headers = {"Accept": ACCEPT, "Content-Type": "application/json"}
        if session is not None:
            headers["Mcp-Session-Id"] = session
        return headers

    def post(self, message: JsonObject, session: str | None = None) -> httpx.Response:
        """POST one message on a connection of its own; the whole answer is read."""
        return self.client.post(
            self.url, content=json.dumps(message), headers=self.headers(session)
        )

    def initialize(self) -> str:
        """Open a 2025-11-25 session; its id."""
        answer = self.post(
            request(
                "initialize",
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tasks": {}},
                    "clientInfo": {"name": "test", "version": "0"},
                },
            )
        )
        assert answer.status_code == 200, answer.text
        return answer.headers["Mcp-Session-Id"]

    def raw_post(self, message: JsonObject, session: str | None = None) -> bytes | OSError:
        """POST over a raw socket: every byte the server sends until it closes, or the
        error the socket read ended with (a reset)."""
        body = json.dumps(message).encode()
        host_port = self.url.split("//", 1)[1].split("/", 1)[0]
        host, _, port = host_port.rpartition(":")
        head = ["POST /mcp HTTP/1.1", f"Host: {host_port}", f"Content-Length: {len(body)}"]
        head += [f"{name}: {value}" for name, value in self.headers(session).items()]
        received = b""
        with socket.create_connection((host, int(port)), timeout=DEADLINE) as connection:
            connection.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + body)
            try:
                while chunk := connection.recv(65536):
                    received += chunk
            except OSError as exc:
                return exc
        return received

    def status(self, task_id: str) -> str:
        """The task's status in the store."""
        return self.store.get(task_id, None).status

    def close(self) -> None:
        self.client.close()


def _config(settings: dict[str, Any]) -> ServerConfig:
    return replace(ServerConfig(port=0, notify=False), **settings)


def _store(config: ServerConfig) -> TaskStore:
    store = WorkerStore(ManualClock())
    populate(store, config)
    return store


@contextlib.contextmanager
def http_server(
    sleep: Callable[[float], object] | None = None, **settings: Any
) -> Iterator[HttpServer]:
    """An HTTP reference server for ServerConfig(port=0) with `settings` replaced."""
    config = _config(settings)
    store = _store(config)
    sleeps: list[float] = []
    plan = FaultPlan(config.fault_switches, sleep=sleep or sleeps.append)
    server = ReferenceHTTPServer(config, Router(config, store), store, plan)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    running = HttpServer(server.url, store, plan, sleeps)
    try:
        yield running
    finally:
        running.close()
        server.shutdown()
        server.close()
        thread.join(DEADLINE)
        store.close()


class StdioPipes:
    """A running in-process stdio reference server, talked to through pipes."""

    def __init__(self, stdin: BinaryIO, stdout: BinaryIO, store: TaskStore) -> None:
        self._stdin = stdin
        self._stdout = stdout
        self.store = store
        self._buffer = b""

    def write(self, message: JsonObject) -> None:
        """One message as a line on the server's stdin."""
        self._stdin.write(json.dumps(message).encode() + b"\n")
        self._stdin.flush()

    def read_line(self, timeout: float = DEADLINE) -> bytes | None:
        """The next line the server writes (without its newline); None when none comes
        within `timeout` seconds or the server's stdout ended."""
        fd = self._stdout.fileno()
        while b"\n" not in self._buffer:
            readable, _, _ = select.select([fd], [], [], timeout)
            if not readable:
                return None
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return None
            self._buffer += chunk
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line

    def read(self) -> JsonObject:
        """The next message the server writes (it must write one)."""
        line = self.read_line()
        assert line is not None, "the server wrote nothing"
        message: JsonObject = json.loads(line)
        return message

    def status(self, task_id: str) -> str:
        """The task's status in the store."""
        return self.store.get(task_id, None).status


@contextlib.contextmanager
def stdio_server(
    sleep: Callable[[float], object] | None = None, **settings: Any
) -> Iterator[StdioPipes]:
    """A stdio reference server (its serve loop in a thread) for ServerConfig(stdio=True)
    with `settings` replaced; stdin is closed (EOF) on exit."""
    config = _config({"stdio": True, **settings})
    store = _store(config)
    plan = FaultPlan(config.fault_switches, sleep=sleep or (lambda seconds: None))
    in_read, in_write = os.pipe()
    out_read, out_write = os.pipe()
    server_stdin, client_stdin = os.fdopen(in_read, "rb"), os.fdopen(in_write, "wb")
    server_stdout, client_stdout = os.fdopen(out_write, "wb"), os.fdopen(out_read, "rb")
    server = StdioServer(config, Router(config, store), store, server_stdin, server_stdout, plan)
    thread = threading.Thread(target=server.serve, daemon=True)
    thread.start()
    try:
        yield StdioPipes(client_stdin, client_stdout, store)
    finally:
        client_stdin.close()
        thread.join(DEADLINE)
        for end in (server_stdin, server_stdout, client_stdout):
            end.close()
        store.close()

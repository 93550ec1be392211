"""The reference server in the test process, on a real socket, its tasks on a ManualClock:
for tests that run the real mcptask process against it and must see every state a scripted
task goes through, however slow the machine.

    with clocked_http_server("--tasks-file", path) as server:    # or clocked_stdio_server
        result = run_mcptask_during(
            lambda watch: server.play(1.5, 1.5, watch=watch, reported=True),
            "watch", *server.target, "-o", "jsonl",
        )

The options are those of `mcptask reference-server`. Time on the server passes only in
`play`, one gap at a time, and each gap only once mcptask has had every active task in its
current state: shown `shown` times by the answers to its tasks/get and tasks/list requests
(rounds of polls), and, with `reported`, written among its `-o jsonl` changes. So every
state is seen by construction. `wait_for_request` waits until a request arrives (to signal
mcptask inside it). mcptask itself runs on real time. The stdio server is reached
through tests/stdio_relay.py, a process that relays the pipes mcptask gives it to a socket
of this process.
"""

from __future__ import annotations

import contextlib
import json
import shlex
import socket
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mcptask.reference_server.cli_options import parse_config
from mcptask.reference_server.config import ServerConfig
from mcptask.reference_server.eras.router import Router
from mcptask.reference_server.http.server import ReferenceHTTPServer
from mcptask.reference_server.records import TaskView
from mcptask.reference_server.scripting import TERMINAL_STATUSES
from mcptask.reference_server.server import populate
from mcptask.reference_server.stdio import StdioServer
from mcptask.reference_server.store import TaskStore
from mcptask.reference_server.wire import JsonObject, Reply, iso_utc
from tests.cli_process import Running
from tests.reference_server.manual_clock import ManualClock

# Real seconds to wait for mcptask; generous, only reached when something is broken.
DEADLINE = 60.0
RELAY = Path(__file__).resolve().parent / "stdio_relay.py"
POLLS = frozenset({"tasks/get", "tasks/list"})
# A task's state as a client is shown it: id, status, message and lastUpdatedAt (the manual
# clock stamps each change with its own time, so a state shown before a gap never counts
# for the one after it).
State = tuple[object, ...]


def _state(view: TaskView) -> State:
    return view.task_id, view.status, view.status_message, iso_utc(view.last_updated_at)


def last_reported(jsonl: str) -> dict[str, tuple[str, str | None]]:
    """Each task's last status and message among the complete lines of `watch -o jsonl`."""
    lines = jsonl.split("\n")[:-1]  # the last piece is not a whole line yet
    changes = [json.loads(line) for line in lines if line.startswith("{")]
    return {change["taskId"]: (change["status"], change["statusMessage"]) for change in changes}


class ShownStates:
    """Counts the requests that arrive (by method, before they are answered) and the task
    states that the answers to tasks/get and tasks/list showed clients, in either era (other
    reads, such as a subscription's, show nothing)."""

    def __init__(self, router: Router) -> None:
        self._shown: Counter[State] = Counter()
        self._requested: Counter[object] = Counter()
        self.changed = threading.Condition()
        """Notified at every request and every answer counted."""
        for dispatcher in (router.legacy, router.modern):
            if dispatcher is not None:
                dispatcher.handle = self._counting(dispatcher.handle)  # type: ignore[method-assign]

    def _counting(self, handle: Callable[..., Reply]) -> Callable[..., Reply]:
        def counted(message: object, *args: Any) -> Reply:
            method = message.get("method") if isinstance(message, dict) else None
            with self.changed:
                self._requested[method] += 1
                self.changed.notify_all()
            reply = handle(message, *args)
            if method in POLLS:
                result = (reply.response or {}).get("result")
                if isinstance(result, dict):
                    self._count(result.get("tasks", [result]))
            return reply

        return counted

    def _count(self, tasks: list[JsonObject]) -> None:
        states = [
            (task["taskId"], task["status"], task.get("statusMessage"), task["lastUpdatedAt"])
            for task in tasks
        ]
        with self.changed:
            self._shown.update(states)
            self.changed.notify_all()

    def requested(self, method: str) -> int:
        """How many requests of `method` arrived."""
        with self.changed:
            return self._requested[method]

    def times(self, view: TaskView) -> int:
        """How often the task's state in `view` was shown."""
        with self.changed:
            return self._shown[_state(view)]


@dataclass(frozen=True)
class ClockedServer:
    """A running clocked reference server: its clock and store, and how mcptask reaches it."""

    clock: ManualClock
    store: TaskStore
    shown: ShownStates
    target: tuple[str, str]
    """mcptask's options for it: ("--url", URL) or ("--server", COMMAND)."""

    @property
    def url(self) -> str:
        option, value = self.target
        assert option == "--url", "a stdio server has no URL"
        return value

    def play(self, *gaps: float, watch: Running, shown: int = 1, reported: bool = False) -> None:
        """Let time pass, gap after gap, each once `watch` had every active task in its
        current state: shown `shown` times, and with `reported` among its -o jsonl changes."""
        for gap in gaps:
            self._wait(lambda: self._behind(watch, shown, reported), watch.process)
            self.clock.advance(gap)

    def wait_for_request(self, method: str, process: subprocess.Popen[Any]) -> None:
        """Wait until a request of `method` has arrived (it may not be answered yet)."""
        self._wait(lambda: [] if self.shown.requested(method) else [method], process)

    def _wait(self, missing: Callable[[], list[str]], process: subprocess.Popen[Any]) -> None:
        """Wait (in real time) until nothing is `missing`; fail when `process`, the client,
        ends first, or after DEADLINE."""
        deadline = time.monotonic() + DEADLINE
        while lacking := missing():
            if process.poll() is not None:
                pytest.fail(f"mcptask ended while waiting for {lacking}")
            if time.monotonic() > deadline:
                pytest.fail(f"mcptask did not get as far as {lacking}")
            with self.shown.changed:
                # Woken by every request and answer; the timeout lets a report that follows
                # an answer be read.
                self.shown.changed.wait(0.1)

    def _behind(self, watch: Running, shown: int, reported: bool) -> list[str]:
        """The active (shared) tasks whose current state `watch` has not had yet."""
        views, _ = self.store.page(None, None, sys.maxsize)
        reports = last_reported(watch.stdout()) if reported else {}
        return [
            view.task_id
            for view in views
            if view.status not in TERMINAL_STATUSES
            and (
                self.shown.times(view) < shown
                or (reported and reports.get(view.task_id) != (view.status, view.status_message))
            )
        ]


def _server(config: ServerConfig) -> tuple[ManualClock, TaskStore, Router, ShownStates]:
    """The parts of a server of `config`: its clock, its store (populated), its router."""
    clock = ManualClock()
    store = TaskStore(clock)
    populate(store, config)
    router = Router(config, store)
    return clock, store, router, ShownStates(router)


@contextlib.contextmanager
def clocked_http_server(*args: str) -> Iterator[ClockedServer]:
    """`mcptask reference-server ARGS` over HTTP on 127.0.0.1 (a free port), in process."""
    config = parse_config([*args, "--http", "127.0.0.1:0"])
    clock, store, router, shown = _server(config)
    server = ReferenceHTTPServer(config, router, store)
    thread = threading.Thread(
        target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
    )
    thread.start()
    try:
        yield ClockedServer(clock, store, shown, ("--url", server.url))
    finally:
        server.shutdown()
        server.close()
        thread.join(DEADLINE)
        store.close()


@contextlib.contextmanager
def clocked_stdio_server(*args: str) -> Iterator[ClockedServer]:
    """`mcptask reference-server --stdio ARGS`, in process: each process that runs the
    target's command (the relay) gets a server of its own, all over one store."""
    config = parse_config([*args, "--stdio"])
    clock, store, router, shown = _server(config)
    listener = socket.create_server(("127.0.0.1", 0))
    address = listener.getsockname()
    stopping = threading.Event()
    served: list[threading.Thread] = []

    def serve(connection: socket.socket) -> None:
        with connection, connection.makefile("rb") as stdin, connection.makefile("wb") as stdout:
            StdioServer(config, router, store, stdin, stdout).serve()

    def accept() -> None:
        while True:
            connection, _ = listener.accept()
            if stopping.is_set():
                connection.close()
                return
            thread = threading.Thread(target=serve, args=(connection,), daemon=True)
            thread.start()
            served.append(thread)

    acceptor = threading.Thread(target=accept, daemon=True)
    acceptor.start()
    command = shlex.join([sys.executable, str(RELAY), str(address[1])])
    try:
        yield ClockedServer(clock, store, shown, ("--server", command))
    finally:
        stopping.set()
        socket.create_connection(address).close()  # wakes the accept, which then returns
        acceptor.join(DEADLINE)
        listener.close()
        for thread in served:  # each ends at its relay's EOF
            thread.join(DEADLINE)
        store.close()

"""What a bulk cancel's overlapped confirmations share with the main thread holds up when
both use it at once: the client's session renewal and the record of known tasks."""

from __future__ import annotations

import itertools
import sys
import threading
from pathlib import Path

from mcptask.client.session import McpClient
from mcptask.protocol.jsonrpc import JsonObject
from mcptask.protocol.tasks import Task
from mcptask.store.database import FILE_NAME
from mcptask.store.identity import ServerIdentity
from mcptask.store.known_tasks import KnownTasks
from tests.unit.fake_server import FakeServer
from tests.unit.store.support import recorded_tasks


class GatedFake(FakeServer):
    """Holds each tasks/get in the first session until both threads' are on their way;
    forgets its session when asked to, as the HTTP transport does."""

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.both_sent = threading.Barrier(2, timeout=10)

    def request(
        self,
        message: JsonObject,
        *,
        timeout: float | None = None,
        headers: dict[str, str] | None = None,
        session: str | None = None,
    ) -> JsonObject:
        sent_in = session if session is not None else self.session_id
        if message["method"] == "tasks/get" and sent_in == "session-1":
            self.both_sent.wait()  # both were sent in the same ended session
        return super().request(message, timeout=timeout, headers=headers, session=sent_in)

    def reset_session(self) -> None:
        self.session_id = None


def test_two_threads_that_meet_one_ended_session_renew_it_once() -> None:
    server = GatedFake(sessions=True)
    server.add("a", "working")
    server.add("b", "working")
    client = McpClient(server)
    client.connect()
    assert server.session_id == "session-1"
    server.ended.add("session-1")
    seen: dict[str, Task] = {}

    def get(task_id: str) -> None:
        seen[task_id] = client.get_task(task_id)

    threads = [threading.Thread(target=get, args=(task_id,)) for task_id in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(seen) == ["a", "b"]
    assert server.calls.count("initialize") == 2  # the handshake, and one renewal
    assert server.session_id == "session-2"


def test_the_record_takes_sightings_from_two_threads(tmp_path: Path) -> None:
    failures: list[str] = []
    ticks = itertools.count(step=2)  # every sighting finds a flush due: many of them race
    record = KnownTasks(
        tmp_path / FILE_NAME,
        ServerIdentity.for_url("https://server.test/mcp"),
        on_failure=failures.append,
        clock=lambda: float(next(ticks)),
    )
    start = threading.Barrier(2)

    def sight(prefix: str) -> None:
        start.wait()
        for n in range(600):
            task = Task(f"{prefix}-{n}", "working" if n % 2 else "cancelled")
            record.seen(task, via="tasks/get", session_id=None, tool=None)
            if n % 50 == 0:
                record.gone(f"{prefix}-{n}")

    threads = [threading.Thread(target=sight, args=(prefix,)) for prefix in "xy"]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # the threads take turns often: races show up
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(interval)
    record.flush()
    assert failures == []
    recorded = {task.task_id for task in recorded_tasks(record)}
    expected = {f"{p}-{n}" for p in "xy" for n in range(600) if n % 50}
    assert recorded == expected

"""A watch that polls by `tasks/list` pages reports exactly what one polling by `tasks/get`
reports, for the same server behaviour, and asks `tasks/get` only where the pages cannot
tell: a task missing from them, a task they show finished.

The server is the in-process fake, scripted step by step: each wait between two rounds
moves a fake clock and applies the next step, so both ways of polling see the same server
at the same points. The get way is the same watch with page polling switched off (and, for
given ids, a server that does not list at all).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import pytest

from mcptask.client.session import McpClient
from mcptask.errors import RpcError
from mcptask.operations import watch as watch_module
from mcptask.operations.polling import PagePolling
from mcptask.operations.watch import Change, Watch, WatchOptions, WatchReport
from mcptask.protocol.jsonrpc import JsonObject
from tests.unit.fake_server import FakeServer

Step = Callable[[FakeServer], None]


class HidingServer(FakeServer):
    """A fake whose list leaves out some tasks that tasks/get still finds (another session's,
    say): the pages cannot tell everything."""

    hidden: set[str]
    detail = False
    """tasks/get adds a field the list does not carry (as a server may): a watch must end on
    the task as tasks/get gives it."""

    def _handle(self, method: str, params: JsonObject, session: str | None) -> JsonObject:
        result = super()._handle(method, params, session)
        if method == "tasks/get" and self.detail:
            result = dict(result, detail="from tasks/get")
        if method == "tasks/list":
            result = dict(
                result, tasks=[t for t in result["tasks"] if t["taskId"] not in self.hidden]
            )
        return result


@dataclass
class Clock:
    now: float = 1000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Outcome:
    changes: list[tuple[str, str | None, str, str | None]] = field(default_factory=list)
    report: WatchReport | None = None
    calls: list[str] = field(default_factory=list)

    @property
    def final(self) -> list[tuple[str, JsonObject | None, bool]]:
        assert self.report is not None
        return [
            (watched.task_id, watched.task.to_wire() if watched.task else None, watched.gone)
            for watched in self.report.tasks
        ]

    @property
    def final_by_get(self) -> list[tuple[str, JsonObject | None, bool]]:
        """`final`, without what a gone task was last seen as: tasks/get cannot show a gone
        task, so that is the last page's (or the last get's) view of it."""
        return [(task_id, None if gone else task, gone) for task_id, task, gone in self.final]


def build(*, lists: bool, hidden: set[str], detail: bool) -> FakeServer:
    server = HidingServer(page_size=3)
    server.hidden = set(hidden)
    server.detail = detail
    if not lists:
        server.capabilities = {"tasks": {"cancel": {}}}
    for number in range(1, 8):
        server.add(f"t{number}", "working", statusMessage=f"step {number}")
    server.add("done", "completed")
    return server


@dataclass
class FakeTime:
    """Stands for the `time` module in mcptask.operations.watch: its clock is ours."""

    monotonic: Clock


@contextmanager
def scripted(clock: Clock) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(watch_module, "time", FakeTime(clock))
        yield


def run_watch(
    steps: list[Step],
    *,
    pages: bool,
    lists: bool = True,
    ids: list[str] | None = None,
    hidden: set[str] = frozenset(),  # type: ignore[assignment]
    timeout: float | None = None,
    statuses: tuple[str, ...] | None = None,
    list_fails: bool = False,
    detail: bool = False,
) -> Outcome:
    server = build(lists=lists, hidden=set(hidden), detail=detail)
    if list_fails:
        server.before[("tasks/list", "None")] = [RpcError(-32603, "list broke")] * 100
    client = McpClient(server)
    client.connect()
    clock = Clock()
    outcome = Outcome()
    remaining = list(steps)

    class ScriptedWatch(Watch):
        def _wait(self, seconds: float) -> None:
            clock.now += seconds
            if remaining:
                remaining.pop(0)(server)

    def heard(change: Change) -> None:
        outcome.changes.append((change.task_id, change.previous, change.status, change.message))

    options = WatchOptions(
        task_ids=list(ids or []), statuses=statuses, interval=1.0, timeout=timeout
    )
    with scripted(clock), pytest.MonkeyPatch.context() as patch:
        if not pages:
            patch.setattr(PagePolling, "worthwhile", lambda self, pending: False)
        server.calls.clear()
        outcome.report = ScriptedWatch(
            client, options, stop=threading.Event(), on_change=heard
        ).run()
    outcome.calls = [call for call in server.calls if call.startswith("tasks/")]
    return outcome


def status(task_id: str, new: str, message: str | None = None) -> Step:
    def step(server: FakeServer) -> None:
        server.tasks[task_id]["status"] = new
        if message is not None:
            server.tasks[task_id]["statusMessage"] = message

    return step


def vanish(task_id: str) -> Step:
    return lambda server: server.tasks.pop(task_id, None)  # type: ignore[return-value]


def appear(task_id: str, new: str = "working") -> Step:
    return lambda server: server.add(task_id, new)


def together(*steps: Step) -> Step:
    def step(server: FakeServer) -> None:
        for each in steps:
            each(server)

    return step


def nothing(server: FakeServer) -> None:
    pass


STORY: list[Step] = [
    status("t1", "input_required", "needs a token"),
    together(status("t2", "completed", "done"), appear("new1")),
    vanish("t3"),
    status("t5", "working", "step 5 of 9"),
    together(status("t1", "working", "resumed"), appear("late", "completed")),
    nothing,
    together(status("t4", "failed", "boom"), appear("new2")),
    nothing,
    status("new1", "completed"),
    together(status("t6", "cancelled"), vanish("t7")),
    nothing,
    together(status("t1", "completed"), status("t5", "completed"), status("new2", "failed")),
]


def hide(task_id: str) -> Step:
    def step(server: FakeServer) -> None:
        assert isinstance(server, HidingServer)
        server.hidden.add(task_id)

    return step


# The same story, with t5 leaving the list (but not the server) early on.
HIDING = [together(STORY[0], hide("t5")), *STORY[1:]]


@pytest.mark.parametrize("story", [STORY, HIDING], ids=["listed", "t5 leaves the list"])
def test_listing_mode_pages_report_what_gets_report(story: list[Step]) -> None:
    by_pages = run_watch(story, pages=True, detail=True)
    by_gets = run_watch(story, pages=False, detail=True)
    assert by_pages.changes == by_gets.changes
    assert by_pages.final_by_get == by_gets.final_by_get
    assert ("t3", "working", "gone", None) in by_pages.changes
    assert ("t5", "working", "completed", "step 5 of 9") in by_pages.changes  # listed or not
    assert any(change[0] == "new2" for change in by_pages.changes)  # adopted on a re-list
    assert not any(change[0] == "late" for change in by_pages.changes)
    assert by_pages.calls.count("tasks/get") < by_gets.calls.count("tasks/get") / 2


@pytest.mark.parametrize("hidden", [set(), {"t2", "t5"}])
def test_given_ids_pages_report_what_a_server_without_a_list_reports(hidden: set[str]) -> None:
    ids = ["t7", "t3", "t5", "t1", "t6", "t2", "t4"]  # not the server's order
    by_pages = run_watch(HIDING, pages=True, ids=ids, hidden=hidden, detail=True)
    no_list = run_watch(HIDING, pages=True, lists=False, ids=ids, hidden=hidden, detail=True)
    assert "tasks/list" not in no_list.calls
    assert by_pages.changes == no_list.changes
    assert by_pages.final_by_get == no_list.final_by_get
    assert ("t7", "working", "gone", None) in by_pages.changes
    assert by_pages.report is not None
    assert all(watched.settled for watched in by_pages.report.tasks)


def test_pages_ask_tasks_get_only_for_what_they_cannot_tell() -> None:
    ids = ["t1", "t2", "t3", "t4", "t5", "t6", "t7"]
    steps = [nothing, vanish("t3"), nothing, status("t4", "failed"), nothing]
    outcome = run_watch(steps, pages=True, ids=ids, hidden={"t6"}, timeout=5.5)
    gets = [call for call in outcome.calls if call == "tasks/get"]
    rounds = 7  # at 0, 1, ... 5 s, and at the deadline (5.5 s)
    # t6 (never on the pages) every round, t3 once gone, t4 once finished; nothing else.
    assert len(gets) == rounds + 1 + 1
    assert outcome.report is not None
    assert outcome.report.timed_out


def test_a_failing_list_falls_back_to_gets_with_the_same_report() -> None:
    ids = ["t1", "t2", "t3", "t4", "t5", "t6", "t7"]
    broken = run_watch(STORY, pages=True, ids=ids, list_fails=True)
    no_list = run_watch(STORY, pages=True, lists=False, ids=ids)
    assert broken.changes == no_list.changes
    assert broken.final == no_list.final
    assert broken.calls.count("tasks/list") == 1  # tried once, then tasks/get only


@pytest.mark.parametrize("timeout", [2.5, 7.5])
def test_a_wait_timeout_ends_both_alike(timeout: float) -> None:
    by_pages = run_watch(STORY, pages=True, timeout=timeout, statuses=("working",))
    by_gets = run_watch(STORY, pages=False, timeout=timeout, statuses=("working",))
    assert by_pages.changes == by_gets.changes
    assert by_pages.final == by_gets.final
    assert by_pages.report is not None
    assert by_gets.report is not None
    assert by_pages.report.timed_out
    assert by_gets.report.timed_out


def test_few_watched_tasks_on_a_long_list_are_asked_with_tasks_get() -> None:
    """Three watched tasks among a hundred listed: the first round tries the pages and stops
    once they cost as much as the gets; from then on, tasks/get alone."""
    server = FakeServer(page_size=3)
    for number in range(100):
        server.add(f"other{number:03d}", "working")
    for task_id in ("a", "b", "c"):
        server.add(task_id, "working")
    client = McpClient(server)
    client.connect()
    clock = Clock()
    rounds = 0

    class CountingWatch(Watch):
        def _wait(self, seconds: float) -> None:
            nonlocal rounds
            clock.now += seconds
            rounds += 1
            if rounds == 3:
                for task_id in ("a", "b", "c"):
                    server.tasks[task_id]["status"] = "completed"

    with scripted(clock):
        server.calls.clear()
        report = CountingWatch(
            client, WatchOptions(task_ids=["a", "b", "c"], interval=1.0), stop=threading.Event()
        ).run()
    assert report.all_completed
    calls = [call for call in server.calls if call.startswith("tasks/")]
    assert calls.count("tasks/list") == 3  # the first round's try, cut at three pages
    assert calls.count("tasks/get") == 3 + 3 * 3  # the try found none; then gets each round

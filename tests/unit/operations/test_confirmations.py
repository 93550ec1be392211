"""Confirming cancels beside the next ones (operations/confirmations.py) changes nothing a
user sees: the same report, the same results heard in the same order, the same truth about
each task, when stopped, when answers are lost, when the run ends on an error."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from hypothesis import given
from hypothesis import strategies as st

from mcptask.client.exchange import Exchange, RetryPolicy
from mcptask.client.session import McpClient
from mcptask.errors import AnswerLost, ServerExited
from mcptask.operations.cancel import CancelRun
from mcptask.operations.confirmations import OUTSTANDING, OVERLAP_FROM_SECONDS, worth_overlapping
from mcptask.operations.outcomes import CancelReport, CancelResult, Outcome, Target
from mcptask.protocol.jsonrpc import JsonObject
from tests.unit.fake_server import FakeServer, raise_error

STATUSES = ("working", "input_required", "completed", "failed", "cancelled")


class ConcurrentFake(FakeServer):
    """The fake server, offered for overlapping, with hooks around each request."""

    concurrent = True

    def __init__(self, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.lock = threading.Lock()
        self.hook: dict[tuple[str, str], threading.Event] = {}
        """(method, taskId) -> an event the request waits for before it is answered."""
        self.on_request: list[tuple[str, str]] = []
        """(method, taskId) of each request as it arrives."""
        self.answered: list[tuple[str, str]] = []
        """(method, taskId) of each request as it is answered."""
        self.on_arrival: dict[tuple[str, str], threading.Event] = {}
        """(method, taskId) -> set as that request arrives."""

    def request(
        self,
        message: JsonObject,
        *,
        timeout: float | None = None,
        headers: dict[str, str] | None = None,
        session: str | None = None,
    ) -> JsonObject:
        key = (str(message["method"]), str((message.get("params") or {}).get("taskId")))
        with self.lock:
            self.on_request.append(key)
        if key in self.on_arrival:
            self.on_arrival[key].set()
        if key in self.hook:
            assert self.hook[key].wait(10), f"{key} was never released"
        with self.lock:
            try:
                return super().request(message, timeout=timeout, headers=headers, session=session)
            finally:
                self.answered.append(key)


def no_sleep(seconds: float) -> None:
    pass


def client_for(server: FakeServer) -> McpClient:
    client = McpClient(server, retry=RetryPolicy(sleep=no_sleep))
    client.connect()
    return client


@dataclass
class Heard:
    results: list[CancelResult] = field(default_factory=list)

    def __call__(self, result: CancelResult) -> None:
        self.results.append(result)


def cancel(
    server: FakeServer, targets: list[Target], *, overlap: bool, **options: object
) -> tuple[CancelReport, list[CancelResult]]:
    heard = Heard()
    run = CancelRun(
        client_for(server),
        sleep=no_sleep,
        overlap=overlap,
        on_result=heard,
        **options,  # type: ignore[arg-type]
    )
    return run.run(targets), heard.results


# -- the same report, whatever the server does --------------------------------------------------


@dataclass(frozen=True)
class Planned:
    task_id: str
    named: bool
    status: str | None
    """None: not on the server."""
    behaviour: int
    settles_after: int


def build(modern: bool, plan: list[Planned]) -> ConcurrentFake:
    """A fake server doing what the plan says (two builds of one plan behave alike)."""
    server = ConcurrentFake(modern=modern)
    for task in plan:
        if task.status is None:
            continue
        task_id = task.task_id
        server.add(task_id, task.status, statusMessage=f"says {task_id}")
        if task.behaviour == 0:  # a cooperative cancel: settles after a few gets
            server.gets_until_cancelled[task_id] = task.settles_after
            server.on_cancel[task_id] = lambda current: (
                {"resultType": "complete"} if modern else dict(current)
            )
        elif task.behaviour == 1:  # "succeeds" on a finished task, which stays completed
            server.on_cancel[task_id] = lambda current: dict(current, status="completed")
        elif task.behaviour == 2:
            server.on_cancel[task_id] = raise_error(-32603, "internal error")
        elif task.behaviour == 3:
            server.before[("tasks/get", task_id)] = [AnswerLost("reset")]
        elif task.behaviour == 4:
            server.after[("tasks/get", task_id)] = [AnswerLost("lost after acting")]
        elif task.behaviour == 5:
            server.after[("tasks/cancel", task_id)] = [AnswerLost("cancel answer lost")]
    return server


plans = st.lists(
    st.builds(
        Planned,
        task_id=st.just(""),
        named=st.booleans(),
        status=st.one_of(st.none(), st.sampled_from(STATUSES)),
        behaviour=st.integers(0, 9),
        settles_after=st.integers(1, 3),
    ),
    min_size=2,
    max_size=14,
).map(
    lambda tasks: [
        Planned(f"t{index:02d}", t.named, t.status, t.behaviour, t.settles_after)
        for index, t in enumerate(tasks)
    ]
)


@given(st.booleans(), plans)
def test_overlapped_and_sequential_runs_report_and_stream_the_same(
    modern: bool, plan: list[Planned]
) -> None:
    targets = [Target(task.task_id, task.named) for task in plan]
    server, twin = build(modern, plan), build(modern, plan)
    sequential, heard_sequential = cancel(server, targets, overlap=False)
    overlapped, heard_overlapped = cancel(twin, targets, overlap=True)
    assert overlapped.results == sequential.results
    assert heard_overlapped == heard_sequential
    assert (overlapped.interrupted, overlapped.fatal) == (False, None)
    assert twin.tasks == server.tasks
    assert sorted(twin.calls) == sorted(server.calls)  # the same requests, in another order


# -- the overlap itself, and the order results are heard in -------------------------------------


def test_later_results_wait_for_an_earlier_confirmation() -> None:
    server = ConcurrentFake()
    for task_id in ("a", "b", "c"):
        server.add(task_id, "working")
    server.add("done", "completed")
    # a's confirmation is answered only once c's cancel has arrived: the cancels went on.
    server.hook[("tasks/get", "a")] = release = threading.Event()
    server.on_arrival[("tasks/cancel", "c")] = release
    targets = [Target(task_id, True) for task_id in ("a", "done", "b", "c")]
    report, heard = cancel(server, targets, overlap=True)
    # done's and b's results were final before a's: they waited for it.
    assert server.answered.index(("tasks/cancel", "b")) < server.answered.index(("tasks/get", "a"))
    assert [r.task_id for r in heard] == ["a", "done", "b", "c"]
    assert [r.outcome for r in report.results] == [
        Outcome.CANCELLED,
        Outcome.ALREADY_FINISHED,
        Outcome.CANCELLED,
        Outcome.CANCELLED,
    ]


def test_the_cancels_never_run_more_than_a_few_confirmations_ahead() -> None:
    server = ConcurrentFake()
    ids = [f"t{n:02d}" for n in range(OUTSTANDING + 3)]
    for task_id in ids:
        server.add(task_id, "working")
    # The first confirmation is held until one cancel too many arrives, or a second passes:
    # within the bound, the cancel after the last allowed one waits for it.
    release = threading.Event()
    server.hook[("tasks/get", ids[0])] = release
    server.on_arrival[("tasks/cancel", ids[OUTSTANDING])] = release
    timer = threading.Timer(1.0, release.set)
    timer.start()
    try:
        report, _ = cancel(server, [Target(task_id, True) for task_id in ids], overlap=True)
    finally:
        timer.cancel()
    first_answered = server.answered.index(("tasks/get", ids[0]))
    assert server.on_request.index(("tasks/cancel", ids[OUTSTANDING - 1])) < first_answered
    assert first_answered < server.answered.index(("tasks/cancel", ids[OUTSTANDING]))
    assert {r.outcome for r in report.results} == {Outcome.CANCELLED}


# -- interrupted, or ended by an error ----------------------------------------------------------


def test_a_stop_sends_nothing_after_the_cancel_in_flight() -> None:
    server = ConcurrentFake()
    ids = [f"t{n}" for n in range(6)]
    for task_id in ids:
        server.add(task_id, "working")
    stop = threading.Event()
    server.on_arrival[("tasks/cancel", "t3")] = stop  # Ctrl-C while t3's cancel is out
    report, heard = cancel(
        server, [Target(task_id, True) for task_id in ids], overlap=True, stop=stop.is_set
    )
    after = server.on_request[server.on_request.index(("tasks/cancel", "t3")) + 1 :]
    assert ("tasks/get", "t3") not in after
    assert all(method != "tasks/cancel" for method, _ in after)
    # Only confirmations already on their way when the stop came (none for t3).
    assert set(after) <= {("tasks/get", "t0"), ("tasks/get", "t1"), ("tasks/get", "t2")}
    assert [r.task_id for r in heard] == ids  # each once, in order
    assert report.interrupted
    assert [r.outcome for r in report.results] == [Outcome.CANCELLED] * 4 + [Outcome.SKIPPED] * 2
    assert [server.tasks[task_id]["status"] for task_id in ids] == ["cancelled"] * 4 + [
        "working"
    ] * 2


def test_a_stop_in_the_modern_era_reports_an_unconfirmed_cancel_as_acknowledged() -> None:
    server = ConcurrentFake(modern=True)
    for task_id in ("a", "b", "c"):
        server.add(task_id, "working")
        server.gets_until_cancelled[task_id] = 1
    stop = threading.Event()
    server.on_arrival[("tasks/cancel", "b")] = stop
    report, _ = cancel(
        server, [Target(task_id, True) for task_id in "abc"], overlap=True, stop=stop.is_set
    )
    by_id = {r.task_id: r for r in report.results}
    assert by_id["c"].outcome is Outcome.SKIPPED
    assert ("tasks/get", "b") not in server.on_request  # never sent: the stop came first
    assert (by_id["b"].outcome, by_id["b"].message) == (Outcome.PENDING, "cancel acknowledged")


def test_a_confirmation_that_ends_the_run_leaves_every_task_told_truly() -> None:
    server = ConcurrentFake()
    ids = [f"t{n}" for n in range(8)]
    for task_id in ids:
        server.add(task_id, "working")
    server.before[("tasks/get", "t2")] = [ServerExited("the server process exited")]
    report, heard = cancel(server, [Target(task_id, True) for task_id in ids], overlap=True)
    assert isinstance(report.fatal, ServerExited)
    assert sorted(r.task_id for r in heard) == ids
    for result in report.results:
        on_server = server.tasks[result.task_id]["status"]
        if result.outcome is Outcome.SKIPPED:
            assert on_server == "working"
            assert result.message == "not attempted: the run stopped on an error"
        else:
            # Sent before the failure was heard: reported with what its answers said.
            assert (result.outcome, on_server) == (Outcome.CANCELLED, "cancelled")
    assert report.results[2].outcome is Outcome.CANCELLED  # its cancel answer said so


# -- when overlapping pays ----------------------------------------------------------------------


def test_overlap_is_for_servers_far_enough_away() -> None:
    assert not worth_overlapping(None)
    assert not worth_overlapping(OVERLAP_FROM_SECONDS / 2)
    assert worth_overlapping(OVERLAP_FROM_SECONDS)
    trips = Exchange(ConcurrentFake())
    trips.add_round_trip(0.030)  # a process's first answers are its slowest: not yet evidence
    trips.add_round_trip(0.001)
    assert trips.typical_round_trip is None
    for seconds in (0.001, 0.001, 0.500):
        trips.add_round_trip(seconds)
    assert trips.typical_round_trip == 0.001  # a slow answer now and then does not move it
    trips.add_round_trip(0.030)
    assert trips.typical_round_trip == 0.001  # of six, the lower middle one


def test_by_default_a_near_server_is_confirmed_one_request_after_the_other() -> None:
    server = ConcurrentFake()
    for task_id in ("a", "b", "c"):
        server.add(task_id, "working")
    client = client_for(server)
    CancelRun(client, sleep=no_sleep).run([Target(task_id, True) for task_id in "abc"])
    assert server.on_request[-6:] == [
        ("tasks/cancel", "a"),
        ("tasks/get", "a"),
        ("tasks/cancel", "b"),
        ("tasks/get", "b"),
        ("tasks/cancel", "c"),
        ("tasks/get", "c"),
    ]


def test_by_default_a_far_server_is_confirmed_beside_the_next_cancel() -> None:
    server = ConcurrentFake()
    for task_id in ("a", "b", "c"):
        server.add(task_id, "working")
    server.hook[("tasks/get", "a")] = release = threading.Event()
    server.on_arrival[("tasks/cancel", "b")] = release  # only overlapping gets past this
    client = client_for(server)
    for _ in range(5):
        client.add_round_trip(OVERLAP_FROM_SECONDS * 2)
    report = CancelRun(client, sleep=no_sleep).run([Target(task_id, True) for task_id in "abc"])
    # a's get was answered only after b's cancel arrived: it went out beside it.
    assert server.answered.index(("tasks/cancel", "b")) < server.answered.index(("tasks/get", "a"))
    assert {r.outcome for r in report.results} == {Outcome.CANCELLED}

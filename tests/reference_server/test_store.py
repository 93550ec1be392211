"""The task store on its own: the calls of tools running as workers, keyset pages over
owners and expiry, timed changes on a manual clock, and the clocks themselves."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from mcptask.reference_server.records import SystemClock
from mcptask.reference_server.scripting import OnCancel, Step
from mcptask.reference_server.store import TaskStore
from tests.conformance.fixtures.workers import WorkerView
from tests.reference_server.conftest import MakeServer
from tests.reference_server.harness import DEADLINE, Server, in_thread
from tests.reference_server.manual_clock import MANUAL_EPOCH, ManualClock


@pytest.fixture
def server(make: MakeServer) -> Server:
    """A server with nothing seeded: its store, clock and change log."""
    return make()


def worker_view(server: Server, task_id: str) -> WorkerView:
    view = server.store.get(task_id, None)
    assert isinstance(view, WorkerView)
    return view


def page_ids(store: TaskStore, viewer: str | None, limit: int) -> list[list[str]]:
    """Every page a viewer gets by following the keys, as lists of ids."""
    pages: list[list[str]] = []
    after = None
    while True:
        views, more = store.page(viewer, after, limit)
        pages.append([view.task_id for view in views])
        if not more:
            return pages
        after = views[-1].sort_key


# -- the store's worker primitives -------------------------------------------------------------


def test_request_input_takes_partial_answers_and_mints_unique_keys(server: Server) -> None:
    store = server.store
    view = store.create(status_message="start")
    requests = {"a": {"method": "elicitation/create"}, "b": {"method": "elicitation/create"}}
    thread, out = in_thread(lambda: store.request_input(view.task_id, requests, "2 questions"))
    server.wait_until(lambda: store.get(view.task_id, None).status == "input_required")
    pending = worker_view(server, view.task_id)
    assert set(pending.input_requests) == {"a-1", "b-1"}
    assert pending.input_key is None
    assert pending.status_message == "2 questions"
    assert not store.provide_input(view.task_id, None, {"unknown": {}})
    assert store.provide_input(view.task_id, None, {"a-1": {"action": "decline"}})
    partial = worker_view(server, view.task_id)
    assert partial.status == "input_required"
    assert set(partial.input_requests) == {"b-1"}
    assert not store.provide_input(view.task_id, None, {"a-1": {"action": "accept"}})  # answered
    assert store.provide_input(view.task_id, None, {"b-1": {"action": "accept"}})
    thread.join(DEADLINE)
    assert out == [{"a": {"action": "decline"}, "b": {"action": "accept"}}]
    assert store.get(view.task_id, None).status == "working"
    assert not worker_view(server, view.task_id).input_requests
    # A second round gets new keys: a key is never reused over the task's life.
    thread, out = in_thread(lambda: store.request_input(view.task_id, {"a": {}}, "again"))
    server.wait_until(lambda: store.get(view.task_id, None).status == "input_required")
    assert set(worker_view(server, view.task_id).input_requests) == {"a-2"}
    store.provide_input(view.task_id, None, {"a-2": {}})
    thread.join(DEADLINE)
    assert out == [{"a": {}}]


def test_request_input_returns_none_when_the_task_is_cancelled(server: Server) -> None:
    store = server.store
    view = store.create()
    thread, out = in_thread(lambda: store.request_input(view.task_id, {"x": {}}, "?"))
    server.wait_until(lambda: store.get(view.task_id, None).status == "input_required")
    store.finish(view.task_id, "cancelled", "Cancelled by client")
    thread.join(DEADLINE)
    assert out == [None]
    assert not worker_view(server, view.task_id).input_requests
    with pytest.raises(ValueError, match="at least one"):
        store.request_input(view.task_id, {}, "nothing")
    assert store.request_input(view.task_id, {"x": {}}, "too late") is None


def test_wait_active_stops_early_when_the_task_ends_or_the_store_closes(
    server: Server,
) -> None:
    store, clock = server.store, server.clock
    view = store.create()
    until = clock.monotonic() + 0.01
    thread, out = in_thread(lambda: store.wait_active(view.task_id, until))
    assert clock.wait_for_waiting(1, DEADLINE)
    server.advance(0.01)
    thread.join(DEADLINE)
    assert out == [True]  # the time passed with the task still active
    later = clock.monotonic() + 3600
    thread, out = in_thread(lambda: store.wait_active(view.task_id, later))
    assert clock.wait_for_waiting(1, DEADLINE)
    store.finish(view.task_id, "cancelled", None)
    thread.join(DEADLINE)
    assert out == [False]
    assert not store.wait_active("no-such-task", clock.monotonic() + 0.01)
    other = store.create()
    thread, out = in_thread(lambda: store.wait_active(other.task_id, later))
    assert clock.wait_for_waiting(1, DEADLINE)
    store.close()
    thread.join(DEADLINE)
    assert out == [False]


def test_finish_stores_result_and_error_once(server: Server) -> None:
    store = server.store
    done = store.create()
    result = {"content": [{"type": "text", "text": "ok"}], "isError": True}
    assert store.finish(done.task_id, "completed", "done", result=result)
    assert worker_view(server, done.task_id).result == result
    assert not store.finish(done.task_id, "failed", "late", error={"code": 1, "message": "x"})
    assert store.get(done.task_id, None).status == "completed"
    failed = store.create()
    store.finish(failed.task_id, "failed", "boom", error={"code": -32603, "message": "boom"})
    view = worker_view(server, failed.task_id)
    assert (view.status, view.error, view.result) == (
        "failed",
        {"code": -32603, "message": "boom"},
        None,
    )
    with pytest.raises(ValueError, match="terminal"):
        store.finish(done.task_id, "working", None)


# -- pages ------------------------------------------------------------------------------------


def test_pages_merge_shared_and_own_tasks_in_creation_order(server: Server) -> None:
    store = server.store
    for name, owner in [("s1", None), ("a1", "a"), ("b1", "b"), ("s2", None), ("a2", "a")]:
        store.create(task_id=name, owner=owner)
    assert page_ids(store, None, 10) == [["s1", "s2"]]
    assert page_ids(store, "a", 2) == [["s1", "a1"], ["s2", "a2"]]
    assert page_ids(store, "b", 1) == [["s1"], ["b1"], ["s2"]]
    assert page_ids(store, "nobody", 5) == [["s1", "s2"]]


def test_pages_follow_created_at_even_for_tasks_added_out_of_order(server: Server) -> None:
    store = server.store
    now = server.clock.now()
    store.create(task_id="newest", created_at=now)
    store.create(task_id="oldest", created_at=now - timedelta(minutes=2))
    store.create(task_id="middle", created_at=now - timedelta(minutes=1))
    store.create(task_id="same-moment", created_at=now)  # the creation number breaks the tie
    assert page_ids(store, None, 10) == [["oldest", "middle", "newest", "same-moment"]]


def test_pages_stay_stable_when_tasks_expire_between_requests(server: Server) -> None:
    store = server.store
    for number in range(6):
        store.create(task_id=f"t{number}", ttl_ms=1000 if number in (2, 3) else None)
    first, more = store.page(None, None, 2)
    assert ([v.task_id for v in first], more) == (["t0", "t1"], True)
    server.advance(1)  # t2 and t3 expire between the two pages
    second, more = store.page(None, first[-1].sort_key, 2)
    assert ([v.task_id for v in second], more) == (["t4", "t5"], False)
    assert page_ids(store, None, 10) == [["t0", "t1", "t4", "t5"]]


def test_pages_skip_expired_tasks_that_the_scheduler_has_not_removed_yet() -> None:
    clock = ManualClock()
    store = TaskStore(clock)
    try:
        store.create(task_id="short", ttl_ms=0)  # expired at once; no advance has run
        store.create(task_id="kept")
        assert page_ids(store, None, 1) == [["kept"]]
    finally:
        store.close()


def test_pages_survive_the_removal_of_many_expired_tasks(server: Server) -> None:
    store = server.store
    count = 256
    for number in range(count):
        store.create(task_id=f"t{number:04d}", ttl_ms=1000 if number % 4 else None)
    server.advance(1)  # three in four expire and are removed
    kept = [f"t{number:04d}" for number in range(0, count, 4)]
    assert page_ids(store, None, 7) == [kept[i : i + 7] for i in range(0, len(kept), 7)]
    store.create(task_id="after")
    assert page_ids(store, None, 1000) == [[*kept, "after"]]


# -- timed changes on the manual clock ----------------------------------------------------------


def test_advance_applies_exactly_what_falls_due(server: Server) -> None:
    store = server.store
    steps = [Step(1.0, "input_required", "one"), Step(1.0, "completed", "two")]
    store.create(task_id="job", steps=steps)
    store.create(task_id="short", ttl_ms=1500)
    server.advance(0.5)
    assert server.changes == []
    server.advance(0.5)
    assert [(v.task_id, v.status) for v in server.changes] == [("job", "input_required")]
    server.advance(1)  # the second step, and the expiry at 1.5 s
    assert [(v.task_id, v.status) for v in server.changes][1:] == [("job", "completed")]
    assert [view.task_id for view in store.page(None, None, 10)[0]] == ["job"]
    assert store.get("job", None).last_updated_at == MANUAL_EPOCH + timedelta(seconds=2)
    with pytest.raises(ValueError, match="does not go back"):
        server.advance(-1)


def test_a_late_scheduler_does_not_stretch_a_script(server: Server) -> None:
    store = server.store
    steps = [Step(1.0, "working", "one"), Step(1.0, "working", "two"), Step(1.0, "failed", "x")]
    store.create(task_id="job", steps=steps)
    server.advance(2.5)  # one wake-up, two steps due: both apply, the third stays at 3 s
    assert [v.status_message for v in server.changes] == ["one", "two"]
    server.advance(0.5)
    assert store.get("job", None).status == "failed"


def test_a_rescheduled_cancel_wins_over_a_later_step(server: Server) -> None:
    store = server.store
    store.create(task_id="job", steps=[Step(10.0, "completed", "done")])
    store.cancel("job", None, OnCancel(kind="delay", delay_ms=1000), strict=False)
    server.advance(1)
    assert store.get("job", None).status == "cancelled"
    server.advance(10)
    assert [v.status for v in server.changes] == ["cancelled"]


def test_the_system_clock_drives_a_scheduler_thread() -> None:
    store = TaskStore(SystemClock())
    changed = threading.Event()
    store.add_listener(lambda view: changed.set())
    try:
        store.create(task_id="job", steps=[Step(0.0, "completed", "done")])
        assert changed.wait(DEADLINE)
        assert store.get("job", None).status == "completed"
    finally:
        store.close()

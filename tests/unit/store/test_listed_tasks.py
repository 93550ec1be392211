"""What a listing leaves in the record of known tasks, beside the other sightings: the later
sighting wins, the first one counts for the ttl, a session is kept, gone and forgotten tasks
go, completion finds ids JSON escapes, and text the file cannot hold costs only its task."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcptask.protocol.tasks import Task
from mcptask.store.database import complete_task_ids
from mcptask.store.known_tasks import RETENTION_SECONDS, STALE_SECONDS, KnownTasks
from tests.unit.store.support import (
    OTHER,
    SERVER,
    Clock,
    open_record,
    prune,
    recorded_tasks,
    statuses,
    task,
    write,
)


def tasks_of(*ids: str, status: str = "working") -> list[tuple[Task, str | None]]:
    return [(Task(taskId=task_id, status=status, ttl=None), None) for task_id in ids]


def listed(record: KnownTasks, *tasks: Task, complete: bool = True) -> None:
    """A listing of one page, read to the end (unless not `complete`), written now."""
    record.seen_page([(seen, None) for seen in tasks], via="tasks/list", first=True, last=complete)
    record.flush()


def test_a_listing_reads_back_as_tasks(tmp_path: Path) -> None:
    clock = Clock()
    record = open_record(tmp_path, clock, on_failure=pytest.fail)
    record.seen_page(tasks_of("a", "b"), via="tasks/list", first=True, last=False)
    clock.now += 1
    record.seen_page(tasks_of("c"), via="tasks/list", first=False, last=True)
    record.close()
    found = recorded_tasks(record)
    assert sorted(task.task_id for task in found) == ["a", "b", "c"]
    assert {(task.status, task.via, task.session_id, task.tool) for task in found} == {
        ("working", "tasks/list", None, None)
    }
    assert len(recorded_tasks(record)) == 3
    env = {"MCPTASK_STATE_DIR": str(tmp_path)}
    assert complete_task_ids(env, SERVER, "b") == [("b", "working")]
    assert complete_task_ids(env, OTHER, "") == []
    # most recently first seen first: the second page was seen after the first
    assert [task_id for task_id, _ in complete_task_ids(env, None, "")] == ["c", "a", "b"]


def test_a_listed_task_keeps_its_session_to_rejoin(tmp_path: Path) -> None:
    record = open_record(tmp_path, on_failure=pytest.fail)
    bound = [(Task(taskId="mine", status="working", ttl=None), "s1")]
    record.seen_page([*tasks_of("free"), *bound], via="tasks/list", first=True, last=False)
    record.close()
    assert record.sessions() == {"mine": "s1"}
    assert statuses(record) == {"free": "working", "mine": "working"}


def test_the_later_sighting_wins_and_the_first_one_counts_for_the_ttl(tmp_path: Path) -> None:
    clock = Clock()
    record = open_record(tmp_path, clock)
    write(record, task("t"))
    first_seen = clock.now
    clock.now += 10
    listed(record, task("t", "completed", 60_000))
    (known,) = recorded_tasks(record)
    assert (known.status, known.ttl_ms, known.first_seen, known.via) == (
        "completed",
        60_000,
        first_seen,
        "tasks/get",
    )
    assert known.expires_at == first_seen + 60
    clock.now += 10
    write(record, task("t", "cancelled", 60_000))
    assert statuses(record) == {"t": "cancelled"}
    clock.now = first_seen + 61  # past the ttl counted from the first sighting: not read back
    assert recorded_tasks(record) == []


def test_a_sighting_queued_before_a_page_is_written_before_it(tmp_path: Path) -> None:
    record = open_record(tmp_path, on_failure=pytest.fail)
    record.seen(task("t"), via="tasks/get", session_id=None, tool=None)
    record.seen_page(tasks_of("t", status="completed"), via="tasks/list", first=True, last=False)
    record.seen(task("u"), via="tasks/get", session_id=None, tool=None)
    record.seen_page(tasks_of("u", status="failed"), via="tasks/list", first=True, last=False)
    record.seen(task("u", "cancelled"), via="tasks/get", session_id=None, tool=None)
    record.close()
    assert statuses(record) == {"t": "completed", "u": "cancelled"}


def test_a_listing_read_in_part_keeps_what_others_saw_since(tmp_path: Path) -> None:
    clock = Clock()
    record = open_record(tmp_path, clock, on_failure=pytest.fail)
    record.seen_page(tasks_of("a", "b"), via="tasks/list", first=True, last=False)
    record.flush()
    clock.now += 1
    write(open_record(tmp_path, clock), task("b", "cancelled"))  # by another command
    clock.now += 1
    record.seen_page(tasks_of("c"), via="tasks/list", first=True, last=False)
    record.close()
    assert statuses(record) == {"a": "working", "b": "cancelled", "c": "working"}
    assert {task.task_id: task.via for task in recorded_tasks(record)}["a"] == "tasks/list"


def test_a_complete_listing_replaces_the_earlier_ones_but_no_other_sighting(
    tmp_path: Path,
) -> None:
    clock = Clock()
    record = open_record(tmp_path, clock)
    other = open_record(tmp_path, clock, OTHER)
    write(record, task("started"), via="tools/call")
    for lister in (record, other):
        listed(lister, task("a"), task("b"))
    clock.now += 1
    listed(record, task("b", "completed"))
    assert statuses(record) == {"started": "working", "b": "completed"}
    assert sorted(statuses(other)) == ["a", "b"]  # another server's listings stay


def test_a_listing_completed_late_does_not_replace_one_that_started_after_it(
    tmp_path: Path,
) -> None:
    clock = Clock()
    slow, fast = open_record(tmp_path, clock), open_record(tmp_path, clock)  # two processes
    slow.seen_page(tasks_of("old"), via="tasks/list", first=True, last=False)
    slow.flush()
    clock.now += 1
    listed(fast, task("new"))
    assert sorted(statuses(slow)) == ["new"]  # the slow one's first page is replaced
    clock.now += 1
    slow.seen_page(tasks_of("late"), via="tasks/list", first=False, last=True)
    slow.flush()
    assert sorted(statuses(slow)) == ["late", "new"]


def test_listing_again_keeps_the_tasks_not_written_again(tmp_path: Path) -> None:
    clock = Clock()
    record = open_record(tmp_path, clock)  # one process listing again and again, as watch
    listed(record, task("a"), task("b"))
    clock.now += 1
    listed(record, task("a"), task("b"))  # unchanged: not written again, still listed
    assert sorted(statuses(record)) == ["a", "b"]
    clock.now += 1
    listed(record, task("b"))
    assert sorted(statuses(record)) == ["b"]


def test_a_listing_that_stops_early_replaces_nothing(tmp_path: Path) -> None:
    clock = Clock()
    record = open_record(tmp_path, clock)
    listed(record, task("a"))
    clock.now += 1
    record.seen_page(tasks_of("b"), via="tasks/list", first=True, last=False)
    record.close()  # the command ended before the last page
    assert sorted(statuses(record)) == ["a", "b"]


def test_gone_and_forgotten_tasks_go_from_their_server_only(tmp_path: Path) -> None:
    record = open_record(tmp_path)
    other = open_record(tmp_path, identity=OTHER)
    for lister in (record, other):
        lister.seen_page(tasks_of("a", "b", "c", "d"), via="tasks/list", first=True, last=False)
        lister.seen_page(tasks_of("e"), via="tasks/list", first=False, last=True)
        lister.flush()
    record.gone("a")
    record.flush()
    everywhere = open_record(tmp_path, identity=None)
    assert record.forget(["b", "zz"]) == ["b"]
    assert everywhere.forget(["c"]) == ["c"]
    assert record.forget(["e"]) == ["e"]
    assert sorted(statuses(record)) == ["d"]
    assert sorted(statuses(other)) == ["a", "b", "d", "e"]
    assert everywhere.forget(None) == ["a", "b", "d", "e"]


def test_a_task_gone_after_its_page_in_one_batch_is_not_recorded(tmp_path: Path) -> None:
    record = open_record(tmp_path)
    record.seen_page(tasks_of("a", "b"), via="tasks/list", first=True, last=True)
    record.gone("a")
    record.close()
    assert sorted(statuses(record)) == ["b"]


def test_pruning_takes_expired_long_terminal_and_stale_listed_tasks(tmp_path: Path) -> None:
    clock = Clock()
    record = open_record(tmp_path, clock)
    listed(record, task("stale"))
    clock.now += STALE_SECONDS - RETENTION_SECONDS
    done, short = task("done", "completed"), task("short", ttl=1000)
    listed(record, done, short, task("kept"), complete=False)
    clock.now += RETENTION_SECONDS + 1
    assert sorted(statuses(record)) == ["done", "kept", "stale"]  # short: past its ttl
    prune(record)
    assert sorted(statuses(record)) == ["kept"]


def test_a_started_task_takes_a_later_listings_status_and_keeps_how_it_was_met(
    tmp_path: Path,
) -> None:
    clock = Clock()
    record = open_record(tmp_path, clock)
    write(record, task("t"), via="tools/call")
    clock.now += 1
    listed(record, task("t", "completed"), task("u"))
    clock.now += 1
    listed(record, task("u"))  # t is no longer listed
    known = {task.task_id: task for task in recorded_tasks(record)}
    assert (known["t"].status, known["t"].via, known["t"].last_seen) == (
        "completed",
        "tools/call",
        clock.now - 1,
    )
    clock.now += RETENTION_SECONDS + 1  # finished more than the retention ago: pruned
    prune(record)
    assert "t" not in statuses(record)


def test_of_one_task_on_two_pages_the_later_page_wins(tmp_path: Path) -> None:
    record = open_record(tmp_path)  # the clock stands still
    write(record, task("x"))
    record.seen_page(tasks_of("x"), via="tasks/list", first=True, last=False)
    record.seen_page(tasks_of("x", status="completed"), via="tasks/list", first=True, last=False)
    record.close()
    assert statuses(record) == {"x": "completed"}
    (known,) = recorded_tasks(record)
    assert known.via == "tasks/get"


def test_a_listed_task_seen_again_later_keeps_its_first_sighting(tmp_path: Path) -> None:
    clock = Clock()
    record = open_record(tmp_path, clock)
    listed(record, task("t", ttl=60_000))
    listed_at = clock.now
    clock.now += 5
    write(record, task("t", "completed", 60_000))
    (known,) = recorded_tasks(record)
    assert (known.status, known.first_seen, known.expires_at) == (
        "completed",
        listed_at,
        listed_at + 60,
    )


def test_a_ttl_too_large_to_keep_is_kept_as_none(tmp_path: Path) -> None:
    record = open_record(tmp_path, on_failure=pytest.fail)
    huge = 10**400
    record.seen_page(
        [(Task(taskId="p", status="working", ttl=huge), None)],
        via="tasks/list",
        first=True,
        last=False,
    )
    record.seen(task("r", ttl=-5), via="tasks/get", session_id=None, tool=None)
    record.close()
    assert {task.task_id: task.ttl_ms for task in recorded_tasks(record)} == {"p": None, "r": None}


def test_completion_offers_an_id_on_two_servers_once_as_last_seen(tmp_path: Path) -> None:
    clock = Clock()
    first, second = open_record(tmp_path, clock), open_record(tmp_path, clock, OTHER)
    write(first, task("same"))
    clock.now += 1
    write(second, task("same", "cancelled"))
    env = {"MCPTASK_STATE_DIR": str(tmp_path)}
    assert complete_task_ids(env, None, "sa") == [("same", "cancelled")]
    assert complete_task_ids(env, SERVER, "") == [("same", "working")]


def test_an_id_the_file_cannot_hold_is_never_recorded_and_never_fails(tmp_path: Path) -> None:
    """SQLite keeps UTF-8: a lone surrogate (valid in a server's JSON, or from a command
    line that is not UTF-8) cannot be bound. Such a task is not recorded; the others are."""
    odd = "bad-\udcff"
    record = open_record(tmp_path, on_failure=pytest.fail)
    record.seen_page(tasks_of("a", odd), via="tasks/list", first=True, last=False)
    record.seen_page(tasks_of("b", odd), via="tasks/list", first=True, last=False)
    record.seen(Task(taskId=odd, status="working"), via="tools/call", session_id=None, tool=None)
    record.gone(odd)
    record.detached(odd)
    record.close()
    assert sorted(statuses(record)) == ["a", "b"]
    assert record.forget([odd, "a"]) == ["a"]
    assert open_record(tmp_path, identity=None).forget([odd]) == []
    assert complete_task_ids({"MCPTASK_STATE_DIR": str(tmp_path)}, SERVER, "bad-\udcff") == []


def test_a_status_the_file_cannot_hold_costs_its_own_task_only(tmp_path: Path) -> None:
    """A server's status with a lone surrogate cannot be bound: that sighting is left out,
    not the batch it came with, and recording goes on."""
    record = open_record(tmp_path, on_failure=pytest.fail)
    odd = [(Task(taskId="odd", status="work\udcffing", ttl=None), None)]
    record.seen_page([*tasks_of("a"), *odd], via="tasks/list", first=True, last=False)
    record.flush()
    record.seen_page(tasks_of("b"), via="tasks/list", first=True, last=False)
    record.close()
    assert sorted(statuses(record)) == ["a", "b"]


def test_ids_that_json_escapes_are_found(tmp_path: Path) -> None:
    """Completion and forgetting find ids with quotes, backslashes and other scripts."""
    ids = ['say "hi"', "back\\slash", "café-1", "café-2", "\U0001f600-x", "plain"]
    clock = Clock()
    record = open_record(tmp_path, clock)
    listed(record, *(task(task_id) for task_id in ids[:3]))
    clock.now += 1
    listed(record, *(task(task_id) for task_id in ids[3:]), complete=False)
    env = {"MCPTASK_STATE_DIR": str(tmp_path)}
    for task_id in ids:
        assert (task_id, "working") in complete_task_ids(env, SERVER, task_id[:-1])
    assert [found for found, _ in complete_task_ids(env, SERVER, "caf")] == ["café-2", "café-1"]
    assert complete_task_ids(env, SERVER, 'say "') == [('say "hi"', "working")]
    assert record.forget(["café-1", "\U0001f600-x"]) == ["café-1", "\U0001f600-x"]
    assert sorted(statuses(record)) == sorted(set(ids) - {"café-1", "\U0001f600-x"})

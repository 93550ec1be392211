"""Listings kept as pages in the record of known tasks: read merged with the rows, replaced by
a later complete listing, folded into rows when stopped early, pruned, forgotten."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from mcptask.protocol.tasks import Task
from mcptask.store.identity import ServerIdentity
from mcptask.store.known import (
    FILE_NAME,
    PRUNE_EVERY_SECONDS,
    RETENTION_SECONDS,
    STALE_SECONDS,
    KnownTasks,
    ServerRecord,
    Sighting,
    StoreFailure,
)
from mcptask.store.listings import ListedPage, Listing
from mcptask.store.recorder import Recorder
from mcptask.store.task_ids import complete_task_ids
from tests.unit.store_support import OTHER, SERVER, Clock


def open_record(directory: Path, clock: Clock, identity: ServerIdentity = SERVER) -> ServerRecord:
    return KnownTasks(directory / FILE_NAME, now=clock).server(identity)


def page(listing: Listing, number: int, *tasks: tuple[str, str, int | None]) -> ListedPage:
    ids, statuses, ttls = zip(*tasks, strict=True) if tasks else ((), (), ())
    return ListedPage(listing, number, list(ids), list(statuses), list(ttls))


def row(task_id: str, status: str, via: str = "tasks/get", ttl: int | None = None) -> Sighting:
    return Sighting(task_id, status, ttl, None, via)


def complete_listing(record: ServerRecord, *tasks: tuple[str, str, int | None]) -> None:
    """One listing of one page, read to the end."""
    listing = record.begin_listing()
    record.write((), pages=[page(listing, 0, *tasks)], completed=[listing])


def table(directory: Path, name: str) -> int:
    with sqlite3.connect(directory / FILE_NAME) as db:
        (count,) = db.execute(f"SELECT COUNT(*) FROM {name}").fetchone()  # noqa: S608
    return int(count)


def statuses(record: ServerRecord) -> dict[str, str]:
    return {task.task_id: task.status for task in record.tasks()}


def listing_recorder(record: ServerRecord) -> Recorder:
    return Recorder(record, on_failure=pytest.fail, listings_as_pages=True)


def tasks_of(*ids: str, status: str = "working") -> list[tuple[Task, str | None]]:
    return [(Task(taskId=task_id, status=status, ttl=None), None) for task_id in ids]


# -- what a listing writes, and how it reads back -----------------------------------------------


def test_a_listing_is_one_row_per_page_and_reads_back_as_tasks(tmp_path: Path) -> None:
    clock = Clock()
    record = open_record(tmp_path, clock)
    recorder = listing_recorder(record)
    recorder.seen_page(tasks_of("a", "b"), via="tasks/list", first=True, last=False)
    recorder.seen_page(tasks_of("c"), via="tasks/list", first=False, last=True)
    recorder.finish()
    assert (table(tmp_path, "listed"), table(tmp_path, "tasks")) == (2, 0)
    found = record.tasks()
    assert sorted(task.task_id for task in found) == ["a", "b", "c"]
    assert {(task.status, task.via, task.session_id, task.tool) for task in found} == {
        ("working", "tasks/list", None, None)
    }
    assert record.count() == 3
    env = {"MCPTASK_STATE_DIR": str(tmp_path)}
    assert complete_task_ids(env, SERVER, "b") == [("b", "working")]
    assert complete_task_ids(env, OTHER, "") == []
    # most recently first seen first: the second page was seen after the first
    assert [task_id for task_id, _ in complete_task_ids(env, None, "")] == ["c", "a", "b"]


def test_tasks_with_a_session_to_rejoin_are_rows(tmp_path: Path) -> None:
    record = open_record(tmp_path, Clock())
    recorder = listing_recorder(record)
    bound = [(Task(taskId="mine", status="working", ttl=None), "s1")]
    recorder.seen_page([*tasks_of("free"), *bound], via="tasks/list", first=True, last=True)
    recorder.finish()
    assert (table(tmp_path, "listed"), table(tmp_path, "tasks")) == (1, 1)
    assert record.sessions() == {"mine": "s1"}
    assert statuses(record) == {"free": "working", "mine": "working"}


def test_the_later_sighting_wins_and_the_first_one_counts_for_the_ttl(tmp_path: Path) -> None:
    clock = Clock()
    record = open_record(tmp_path, clock)
    record.write([row("t", "working")])
    first_seen = clock.now
    clock.now += 10
    complete_listing(record, ("t", "completed", 60_000))
    (task,) = record.tasks()
    assert (task.status, task.ttl_ms, task.first_seen, task.via) == (
        "completed",
        60_000,
        first_seen,
        "tasks/get",
    )
    assert task.expires_at == first_seen + 60
    clock.now += 10
    record.write([row("t", "cancelled", ttl=60_000)])
    assert statuses(record) == {"t": "cancelled"}
    clock.now = first_seen + 61  # past the ttl counted from the first sighting: not read back
    assert record.tasks() == []


def test_a_row_written_with_a_page_is_the_later_sighting(tmp_path: Path) -> None:
    record = open_record(tmp_path, Clock())  # the clock stands still
    listing = record.begin_listing()
    record.write([row("t", "cancelled")], pages=[page(listing, 0, ("t", "working", None))])
    assert statuses(record) == {"t": "cancelled"}
    listing = record.begin_listing()
    record.write((), pages=[page(listing, 0, ("t", "completed", None))])
    assert statuses(record) == {"t": "completed"}  # a later write is later, the clock aside


def test_a_sighting_queued_before_a_page_is_written_before_it(tmp_path: Path) -> None:
    record = open_record(tmp_path, Clock())
    recorder = listing_recorder(record)
    recorder.seen(
        Task(taskId="t", status="working", ttl=None), via="tasks/get", session_id=None, tool=None
    )
    recorder.seen_page(tasks_of("t", status="completed"), via="tasks/list", first=True, last=True)
    recorder.seen(
        Task(taskId="u", status="working", ttl=None), via="tasks/get", session_id=None, tool=None
    )
    recorder.seen_page(tasks_of("u", status="failed"), via="tasks/list", first=True, last=True)
    recorder.seen(
        Task(taskId="u", status="cancelled", ttl=None), via="tasks/get", session_id=None, tool=None
    )
    recorder.finish()
    assert statuses(record) == {"t": "completed", "u": "cancelled"}


# -- complete listings, stopped ones -------------------------------------------------------------


def test_a_complete_listing_replaces_the_earlier_ones_but_no_row(tmp_path: Path) -> None:
    clock = Clock()
    record = open_record(tmp_path, clock)
    other = open_record(tmp_path, clock, OTHER)
    record.write([row("started", "working", via="tools/call")])
    for listed in (record, other):
        listing = listed.begin_listing()
        listed.write((), pages=[page(listing, 0, ("a", "working", None), ("b", "working", None))])
        listed.write((), completed=[listing])
    clock.now += 1
    complete_listing(record, ("b", "completed", None))
    assert statuses(record) == {"started": "working", "b": "completed"}
    assert sorted(statuses(other)) == ["a", "b"]  # another server's listings stay


def test_a_listing_completed_late_does_not_replace_one_that_started_after_it(
    tmp_path: Path,
) -> None:
    clock = Clock()
    record = open_record(tmp_path, clock)
    slow = record.begin_listing()
    record.write((), pages=[page(slow, 0, ("old", "working", None))])
    clock.now += 1
    fast = record.begin_listing()
    record.write((), pages=[page(fast, 0, ("new", "working", None))], completed=[fast])
    assert sorted(statuses(record)) == ["new"]  # the slow one's first page is replaced
    clock.now += 1
    record.write((), pages=[page(slow, 1, ("late", "working", None))], completed=[slow])
    assert sorted(statuses(record)) == ["late", "new"]


def test_a_listing_that_stops_early_is_folded_into_rows(tmp_path: Path) -> None:
    clock = Clock()
    record = open_record(tmp_path, clock)
    recorder = listing_recorder(record)
    recorder.seen_page(tasks_of("a", "b"), via="tasks/list", first=True, last=False)
    recorder.flush()
    clock.now += 1
    record.write([row("b", "cancelled")])  # seen since, by another command
    clock.now += 1
    recorder.seen_page(tasks_of("c"), via="tasks/list", first=False, last=False)
    recorder.finish()
    assert (table(tmp_path, "listed"), table(tmp_path, "tasks")) == (0, 3)
    assert statuses(record) == {"a": "working", "b": "cancelled", "c": "working"}
    assert {task.task_id: task.via for task in record.tasks()}["a"] == "tasks/list"


def test_a_new_listing_folds_the_one_it_interrupts(tmp_path: Path) -> None:
    clock = Clock()
    record = open_record(tmp_path, clock)
    recorder = listing_recorder(record)
    recorder.seen_page(tasks_of("a"), via="tasks/list", first=True, last=False)
    clock.now += 0.1  # the new listing starts after the first one's page: it would replace it
    recorder.seen_page(tasks_of("b"), via="tasks/list", first=True, last=True)
    recorder.finish()
    assert (table(tmp_path, "listed"), table(tmp_path, "tasks")) == (1, 1)
    assert sorted(statuses(record)) == ["a", "b"]


# -- forgetting, gone, pruning --------------------------------------------------------------------


def test_gone_and_forgotten_tasks_are_taken_off_the_pages(tmp_path: Path) -> None:
    record = open_record(tmp_path, Clock())
    other = open_record(tmp_path, Clock(), OTHER)
    for listed in (record, other):
        recorder = listing_recorder(listed)
        recorder.seen_page(tasks_of("a", "b", "c", "d"), via="tasks/list", first=True, last=False)
        recorder.seen_page(tasks_of("e"), via="tasks/list", first=False, last=True)
        recorder.finish()
    recorder = listing_recorder(record)
    recorder.gone("a")
    recorder.finish()
    assert record.forget(["b", "zz"]) == ["b"]
    assert record.store.forget_everywhere(["c"]) == ["c"]
    assert record.forget(["e"]) == ["e"]  # its page, left empty, goes
    assert sorted(statuses(record)) == ["d"]
    assert sorted(statuses(other)) == ["a", "b", "d", "e"]
    assert table(tmp_path, "listed") == 3
    assert record.store.forget_everywhere(None) == ["a", "b", "d", "e"]
    assert table(tmp_path, "listed") == 0


def test_a_task_gone_after_its_page_in_one_batch_is_not_recorded(tmp_path: Path) -> None:
    record = open_record(tmp_path, Clock())
    recorder = listing_recorder(record)
    recorder.seen_page(tasks_of("a", "b"), via="tasks/list", first=True, last=True)
    recorder.gone("a")
    recorder.finish()
    assert sorted(statuses(record)) == ["b"]


def test_pruning_takes_expired_long_terminal_and_stale_tasks_off_the_pages(
    tmp_path: Path,
) -> None:
    clock = Clock()
    record = open_record(tmp_path, clock)
    complete_listing(record, ("stale", "working", None))
    clock.now += STALE_SECONDS - RETENTION_SECONDS
    listing = record.begin_listing()
    record.write(
        (),
        pages=[
            page(
                listing,
                0,
                ("done", "completed", None),
                ("short", "working", 1000),
                ("kept", "working", None),
            )
        ],
    )
    clock.now += RETENTION_SECONDS + 1
    assert sorted(statuses(record)) == ["done", "kept", "stale"]  # short: past its ttl
    record.store.prune()
    assert sorted(statuses(record)) == ["kept"]
    assert table(tmp_path, "listed") == 1


@pytest.mark.parametrize(
    "edited",
    [
        '[["a"], []]',
        '[["a"], ["working"], ["60"]]',
        '[["a"], [1], [null]]',
        "{",
        "[]",
        "[" * 100_000,  # nested too deep for the parser
    ],
)
def test_a_page_edited_into_something_else_is_passed_over_then_dropped(
    tmp_path: Path, edited: str
) -> None:
    clock = Clock()
    record = open_record(tmp_path, clock)
    listing = record.begin_listing()
    record.write((), pages=[page(listing, 0, ("a", "working", None))])
    record.write((), pages=[page(listing, 1, ("b", "working", None))])
    with sqlite3.connect(tmp_path / FILE_NAME) as db:
        db.execute("UPDATE listed SET tasks = ? WHERE page = 0", (edited,))
    assert sorted(statuses(record)) == ["b"]
    env = {"MCPTASK_STATE_DIR": str(tmp_path)}
    assert complete_task_ids(env, SERVER, "") == [("b", "working")]
    assert table(tmp_path, "listed") == 2
    clock.now += PRUNE_EVERY_SECONDS
    reopened = open_record(tmp_path, clock)  # the prune, due, rewrites the pages
    assert sorted(statuses(reopened)) == ["b"]
    assert table(tmp_path, "listed") == 1


def test_a_failing_record_holds_no_pages_after_its_failure(tmp_path: Path) -> None:
    record = open_record(tmp_path, Clock())

    def broken(*args: object, **kwargs: object) -> None:
        raise StoreFailure("disk full")

    record.write = broken  # type: ignore[method-assign]
    warnings: list[str] = []
    recorder = Recorder(record, on_failure=warnings.append, listings_as_pages=True)
    for number in range(30):
        ids = [f"t{number}-{index}" for index in range(500)]
        recorder.seen_page(tasks_of(*ids), via="tasks/list", first=number == 0, last=False)
    recorder.finish()
    assert warnings == ["tasks are not being recorded: disk full"]
    assert (recorder._pages, recorder._paged_tasks, recorder._stopped) == ([], 0, [])


# -- pages and rows of the same tasks ------------------------------------------------------------


def test_a_row_takes_a_later_pages_sighting_and_keeps_it_when_the_page_goes(
    tmp_path: Path,
) -> None:
    clock = Clock()
    record = open_record(tmp_path, clock)
    record.write([row("t", "working", via="tools/call")])
    clock.now += 1
    complete_listing(record, ("t", "completed", None), ("u", "working", None))
    clock.now += 1
    complete_listing(record, ("u", "working", None))  # t is no longer listed
    known = {task.task_id: task for task in record.tasks()}
    assert (known["t"].status, known["t"].via, known["t"].last_seen) == (
        "completed",
        "tools/call",
        clock.now - 1,
    )
    clock.now += RETENTION_SECONDS + 1  # finished more than the retention ago: pruned
    record.store.prune()
    assert "t" not in statuses(record)


def test_of_one_task_on_two_pages_written_together_the_later_page_wins(tmp_path: Path) -> None:
    record = open_record(tmp_path, Clock())  # the clock stands still
    record.write([row("x", "working")])
    listing = record.begin_listing()
    record.write(
        (),
        pages=[
            page(listing, 0, ("x", "working", None)),
            page(listing, 1, ("x", "completed", None)),
        ],
        completed=[listing],
    )
    assert statuses(record) == {"x": "completed"}
    assert table(tmp_path, "tasks") == 1
    (known,) = record.tasks()
    assert known.via == "tasks/get"


def test_a_listing_completed_later_keeps_a_newer_page_of_one_that_started_earlier(
    tmp_path: Path,
) -> None:
    clock = Clock(1.0)
    record = open_record(tmp_path, clock)
    early = record.begin_listing()  # started at 1
    clock.now = 2.0
    late = record.begin_listing()  # started at 2
    clock.now = 3.0
    record.write((), pages=[page(late, 0, ("x", "working", None))])
    clock.now = 10.0
    record.write((), pages=[page(early, 0, ("x", "completed", None))])
    clock.now = 11.0
    record.write((), completed=[late])
    assert statuses(record) == {"x": "completed"}


def test_a_stopped_listing_folded_into_a_later_row_keeps_its_first_sighting(
    tmp_path: Path,
) -> None:
    clock = Clock()
    record = open_record(tmp_path, clock)
    listing = record.begin_listing()
    record.write((), pages=[page(listing, 0, ("t", "working", 60_000))])
    listed_at = clock.now
    clock.now += 5
    record.write([row("t", "completed", ttl=60_000)])
    record.write((), stopped=[listing])
    (known,) = record.tasks()
    assert (known.status, known.first_seen, known.expires_at) == (
        "completed",
        listed_at,
        listed_at + 60,
    )


def test_a_ttl_too_large_to_keep_is_kept_as_none(tmp_path: Path) -> None:
    record = open_record(tmp_path, Clock())
    recorder = listing_recorder(record)
    huge = 10**400
    recorder.seen_page(
        [(Task(taskId="p", status="working", ttl=huge), None)],
        via="tasks/list",
        first=True,
        last=True,
    )
    recorder.seen(
        Task(taskId="r", status="working", ttl=-5), via="tasks/get", session_id=None, tool=None
    )
    recorder.finish()
    assert {task.task_id: task.ttl_ms for task in record.tasks()} == {"p": None, "r": None}


def test_completion_offers_an_id_on_two_servers_once_as_last_seen(tmp_path: Path) -> None:
    clock = Clock()
    first, second = open_record(tmp_path, clock), open_record(tmp_path, clock, OTHER)
    first.write([row("same", "working")])
    clock.now += 1
    second.write([row("same", "cancelled")])
    env = {"MCPTASK_STATE_DIR": str(tmp_path)}
    assert complete_task_ids(env, None, "sa") == [("same", "cancelled")]
    with sqlite3.connect(tmp_path / FILE_NAME) as db:
        db.execute("DROP TABLE listed")  # as a record of the version before listings
    assert complete_task_ids(env, SERVER, "") == [("same", "working")]


def test_an_id_the_file_cannot_hold_is_never_recorded_and_never_fails(tmp_path: Path) -> None:
    """SQLite keeps UTF-8: a lone surrogate (valid in a server's JSON, or from a command
    line that is not UTF-8) cannot be bound. Such a task is not recorded; the others are."""
    odd = "bad-\udcff"
    record = open_record(tmp_path, Clock())
    recorder = listing_recorder(record)
    recorder.seen_page(tasks_of("a", odd), via="tasks/list", first=True, last=True)
    page_of_rows = Recorder(record, on_failure=pytest.fail)
    page_of_rows.seen_page(tasks_of("b", odd), via="tasks/list", first=True, last=True)
    page_of_rows.seen(
        Task(taskId=odd, status="working", ttl=None), via="tools/call", session_id=None, tool=None
    )
    page_of_rows.gone(odd)
    page_of_rows.detached(odd)
    for feeding in (recorder, page_of_rows):
        feeding.finish()
    assert sorted(statuses(record)) == ["a", "b"]
    assert record.forget([odd, "a"]) == ["a"]
    assert record.store.forget_everywhere([odd]) == []
    assert complete_task_ids({"MCPTASK_STATE_DIR": str(tmp_path)}, SERVER, "bad-\udcff") == []


def test_a_status_the_file_cannot_hold_costs_its_own_task_only(tmp_path: Path) -> None:
    """A server's status with a lone surrogate cannot be bound: that sighting is left out,
    not the batch it came with, and recording goes on."""
    record = open_record(tmp_path, Clock())
    recorder = Recorder(record, on_failure=pytest.fail)
    odd = [(Task(taskId="odd", status="work\udcffing", ttl=None), None)]
    recorder.seen_page([*tasks_of("a"), *odd], via="tasks/list", first=True, last=True)
    recorder.finish()
    recorder.seen_page(tasks_of("b"), via="tasks/list", first=True, last=True)
    recorder.finish()
    assert sorted(statuses(record)) == ["a", "b"]


def test_ids_that_json_escapes_are_found_on_their_pages(tmp_path: Path) -> None:
    """Completion and forgetting read only the pages whose text holds the id (or the
    prefix) as JSON writes it: quotes, backslashes and other scripts included."""
    ids = ['say "hi"', "back\\slash", "café-1", "café-2", "\U0001f600-x", "plain"]
    record = open_record(tmp_path, Clock())
    complete_listing(record, *((task_id, "working", None) for task_id in ids[:3]))
    listing = record.begin_listing()  # a second, incomplete listing: another page
    record.write((), pages=[page(listing, 0, *((task_id, "working", None) for task_id in ids[3:]))])
    env = {"MCPTASK_STATE_DIR": str(tmp_path)}
    for task_id in ids:
        assert (task_id, "working") in complete_task_ids(env, SERVER, task_id[:-1])
    assert [found for found, _ in complete_task_ids(env, SERVER, "caf")] == ["café-2", "café-1"]
    assert complete_task_ids(env, SERVER, 'say "') == [('say "hi"', "working")]
    assert record.forget(["café-1", "\U0001f600-x"]) == ["café-1", "\U0001f600-x"]
    assert sorted(statuses(record)) == sorted(set(ids) - {"café-1", "\U0001f600-x"})

"""The record of known tasks: identity, file permissions, what a write keeps, pruning,
concurrent processes, completion reads, and the recorder that feeds it."""

from __future__ import annotations

import multiprocessing
import os
import re
import sqlite3
import stat
from pathlib import Path
from typing import Any

import pytest

from mcptask.errors import StateError, StoreFailure
from mcptask.store import known_tasks
from mcptask.store.database import FILE_NAME, complete_task_ids, use_wal
from mcptask.store.identity import ServerIdentity, canonical_url
from mcptask.store.known_tasks import (
    PRUNE_EVERY_SECONDS,
    RETENTION_SECONDS,
    STALE_SECONDS,
    KnownTasks,
)
from mcptask.store.paths import refuse_unless_own, state_dir
from tests.unit.store.support import (
    OTHER,
    SERVER,
    Clock,
    open_record,
    prune,
    recorded_tasks,
    task,
    write,
)

# -- identity and location ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "canonical"),
    [
        ("HTTP://User:Secret@LocalHost:80/mcp?token=x#frag", "http://localhost/mcp"),
        ("https://Example.COM:443/mcp", "https://example.com/mcp"),
        ("https://example.com:8443/mcp/", "https://example.com:8443/mcp/"),
        ("http://[::1]:8765/mcp", "http://[::1]:8765/mcp"),
        ("http://example.com", "http://example.com/"),
    ],
)
def test_canonical_url(url: str, canonical: str) -> None:
    assert canonical_url(url) == canonical


def test_a_stdio_server_is_its_command_line_but_not_stored_in_clear() -> None:
    def command_key(command: str) -> str:
        return ServerIdentity.for_command(command).key

    key = command_key("mcptask reference-server --stdio --token s3cret")
    assert key == command_key("mcptask  'reference-server'  --stdio --token \"s3cret\"")
    assert key != command_key("mcptask reference-server --stdio --token other")
    assert "s3cret" not in key
    assert key.startswith("stdio:")


def test_state_dir_resolution(tmp_path: Path) -> None:
    assert state_dir({"MCPTASK_STATE_DIR": str(tmp_path), "XDG_STATE_HOME": "/x"}) == tmp_path
    assert state_dir({"XDG_STATE_HOME": "/xdg"}) == Path("/xdg/mcptask")
    # a relative XDG_STATE_HOME is ignored, as the XDG specification asks
    home = {"XDG_STATE_HOME": "rel", "HOME": "/home/u"}
    assert state_dir(home) == Path("/home/u/.local/state/mcptask")


def test_directory_is_0700_and_files_are_0600(tmp_path: Path) -> None:
    directory = tmp_path / "state" / "mcptask"
    old_umask = os.umask(0o022)
    try:
        record = open_record(directory)
        write(record, task("a"))
    finally:
        os.umask(old_umask)
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    files = sorted(directory.iterdir())
    assert {path.name for path in files} >= {FILE_NAME, f"{FILE_NAME}-wal"}
    for path in files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    record.close()
    assert sorted(path.name for path in directory.iterdir()) == [FILE_NAME]  # closed cleanly


def test_an_existing_file_readable_by_others_is_made_private(tmp_path: Path) -> None:
    recorded_tasks(open_record(tmp_path))
    (tmp_path / FILE_NAME).chmod(0o644)
    recorded_tasks(open_record(tmp_path))
    assert stat.S_IMODE((tmp_path / FILE_NAME).stat().st_mode) == 0o600


def test_an_unusable_state_dir_is_a_store_failure(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")
    with pytest.raises(StoreFailure, match="cannot use the record"):
        recorded_tasks(KnownTasks.open(SERVER, {"MCPTASK_STATE_DIR": str(tmp_path / "file")}))


OTHER_UID = 54321


def status_of(kind: int, mode: int, uid: int) -> os.stat_result:
    return os.stat_result((kind | mode, 0, 0, 1, uid, 0, 0, 0, 0, 0))


@pytest.mark.parametrize(
    ("kind", "mode", "uid", "refused"),
    [
        (stat.S_IFREG, 0o600, None, None),
        (stat.S_IFREG, 0o644, 0, None),  # root's: trusted, as ssh trusts it
        (stat.S_IFDIR, 0o755, None, None),  # a directory the user chose keeps its mode
        (stat.S_IFLNK, 0o777, None, "is a symbolic link, which mcptask does not follow: rm"),
        (stat.S_IFIFO, 0o600, None, "is not a regular file"),
        (stat.S_IFREG, 0o600, OTHER_UID, f"belongs to another user (uid {OTHER_UID})"),
        (stat.S_IFDIR, 0o700, OTHER_UID, "belongs to another user (uid 54321), who could"),
        (stat.S_IFDIR, 0o775, None, "is writable by other users (mode 0775)"),
        (stat.S_IFDIR, 0o1777, 0, "is writable by other users (mode 1777)"),
    ],
)
def test_what_another_user_could_control_is_refused(
    tmp_path: Path, kind: int, mode: int, uid: int | None, refused: str | None
) -> None:
    status = status_of(kind, mode, os.geteuid() if uid is None else uid)
    if refused is None:
        refuse_unless_own(tmp_path, status)
    else:
        with pytest.raises(StateError, match=re.escape(f"{tmp_path} {refused}")):
            refuse_unless_own(tmp_path, status)


@pytest.mark.skipif(os.geteuid() != 0, reason="giving a file to another user needs root")
def test_a_record_or_journal_of_another_user_is_refused(tmp_path: Path) -> None:
    # Closed here, not whenever the collector finds it: SQLite's last close deletes the -wal
    # file, which would take the planted journal with it.
    first = open_record(tmp_path)
    recorded_tasks(first)
    first.close()
    record, journal = tmp_path / FILE_NAME, tmp_path / (FILE_NAME + "-wal")
    journal.touch()
    for planted in (journal, record):
        os.chown(planted, OTHER_UID, OTHER_UID)
        with pytest.raises(StoreFailure, match=f"{planted} belongs to another user"):
            recorded_tasks(open_record(tmp_path))
        os.chown(planted, 0, 0)
    recorded_tasks(open_record(tmp_path))


def test_a_state_directory_others_may_write_is_refused_and_left_alone(tmp_path: Path) -> None:
    tmp_path.chmod(0o770)
    with pytest.raises(StoreFailure, match=r"writable by other users \(mode 0770\)"):
        recorded_tasks(open_record(tmp_path))
    assert list(tmp_path.iterdir()) == []
    tmp_path.chmod(0o750)  # an existing directory keeps its mode
    recorded_tasks(open_record(tmp_path))
    assert stat.S_IMODE(tmp_path.stat().st_mode) == 0o750


# -- what a write keeps ------------------------------------------------------------------------


def test_sightings_are_kept_per_server(tmp_path: Path) -> None:
    record, other = open_record(tmp_path), open_record(tmp_path, identity=OTHER)
    write(record, task("a"), via="tools/call", tool="long_job")
    write(record, task("b"))
    write(other, task("c"))
    assert record.ids() == ["a", "b"]
    assert other.ids() == ["c"]
    first = recorded_tasks(record)[0]
    assert (first.via, first.tool) == ("tools/call", "long_job")
    # the same URL under another profile is another record
    profiled = ServerIdentity(SERVER.key, SERVER.label, profile="prod")
    assert recorded_tasks(open_record(tmp_path, identity=profiled)) == []


def test_a_session_is_kept_until_detached_and_gone_forgets(tmp_path: Path) -> None:
    record = open_record(tmp_path)
    write(record, task("a"), session_id="s1")
    write(record, task("b"))
    # seen again without a durable session: the recorded one stays
    write(record, task("a", status="completed"))
    assert record.sessions() == {"a": "s1"}
    assert {t.task_id: t.status for t in recorded_tasks(record)} == {
        "a": "completed",
        "b": "working",
    }
    record.detached("a")
    record.flush()
    assert record.sessions() == {}
    record.gone("b")
    record.flush()
    assert [task.task_id for task in recorded_tasks(record)] == ["a"]


def test_forget_and_forget_everywhere(tmp_path: Path) -> None:
    record, other = open_record(tmp_path), open_record(tmp_path, identity=OTHER)
    everywhere = open_record(tmp_path, identity=None)
    write(record, task("a"), task("b"))
    write(other, task("a"), task("c"))
    assert record.forget(["a", "zzz"]) == ["a"]
    assert other.ids() == ["a", "c"]
    assert everywhere.forget(["a"]) == ["a"]
    assert everywhere.forget(None) == ["b", "c"]
    assert len(recorded_tasks(record)) == 0


# -- pruning -----------------------------------------------------------------------------------


def test_pruning_by_ttl_retention_and_staleness(tmp_path: Path) -> None:
    clock = Clock()
    record = open_record(tmp_path, clock)
    write(
        record,
        task("ttl-60s", ttl=60_000),
        task("no-ttl"),
        task("done", status="completed"),
        task("long-ttl", ttl=10**12),
    )
    clock.now += 61
    assert prune(record) == 1  # past its ttl, counted from when it was first seen
    assert {task.task_id for task in recorded_tasks(record)} == {"no-ttl", "done", "long-ttl"}
    clock.now += RETENTION_SECONDS
    write(record, task("no-ttl"))  # seen again: not stale
    assert prune(record) == 1  # terminal for longer than the retention period
    assert {task.task_id for task in recorded_tasks(record)} == {"no-ttl", "long-ttl"}
    clock.now += STALE_SECONDS - RETENTION_SECONDS + 1
    write(record, task("no-ttl"))
    assert prune(record) == 1  # long-ttl was not seen for STALE_SECONDS
    assert [task.task_id for task in recorded_tasks(record)] == ["no-ttl"]


def test_opening_prunes_on_its_own(tmp_path: Path) -> None:
    clock = Clock()
    write(open_record(tmp_path, clock), task("short", ttl=1000))
    clock.now += 2
    assert recorded_tasks(open_record(tmp_path, clock)) == []


def rows_in(directory: Path) -> list[str]:
    """Every task id in the record file, pruned or not yet."""
    with sqlite3.connect(directory / FILE_NAME) as db:
        return sorted(str(task_id) for (task_id,) in db.execute("SELECT task_id FROM tasks"))


def test_opening_prunes_at_most_once_per_interval_and_never_reads_an_expired_task(
    tmp_path: Path,
) -> None:
    clock = Clock()
    record = open_record(tmp_path, clock)  # pruned when first used
    write(record, task("short", ttl=1000), session_id="s-1")
    write(record, task("done", "completed"))
    clock.now += 2
    record.close()
    again = open_record(tmp_path, clock)
    assert again.ids() == ["done"]
    assert rows_in(tmp_path) == ["done", "short"]  # not yet due: the file is not scanned
    assert len(recorded_tasks(again)) == 1
    assert again.sessions() == {}
    again.close()
    clock.now += PRUNE_EVERY_SECONDS
    open_record(tmp_path, clock).close()
    assert rows_in(tmp_path) == ["done", "short"]  # closing alone does not open the file
    recorded_tasks(open_record(tmp_path, clock))
    assert rows_in(tmp_path) == ["done"]


def test_a_prune_dated_in_the_future_does_not_hold_the_next_one_off(tmp_path: Path) -> None:
    clock = Clock()
    write(open_record(tmp_path, clock), task("done", "completed"))
    clock.now += RETENTION_SECONDS + 1  # "done" is terminal past retention now
    with sqlite3.connect(tmp_path / FILE_NAME) as db:  # pruned by a clock that ran ahead
        db.execute("UPDATE pruned SET at = ?", (clock.now + PRUNE_EVERY_SECONDS / 2,))
    recorded_tasks(open_record(tmp_path, clock))
    assert rows_in(tmp_path) == []


def test_a_terminal_status_starts_the_retention_clock_once(tmp_path: Path) -> None:
    clock = Clock()
    record = open_record(tmp_path, clock)
    write(record, task("a"))
    clock.now += RETENTION_SECONDS  # working all that time
    write(record, task("a", status="completed"))
    clock.now += RETENTION_SECONDS / 2
    write(record, task("a", status="completed"))  # seeing it again does not reset it
    assert prune(record) == 0
    clock.now += RETENTION_SECONDS / 2 + 1
    assert prune(record) == 1


# -- concurrency -------------------------------------------------------------------------------


def _writer(directory: str, worker: int, count: int) -> None:
    record = KnownTasks(Path(directory) / FILE_NAME, SERVER)
    for n in range(count):
        record.seen(
            task(f"w{worker}-{n}", ttl=3_600_000), via="tools/call", session_id=None, tool=None
        )
    record.close()


def test_concurrent_processes_lose_no_write(tmp_path: Path) -> None:
    # A fresh directory: the processes also race to create the file and its schema.
    context = multiprocessing.get_context("spawn")
    workers = [
        context.Process(target=_writer, args=(str(tmp_path / "fresh"), worker, 25))
        for worker in range(6)
    ]
    for process in workers:
        process.start()
    for process in workers:
        process.join(60)
        assert process.exitcode == 0
    record = open_record(tmp_path / "fresh")
    assert len(recorded_tasks(record)) == 6 * 25


# -- completion --------------------------------------------------------------------------------


def test_completion_reads_the_record(tmp_path: Path) -> None:
    env = {"MCPTASK_STATE_DIR": str(tmp_path)}
    assert complete_task_ids(env, SERVER, "") == []  # no record yet: nothing, and no file made
    assert not (tmp_path / FILE_NAME).exists()
    clock = Clock()
    write(open_record(tmp_path, clock), task("abc-1"), task("abd-2", "completed"), task("a_c"))
    write(open_record(tmp_path, clock, OTHER), task("abz"), task("abx", ttl=1000))
    clock.now = 0  # abx's ttl is long past by the real clock: not offered
    assert sorted(complete_task_ids(env, SERVER, "ab")) == [
        ("abc-1", "working"),
        ("abd-2", "completed"),
    ]
    # LIKE wildcards in what was typed are taken literally
    assert complete_task_ids(env, SERVER, "a_") == [("a_c", "working")]
    assert {task_id for task_id, _ in complete_task_ids(env, None, "ab")} == {
        "abc-1",
        "abd-2",
        "abz",
    }


# -- recording ---------------------------------------------------------------------------------


class Ticks:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_created_task_is_written_at_once_others_are_batched(tmp_path: Path) -> None:
    ticks = Ticks()
    record = open_record(tmp_path, on_failure=pytest.fail, clock=ticks)
    reader = open_record(tmp_path)
    record.seen(task("listed"), via="tasks/list", session_id=None, tool=None)
    assert len(recorded_tasks(reader)) == 0
    record.seen(task("new"), via="tools/call", session_id="s1", tool="long_job")
    assert {t.task_id for t in recorded_tasks(reader)} == {"listed", "new"}
    assert reader.sessions() == {"new": "s1"}
    record.gone("listed")
    ticks.now += 5  # a second later, the next sighting writes the batch
    record.seen(task("new", "completed"), via="tasks/get", session_id=None, tool=None)
    assert [(t.task_id, t.status) for t in recorded_tasks(reader)] == [("new", "completed")]


def counting_writes(record: KnownTasks) -> list[list[str]]:
    """The ids of each write `record` makes from now on."""
    writes: list[list[str]] = []
    original = record._write

    def counting(sightings: list[Any], *args: Any) -> None:
        writes.append([row[2] for row in sightings])  # UPSERT_TASK's third: the task id
        original(sightings, *args)

    record._write = counting  # type: ignore[method-assign, assignment]
    return writes


def test_an_unchanged_task_is_not_written_again(tmp_path: Path) -> None:
    record = open_record(tmp_path, on_failure=pytest.fail)
    writes = counting_writes(record)
    for _ in range(50):
        record.seen(task("a"), via="tools/call", session_id=None, tool=None)
    assert len(writes) == 1


def test_a_failing_record_warns_once_and_stops(tmp_path: Path) -> None:
    warnings: list[str] = []
    record = open_record(tmp_path, on_failure=warnings.append)

    def broken(*args: object) -> None:
        raise StoreFailure("disk full")

    record._write = broken  # type: ignore[method-assign, assignment]
    record.seen(task("a"), via="tools/call", session_id=None, tool=None)
    record.seen(task("b"), via="tools/call", session_id=None, tool=None)
    record.flush()
    assert warnings == ["tasks are not being recorded: disk full"]
    for number in range(30):  # what is queued after the failure is dropped, not held
        record.seen_page(
            [(task(f"t{number}-{i}"), None) for i in range(500)],
            via="tasks/list",
            first=True,
            last=False,
        )
    record.close()
    assert record._pending == {}


def test_a_queued_change_is_written_on_a_later_unchanged_sighting(tmp_path: Path) -> None:
    ticks = Ticks()
    record = open_record(tmp_path, on_failure=pytest.fail, clock=ticks)
    reader = open_record(tmp_path)
    record.seen(task("a", "completed"), via="tasks/get", session_id=None, tool=None)
    assert len(recorded_tasks(reader)) == 0  # queued
    ticks.now += 5
    record.seen(task("a", "completed"), via="tasks/get", session_id=None, tool=None)
    assert [(t.task_id, t.status) for t in recorded_tasks(reader)] == [("a", "completed")]


class RefusingAtFirst:
    """A connection whose switch to WAL is refused as SQLite refuses it when two processes
    open the same new file at once ("database is locked", at once, no busy handler)."""

    def __init__(self, refusals: int, error: str = "database is locked") -> None:
        self.refusals = refusals
        self.error = error
        self.statements: list[str] = []

    def execute(self, statement: str) -> None:
        self.statements.append(statement)
        if self.refusals:
            self.refusals -= 1
            raise sqlite3.OperationalError(self.error)


def test_the_switch_to_wal_waits_out_another_opener() -> None:
    connection = RefusingAtFirst(refusals=3)
    use_wal(connection)  # type: ignore[arg-type]
    assert connection.statements == ["PRAGMA journal_mode = WAL"] * 4


def test_any_other_failure_of_the_switch_is_not_waited_for() -> None:
    connection = RefusingAtFirst(refusals=1, error="disk I/O error")
    with pytest.raises(sqlite3.OperationalError, match="disk I/O error"):
        use_wal(connection)  # type: ignore[arg-type]
    assert len(connection.statements) == 1


def feed(record: KnownTasks, ids: list[str], *, by_page: bool) -> None:
    """The tasks as a list brings them: one by one, or as one page (`seen_page`)."""
    if by_page:
        record.seen_page(
            [(task(task_id), None) for task_id in ids], via="tasks/list", first=True, last=False
        )
        return
    for task_id in ids:
        record.seen(task(task_id), via="tasks/list", session_id=None, tool=None)


@pytest.mark.parametrize("by_page", [False, True])
def test_the_record_remembers_a_bounded_number_of_tasks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, by_page: bool
) -> None:
    """What it last wrote is remembered for at most MEMORY tasks: a list of many tasks does
    not hold them all, every one is still recorded, and the recent ones are not written again
    while unchanged."""
    monkeypatch.setattr(known_tasks, "MEMORY", 8)
    record = open_record(tmp_path, on_failure=pytest.fail)
    writes = counting_writes(record)
    ids = [f"t{number}" for number in range(20)]
    feed(record, ids, by_page=by_page)  # the memory turns over within the page
    record.flush()
    assert sorted(t.task_id for t in recorded_tasks(record)) == sorted(ids)
    assert len(record._written) <= 8
    writes.clear()
    feed(record, [*ids[-4:], "t0"], by_page=by_page)  # the latest remembered; t0 forgotten
    record.flush()
    assert writes == [["t0"]]

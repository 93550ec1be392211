"""`mcptask start`, `result` and `--known` against the third-party 2026-07-28 tasks server
(FastMCP 4 + fastmcp-tasks 4.1.4; see README.md beside this file).

Tasks are started with mcptask itself here, and what mcptask says is checked with raw
`tasks/get` requests (env.get_task). Each test keeps its own record (MCPTASK_STATE_DIR).
Task ids are base64url and may begin with '-', so they always come after '--'.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from mcptask.store.database import FILE_NAME
from mcptask.store.identity import ServerIdentity
from mcptask.store.known_tasks import KnownTasks
from tests.cli_process import Result, run_mcptask

from .env import TERMINAL, RpcError, cancel_task, get_task, start_ext_tasks_server, stop
from .env import wait_for_status as raw_wait

JSON = dict[str, Any]
DEADLINE = 60.0
LONG = 600


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    url, proc = start_ext_tasks_server()
    try:
        yield url
    finally:
        stop(proc)


class Mcptask:
    """mcptask against the server, with a record of its own; cancels what it left running."""

    def __init__(self, url: str, state: Path) -> None:
        self.url = url
        self.state = state
        self.started: list[str] = []

    def __call__(self, command: str, *args: str) -> Result:
        # the server options right after the command: ids may follow a '--'
        return run_mcptask(
            command,
            "--url",
            self.url,
            *args,
            env={"MCPTASK_STATE_DIR": str(self.state)},
            timeout=DEADLINE,
        )

    def start(self, tool: str, *items: str) -> str:
        result = self("start", tool, *items, "-o", "json")
        assert result.code == 0, result.stderr
        task = result.json()["task"]
        assert task is not None, result.stdout
        self.started.append(task["taskId"])
        return str(task["taskId"])

    def recorded(self) -> set[str]:
        record = KnownTasks(self.state / FILE_NAME, ServerIdentity.for_url(self.url))
        try:
            return set(record.ids())
        finally:
            record.close()

    def cleanup(self) -> None:
        for task_id in self.started:
            with contextlib.suppress(RpcError, httpx.HTTPError, AssertionError):
                if get_task(self.url, task_id)["status"] not in TERMINAL:
                    cancel_task(self.url, task_id)


@pytest.fixture
def mcptask(server: str, tmp_path: Path) -> Iterator[Mcptask]:
    runner = Mcptask(server, tmp_path / "state")
    yield runner
    runner.cleanup()


def test_start_records_the_task_the_server_made(mcptask: Mcptask) -> None:
    task_id = mcptask.start("long_job", f"seconds:={LONG}")
    assert get_task(mcptask.url, task_id)["status"] == "working"
    assert mcptask.recorded() == {task_id}
    ids = mcptask("start", "long_job", f"seconds:={LONG}", "-o", "ids")
    assert ids.code == 0, ids.stderr
    mcptask.started.append(ids.stdout.strip())
    assert mcptask.recorded() == {task_id, ids.stdout.strip()}


def test_list_known_and_cancel_all_working_known_confirmed_by_the_server(
    mcptask: Mcptask,
) -> None:
    running = {mcptask.start("long_job", f"seconds:={LONG}") for _ in range(3)}
    done = mcptask.start("long_job", "seconds:=0.2")
    assert raw_wait(mcptask.url, done, timeout=DEADLINE)["status"] == "completed"
    # the server has no list: without --known that is a refusal naming the record
    refused = mcptask("list")
    refused.assert_one_line_error(5, "4 tasks of this server recorded here: add --known")
    listed = mcptask("list", "--known", "-o", "json")
    assert listed.code == 0, listed.stderr
    assert {t["taskId"]: t["status"] for t in listed.json()["tasks"]} == {
        **dict.fromkeys(running, "working"),
        done: "completed",
    }
    cancelled = mcptask("cancel", "--all-working", "--known", "--wait-timeout", "30", "-o", "json")
    assert cancelled.code == 0, cancelled.stderr
    results = {row["taskId"]: row["outcome"] for row in cancelled.json()["results"]}
    assert results == dict.fromkeys(running, "cancelled")
    for task_id in running:  # confirmed by the server itself
        assert get_task(mcptask.url, task_id)["status"] == "cancelled"
    assert get_task(mcptask.url, done)["status"] == "completed"


def test_result_of_a_completed_task(mcptask: Mcptask) -> None:
    task_id = mcptask.start("long_job", "seconds:=0.2")
    assert raw_wait(mcptask.url, task_id, timeout=DEADLINE)["status"] == "completed"
    table = mcptask("result", "-o", "table", "--", task_id)
    assert table.code == 0, table.stderr
    assert table.stdout.strip() == "long_job completed after 0.2 s"
    document = mcptask("result", "-o", "json", "--", task_id)
    assert document.code == 0
    raw = get_task(mcptask.url, task_id)["result"]
    assert document.json()["result"] == raw  # as the server sent it
    assert document.json()["outcome"] == "completed"
    # result waits for a task that is about to finish
    soon = mcptask.start("long_job", "seconds:=1")
    assert mcptask("result", "--wait-timeout", "30", "--", soon).code == 0


def test_result_of_a_tool_that_fails(mcptask: Mcptask) -> None:
    # A tool error ends the task `completed` with isError here: exit 9 all the same.
    failed = mcptask.start("long_job", "seconds:=0.2", "outcome=failed")
    assert raw_wait(mcptask.url, failed, timeout=DEADLINE)["status"] == "completed"
    result = mcptask("result", "-o", "json", "--", failed)
    assert result.code == 9, result.stderr
    assert result.json()["outcome"] == "tool-error"
    assert result.json()["result"]["isError"] is True
    assert "the tool reported an error" in result.stderr
    required = mcptask.start("failing_job")
    assert mcptask("result", "--wait-timeout", "30", "--", required).code == 9
    unfinished = mcptask.start("long_job", f"seconds:={LONG}")
    pending = mcptask("result", "--wait-timeout", "0.5", "--", unfinished)
    assert pending.code == 7


def test_arguments_are_checked_against_fastmcp_schemas(mcptask: Mcptask) -> None:
    mcptask("start", "long_job", "outcome=maybe").assert_one_line_error(
        2, "outcome: 'maybe' is not one of", "nothing was sent"
    )
    mcptask("start", "long_job", "seconds=soon").assert_one_line_error(
        2, "seconds: 'soon' is not of type 'number'"
    )
    mcptask("start", "greet").assert_one_line_error(2, "'name' is a required property")
    assert not (mcptask.state / FILE_NAME).exists() or mcptask.recorded() == set()


def test_a_tool_that_is_never_a_task_runs_at_once(mcptask: Mcptask) -> None:
    greeted = mcptask("start", "greet", "name=Ada", "-o", "json")
    assert greeted.code == 0, greeted.stderr
    assert "without making a task" in greeted.stderr
    document = greeted.json()
    assert document["task"] is None
    assert "Hello, Ada!" in json.dumps(document["result"])


def test_start_watch_follows_a_required_task(mcptask: Mcptask) -> None:
    result = mcptask("start", "required_job", "seconds:=1", "--watch", "-o", "jsonl")
    assert result.code == 0, result.stderr
    first, *changes = [json.loads(line) for line in result.stdout.splitlines()]
    mcptask.started.append(first["task"]["taskId"])
    assert changes[-1]["status"] == "completed"

"""`mcptask start` and the record of known tasks against the official MCP Python SDK 1.30 task
server (session-scoped tasks; see test_mcptask_vs_sdk.py for what the SDK does).

A task of the SDK is visible only in the session that created it. `start` keeps that session
open and records it; later mcptask processes rejoin it by themselves, with no --session-id.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli_process import Result, run_mcptask

from .sdk_env import HttpMode, ensure_sdk_venv, start_sdk_server, stop

MODES: tuple[HttpMode, ...] = ("sse", "json")
LONG = 600


@pytest.fixture(scope="module", params=MODES)
def url(request: pytest.FixtureRequest) -> Iterator[str]:
    ensure_sdk_venv()
    address, proc = start_sdk_server(request.param)
    try:
        yield address
    finally:
        stop(proc)


class Mcptask:
    """mcptask against the server, with a record of its own."""

    def __init__(self, url: str, state: Path) -> None:
        self.url = url
        self.env = {"MCPTASK_STATE_DIR": str(state)}

    def __call__(self, command: str, *args: str) -> Result:
        return run_mcptask(command, "--url", self.url, *args, env=self.env, timeout=60)

    def start(self, *items: str) -> tuple[str, str]:
        """Start long_job; returns (task id, the session kept for it)."""
        result = self("start", "long_job", *items, "-o", "json")
        assert result.code == 0, result.stderr
        document = result.json()
        assert document["task"]["status"] == "working"
        assert document["sessionId"], "start keeps the session that owns the task"
        return document["task"]["taskId"], document["sessionId"]


@pytest.fixture
def mcptask(url: str, tmp_path: Path) -> Mcptask:
    return Mcptask(url, tmp_path / "state")


def test_start_then_get_and_cancel_all_working_known_in_later_processes(
    mcptask: Mcptask,
) -> None:
    first, first_session = mcptask.start(f"seconds:={LONG}")
    second, second_session = mcptask.start(f"seconds:={LONG}")
    assert first_session != second_session
    # A new session of its own sees none of them: the SDK scopes tasks to sessions.
    listed = mcptask("list", "-o", "json")
    assert listed.code == 0, listed.stderr
    assert listed.json()["count"] == 0
    # A later process rejoins the session that owns the task, without --session-id.
    got = mcptask("get", first, "-o", "json")
    assert got.code == 0, got.stderr
    assert got.json()["taskId"] == first
    assert got.json()["status"] == "working"
    known = mcptask("list", "--known", "-o", "json")
    assert {task["taskId"] for task in known.json()["tasks"]} == {first, second}
    cancelled = mcptask("cancel", "--all-working", "--known", "--wait-timeout", "30", "-o", "json")
    assert cancelled.code == 0, cancelled.stderr
    outcomes = {row["taskId"]: row["outcome"] for row in cancelled.json()["results"]}
    assert outcomes == {first: "cancelled", second: "cancelled"}
    # and another later process confirms it, in each task's own session
    for task_id in (first, second):
        again = mcptask("get", task_id, "-o", "json")
        assert again.json()["status"] == "cancelled", again.stderr
    assert mcptask("result", first).code == 11


def test_result_in_a_later_process(mcptask: Mcptask) -> None:
    done, _ = mcptask.start("seconds:=0.2")
    result = mcptask("result", done, "--wait-timeout", "30", "-o", "table")
    assert result.code == 0, result.stderr
    assert result.stdout.strip() == "long_job completed after 0.2s"
    document = mcptask("result", done, "-o", "json").json()
    assert document["result"]["content"][0]["text"] == "long_job completed after 0.2s"
    assert document["result"]["_meta"]["io.modelcontextprotocol/related-task"] == {"taskId": done}
    # The SDK's failed task: `task.fail(...)`, and tasks/result then has no tool result.
    failed, _ = mcptask.start("seconds:=0.2", "outcome=failed")
    outcome = mcptask("result", failed, "--wait-timeout", "30", "-o", "json")
    assert outcome.code == 10, outcome.stderr
    assert outcome.json()["status"] == "failed"


def test_the_sdk_schema_is_enforced_before_sending(mcptask: Mcptask) -> None:
    # long_job's inputSchema: seconds required, no other properties
    mcptask("start", "long_job").assert_one_line_error(2, "'seconds' is a required property")
    mcptask("start", "long_job", "seconds:=1", "colour=red").assert_one_line_error(
        2, "Additional properties are not allowed"
    )

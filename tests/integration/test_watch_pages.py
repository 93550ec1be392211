"""`watch` by `tasks/list` pages and by `tasks/get`: the same changes, the same end, whichever
way the server lets mcptask poll. The real mcptask process against the real reference
server, scripted (--tasks-file) to move its tasks through every kind of change, in every
capability: 2025-11-25 that lists (pages; watching the listed tasks or given ids, over HTTP
and stdio), 2025-11-25 without a list and 2026-07-28 (tasks/get).

Changes are compared task by task (what happens to different tasks within the same tenth of
a second may be seen in either order; one task's changes are seen in order), without times.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli_process import Result, reference_stdio_command, run_mcptask
from tests.conftest import StartServer

SCRIPT: list[dict[str, Any]] = [
    {
        "taskId": "alpha",
        "status": "working",
        "statusMessage": "starting",
        "steps": [[1.5, "input_required", "needs input"], [1.5, "completed", "done"]],
    },
    {
        "taskId": "beta",
        "status": "working",
        "statusMessage": "step 1",
        "steps": [[1.5, "working", "step 2"], [1.5, "failed", "boom"]],
    },
    {
        "taskId": "gamma",
        "status": "working",
        "statusMessage": "running",
        "steps": [[3.0, "cancelled", "stopped"]],
    },
    {"taskId": "delta", "status": "working", "statusMessage": "short-lived", "ttl": 1500},
]
IDS = ["alpha", "beta", "gamma", "delta"]
Changes = list[tuple[str | None, str, str | None]]
EXPECTED: dict[str, Changes] = {
    "alpha": [
        (None, "working", "starting"),
        ("working", "input_required", "needs input"),
        ("input_required", "completed", "done"),
    ],
    "beta": [
        (None, "working", "step 1"),
        ("working", "working", "step 2"),
        ("working", "failed", "boom"),
    ],
    "gamma": [(None, "working", "running"), ("working", "cancelled", "stopped")],
    "delta": [(None, "working", "short-lived"), ("working", "gone", None)],
}
WATCH = ("watch", "-o", "jsonl", "--interval", "0.2", "--wait-timeout", "30", "-v")


@pytest.fixture
def script(tmp_path: Path) -> str:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(SCRIPT), encoding="utf-8")
    return str(path)


@pytest.fixture
def slow_script(tmp_path: Path) -> str:
    """SCRIPT with every delay and ttl 20 times longer: nothing changes within a short wait,
    however long the machine takes to start the processes."""
    slow = [
        task
        | {"steps": [[delay * 20, *rest] for delay, *rest in task.get("steps", [])]}
        | ({"ttl": task["ttl"] * 20} if "ttl" in task else {})
        for task in SCRIPT
    ]
    path = tmp_path / "slow-tasks.json"
    path.write_text(json.dumps(slow), encoding="utf-8")
    return str(path)


def changes_per_task(result: Result) -> dict[str, Changes]:
    seen: dict[str, Changes] = {}
    for line in result.stdout.splitlines():
        change = json.loads(line)
        seen.setdefault(change["taskId"], []).append(
            (change["previous"], change["status"], change["statusMessage"])
        )
    return seen


def requests(result: Result, method: str) -> int:
    """How many requests of `method` the -v wire log shows."""
    return result.stderr.count(f'"method":"{method}"')


@pytest.mark.parametrize(
    ("transport", "ids"),
    [("http", False), ("http", True), ("stdio", False)],
    ids=["http, listed tasks", "http, given ids", "stdio, listed tasks"],
)
def test_a_server_that_lists_is_polled_by_pages(
    transport: str, ids: bool, script: str, reference_server: StartServer
) -> None:
    server = ["--tasks-file", script, "--protocol-eras", "legacy"]
    target = (
        ["--url", reference_server(*server)]
        if transport == "http"
        else ["--server", reference_stdio_command(*server)]
    )
    result = run_mcptask(*WATCH, *target, *(IDS if ids else []))
    assert result.code == 0, result.stderr[-2000:]
    assert changes_per_task(result) == EXPECTED
    # Some fifteen rounds of four tasks: by pages, tasks/get only where the pages cannot tell
    # (a task they show finished, one missing from them), a handful in all.
    assert requests(result, "tasks/list") >= 10
    assert requests(result, "tasks/get") <= 8, requests(result, "tasks/get")


@pytest.mark.parametrize(
    "server",
    [
        ("--protocol-eras", "legacy", "--no-list"),
        ("--protocol-eras", "modern"),
    ],
    ids=["2025-11-25 without a list", "2026-07-28"],
)
def test_a_server_without_a_list_is_polled_by_gets(
    server: tuple[str, ...], script: str, reference_server: StartServer
) -> None:
    url = reference_server("--tasks-file", script, *server)
    result = run_mcptask(*WATCH, "--url", url, *IDS)
    assert result.code == 0, result.stderr[-2000:]
    assert changes_per_task(result) == EXPECTED
    assert requests(result, "tasks/list") == 0
    assert requests(result, "tasks/get") >= 20


@pytest.mark.parametrize("lists", [True, False], ids=["pages", "gets"])
def test_exit_status_and_the_final_document_are_the_same_either_way(
    lists: bool, script: str, reference_server: StartServer
) -> None:
    url = reference_server(
        "--tasks-file", script, "--protocol-eras", "legacy", *([] if lists else ["--no-list"])
    )
    result = run_mcptask(
        "watch", "--url", url, *IDS, "-o", "json", "--interval", "0.2", "--exit-status",
        "--protocol", "2025-11-25",
    )  # fmt: skip
    assert result.code == 7, result.stderr  # beta failed, gamma cancelled, delta gone
    document = result.json()
    assert {task["taskId"]: task.get("gone", task["status"]) for task in document["tasks"]} == {
        "alpha": "completed",
        "beta": "failed",
        "gamma": "cancelled",
        "delta": True,
    }
    assert document["interrupted"] is False
    assert document["timedOut"] is False


@pytest.mark.parametrize("lists", [True, False], ids=["pages", "gets"])
def test_a_wait_timeout_ends_the_same_either_way(
    lists: bool, slow_script: str, reference_server: StartServer
) -> None:
    url = reference_server(
        "--tasks-file", slow_script, "--protocol-eras", "legacy", *([] if lists else ["--no-list"])
    )
    result = run_mcptask(
        "watch", "--url", url, *IDS, "-o", "jsonl", "--interval", "0.2", "--wait-timeout",
        "0.8", "--protocol", "2025-11-25",
    )  # fmt: skip
    assert result.code == 7, result.stderr
    assert changes_per_task(result) == {
        task_id: changes[:1] for task_id, changes in EXPECTED.items()
    }
    assert "timed out with tasks still running" in result.stderr

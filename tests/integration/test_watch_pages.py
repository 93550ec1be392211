"""`watch` by `tasks/list` pages and by `tasks/get`: the same changes, the same end, whichever
way the server lets mcptask poll. The real mcptask process against the reference server
(in the test process on a real socket, its time on a manual clock), scripted (--tasks-file)
to move its tasks through every kind of change, in every capability: 2025-11-25 that lists
(pages; watching the listed tasks or given ids, over HTTP and stdio), 2025-11-25 without a
list and 2026-07-28 (tasks/get).

The server's time moves on only once mcptask was shown every active task in its current
state SHOWN times (some rounds of polls) and, with -o jsonl, wrote it among its changes: every
state is seen however slow the machine.
Changes are compared task by task (what happens to different tasks at the same moment may be
seen in either order; one task's changes are seen in order), without times.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli_process import Result, run_mcptask, run_mcptask_during
from tests.clocked_reference_server import (
    ClockedServer,
    clocked_http_server,
    clocked_stdio_server,
)

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
# The script's moments of change (1.5 s and 3 s after the start), as the gaps between them.
GAPS = (1.5, 1.5)
# How often mcptask is shown each state before time moves on: some fifteen rounds in all.
SHOWN = 6
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
WATCH = ("watch", "-o", "jsonl", "--interval", "0.05", "--wait-timeout", "30", "-v")


@pytest.fixture
def script(tmp_path: Path) -> str:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps(SCRIPT), encoding="utf-8")
    return str(path)


def run_script(server: ClockedServer, *args: str) -> Result:
    """`mcptask ARGS` while the server's time moves through the script."""
    reported = "jsonl" in args  # -o jsonl: the changes it writes are read as they come
    return run_mcptask_during(
        lambda watch: server.play(*GAPS, watch=watch, shown=SHOWN, reported=reported), *args
    )


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
def test_a_server_that_lists_is_polled_by_pages(transport: str, ids: bool, script: str) -> None:
    clocked = clocked_http_server if transport == "http" else clocked_stdio_server
    with clocked("--tasks-file", script, "--protocol-eras", "legacy") as server:
        result = run_script(server, *WATCH, *server.target, *(IDS if ids else []))
    assert result.code == 0, result.stderr[-2000:]
    assert changes_per_task(result) == EXPECTED
    # Some fifteen rounds of four tasks: by pages, tasks/get only where the pages cannot tell
    # (a task they show finished, one missing from them), a handful in all.
    assert requests(result, "tasks/list") >= 10
    assert requests(result, "tasks/get") <= 8, requests(result, "tasks/get")


@pytest.mark.parametrize(
    "server_args",
    [
        ("--protocol-eras", "legacy", "--no-list"),
        ("--protocol-eras", "modern"),
    ],
    ids=["2025-11-25 without a list", "2026-07-28"],
)
def test_a_server_without_a_list_is_polled_by_gets(
    server_args: tuple[str, ...], script: str
) -> None:
    with clocked_http_server("--tasks-file", script, *server_args) as server:
        result = run_script(server, *WATCH, "--url", server.url, *IDS)
    assert result.code == 0, result.stderr[-2000:]
    assert changes_per_task(result) == EXPECTED
    assert requests(result, "tasks/list") == 0
    assert requests(result, "tasks/get") >= 20


@pytest.mark.parametrize("lists", [True, False], ids=["pages", "gets"])
def test_exit_status_and_the_final_document_are_the_same_either_way(
    lists: bool, script: str
) -> None:
    with clocked_http_server(
        "--tasks-file", script, "--protocol-eras", "legacy", *([] if lists else ["--no-list"])
    ) as server:
        result = run_script(
            server, "watch", "--url", server.url, *IDS, "-o", "json", "--interval", "0.05",
            "--exit-status", "--protocol", "2025-11-25",
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
def test_a_wait_timeout_ends_the_same_either_way(lists: bool, script: str) -> None:
    # The server's time stands still: nothing changes, however long the processes take.
    with clocked_http_server(
        "--tasks-file", script, "--protocol-eras", "legacy", *([] if lists else ["--no-list"])
    ) as server:
        result = run_mcptask(
            "watch", "--url", server.url, *IDS, "-o", "jsonl", "--interval", "0.2",
            "--wait-timeout", "0.8", "--protocol", "2025-11-25",
        )  # fmt: skip
    assert result.code == 7, result.stderr
    assert changes_per_task(result) == {
        task_id: changes[:1] for task_id, changes in EXPECTED.items()
    }
    assert "timed out with tasks still running" in result.stderr

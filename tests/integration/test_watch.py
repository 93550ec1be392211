"""`mcptask watch` end to end: the real process against the reference server (as a process,
or in the test process on a real socket where tasks change on its manual clock)."""

from __future__ import annotations

import json
import re
import select
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pexpect
import pytest

from tests.cli_process import (
    Result,
    mcptask_argv,
    run_mcptask,
    run_mcptask_during,
    run_mcptask_until,
    spawn_mcptask,
)
from tests.clocked_reference_server import (
    ClockedServer,
    clocked_http_server,
    clocked_stdio_server,
)
from tests.conftest import StartServer
from tests.reference_server_process import stop_process

Step = tuple[float, str, str]


def start_job(url: str, *steps: Step, on_cancel: str | None = None) -> str:
    """Start a scripted task-augmented `long_job` on the server; returns its task id."""
    headers = {"Accept": "application/json, text/event-stream"}
    with httpx.Client(headers=headers, timeout=10) as http:
        init = http.post(
            url,
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tasks": {}},
                    "clientInfo": {"name": "test", "version": "0"},
                },
            },
        )
        session = {
            "Mcp-Session-Id": init.headers["Mcp-Session-Id"],
            "MCP-Protocol-Version": "2025-11-25",
        }
        call = http.post(
            url,
            headers=session,
            json={
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {
                    "name": "long_job",
                    "arguments": {
                        "steps": [list(s) for s in steps],
                        **({"onCancel": on_cancel} if on_cancel else {}),
                    },
                    "task": {"ttl": 600000},
                },
            },
        )
        return str(_result(call)["task"]["taskId"])


def _result(response: httpx.Response) -> Any:
    if response.headers["Content-Type"].startswith("application/json"):
        return response.json()["result"]
    for line in response.text.splitlines():
        if line.startswith("data:") and '"result"' in line:
            return json.loads(line[5:])["result"]
    raise AssertionError(response.text)


def changes(stdout: str) -> list[tuple[str, str | None, str]]:
    """The changes -o jsonl printed (lines of a -v wire log among them left out)."""
    lines = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    return [(line["taskId"], line["previous"], line["status"]) for line in lines]


@pytest.fixture(params=["notify", "no-notify"])
def server(request: pytest.FixtureRequest, reference_server: StartServer) -> str:
    return reference_server(f"--{request.param}", "--poll-interval", "200")


@pytest.fixture(params=["notify", "no-notify"])
def clocked(request: pytest.FixtureRequest) -> Iterator[ClockedServer]:
    """A server whose tasks change only once the watch has seen their state."""
    with clocked_http_server(f"--{request.param}", "--poll-interval", "200") as server:
        yield server


def watch_while(server: ClockedServer, gaps: tuple[float, ...], *args: str) -> Result:
    """`mcptask watch ARGS` while the server's time moves by `gaps`."""
    reported = "jsonl" in args  # -o jsonl: the changes it writes are read as they come
    return run_mcptask_during(
        lambda watch: server.play(*gaps, watch=watch, reported=reported), *args
    )


def test_watch_until_complete_fail_and_input_required(clocked: ClockedServer) -> None:
    done = start_job(clocked.url, (2.0, "completed", "all done"))
    broke = start_job(clocked.url, (2.0, "failed", "it broke"))
    asker = start_job(
        clocked.url,
        (2.0, "input_required", "need a name"),
        (0.8, "working", "thanks"),
        (0.8, "completed", "ok"),
    )
    result = watch_while(
        clocked, (2.0, 0.8, 0.8), "watch", done, broke, asker, *clocked.target, "-o", "jsonl"
    )
    assert result.code == 0, result.stderr
    seen = changes(result.stdout)
    assert (done, "working", "completed") in seen
    assert (broke, "working", "failed") in seen
    asker_moves = [(before, after) for task, before, after in seen if task == asker]
    assert asker_moves == [
        (None, "working"),
        ("working", "input_required"),
        ("input_required", "working"),
        ("working", "completed"),
    ]


def test_exit_status_reports_a_failed_task(clocked: ClockedServer) -> None:
    broke = start_job(clocked.url, (4.0, "failed", "it broke"))
    fine = start_job(clocked.url, (4.0, "completed", "ok"))
    result = watch_while(clocked, (4.0,), "watch", broke, fine, *clocked.target, "--exit-status")
    assert result.code == 7
    assert re.search(rf"{broke}\s+working -> failed\s+it broke", result.stdout)
    only_fine = run_mcptask("watch", fine, *clocked.target, "--exit-status")
    assert only_fine.code == 0


def watch_until_completed(url: str, *ready: str) -> tuple[Result, str]:
    """`watch TASK -v -o jsonl` of a job that runs until cancelled: once the watch has
    written `ready` (output and wire log, in one pipe), another process's cancel makes the
    job complete (onCancel=complete). Returns what the watch did, and the task id."""
    task = start_job(url, (600.0, "completed", "never"), on_cancel="complete")
    result = run_mcptask_until(
        ('"previous":null', *ready),  # the watch has seen the task working
        lambda: run_mcptask("cancel", task, "--url", url),
        *("watch", task, "--url", url, "-v", "-o", "jsonl"),
    )
    return result, task


def test_push_notifications_are_used_when_offered(reference_server: StartServer) -> None:
    # The 2025-11-25 push path: the session's GET stream (test_modern.py covers listen).
    url = reference_server("--notify", "--poll-interval", "5000", "--protocol-eras", "legacy")
    result, _ = watch_until_completed(url, "< GET stream 200")
    assert result.code == 0, result.stdout
    assert "notifications/tasks/status" in result.stdout
    quiet = reference_server("--no-notify", "--poll-interval", "200")
    polled, task = watch_until_completed(quiet)
    assert polled.code == 0
    assert "notifications/tasks/status" not in polled.stdout
    assert (task, "working", "completed") in changes(polled.stdout)


def test_watch_over_stdio_with_scripted_tasks(tmp_path: Path) -> None:
    script = tmp_path / "tasks.json"
    script.write_text(
        json.dumps(
            [
                {"taskId": "quick", "steps": [[2.0, "completed", "done"]]},
                {
                    "taskId": "asker",
                    "steps": [
                        [2.0, "input_required", "?"],
                        [0.8, "working", "ok"],
                        [0.8, "failed", "no"],
                    ],
                },
            ]
        )
    )
    with clocked_stdio_server("--tasks-file", str(script), "--poll-interval", "200") as server:
        result = watch_while(
            server, (2.0, 0.8, 0.8),
            "watch", "quick", "asker", *server.target, "-o", "jsonl", "--exit-status",
        )  # fmt: skip
    assert result.code == 7, result.stderr
    seen = changes(result.stdout)
    assert ("quick", "working", "completed") in seen
    assert ("asker", "working", "input_required") in seen
    assert ("asker", "working", "failed") in seen


def test_task_cancelled_by_another_process_while_watching(server: str) -> None:
    task = start_job(server, (600.0, "completed", "never"))
    watcher = subprocess.Popen(
        [*mcptask_argv(), "watch", task, "--url", server, "-o", "jsonl", "--exit-status"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert watcher.stdout is not None
        first = watcher.stdout.readline()
        assert json.loads(first)["status"] == "working"
        cancelled = run_mcptask("cancel", task, "--url", server, "-o", "json")
        assert cancelled.code == 0, cancelled.stderr
        rest, stderr = watcher.communicate(timeout=30)
    finally:
        stop_process(watcher)
    assert watcher.returncode == 7, stderr
    assert (task, "working", "cancelled") in changes(rest)


def test_vanished_task_is_shown_as_gone() -> None:
    with clocked_http_server(
        "--seed", "working=1", "--ttl", "3000", "--poll-interval", "200"
    ) as server:
        result = watch_while(server, (3.0,), "watch", "working-001", *server.target, "-o", "jsonl")
    assert result.code == 0, result.stderr
    assert ("working-001", "working", "gone") in changes(result.stdout)


def test_watch_all_listed_tasks_until_the_timeout(reference_server: StartServer) -> None:
    url = reference_server("--seed", "working=2,completed=3", "--poll-interval", "200")
    result = run_mcptask("watch", "--url", url, "-o", "jsonl", "--wait-timeout", "1")
    assert result.code == 7
    assert sorted(task for task, _, _ in changes(result.stdout)) == ["working-001", "working-002"]
    assert "timed out" in result.stderr


def test_unreachable_server_is_retried_then_reported(reference_server: StartServer) -> None:
    url = reference_server("--seed", "working=1", "--poll-interval", "200")
    watcher = subprocess.Popen(
        [*mcptask_argv(), "watch", "working-001", "--url", url, "-o", "jsonl", "--retry-for", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert watcher.stdout is not None
        watcher.stdout.readline()
        reference_server.processes[url].kill()
        _, stderr = watcher.communicate(timeout=30)
    finally:
        stop_process(watcher)
    assert watcher.returncode == 3
    assert "Traceback" not in stderr
    assert len([line for line in stderr.splitlines() if line.strip()]) == 1


def test_ctrl_c_in_a_terminal_restores_it(reference_server: StartServer) -> None:
    url = reference_server("--seed", "working=2", "--poll-interval", "200")
    child = spawn_mcptask(
        "watch", "--url", url, term="xterm-256color", color=True, dimensions=(30, 120)
    )
    try:
        child.expect("working-002")
        child.expect("polling every")
        child.sendintr()
        child.expect(pexpect.EOF)
        screen = child.before or ""
    finally:
        child.close()
    assert child.exitstatus == 130
    assert "Traceback" not in screen
    # Rich hides the cursor while live; it must be shown again on the way out.
    assert "\x1b[?25h" in screen


def test_live_table_shows_what_fits_the_terminal(reference_server: StartServer) -> None:
    url = reference_server("--seed", "working=40", "--poll-interval", "200")
    child = spawn_mcptask(
        "watch", "--url", url, term="xterm-256color", color=True, dimensions=(15, 120)
    )
    try:
        child.expect(r"… (\d+) more")
        hidden = int(child.match.group(1))
        child.expect("40 working")
        child.sendintr()
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert 40 - hidden <= 15
    assert child.exitstatus == 130


@pytest.mark.parametrize("output", ["jsonl", "table"])
def test_a_reader_that_leaves_ends_the_watch(
    shared_reference_server: StartServer, output: str
) -> None:
    # `watch | head -1`: the tasks stay working for minutes, yet the watch ends at once.
    url = shared_reference_server("--seed", "working=3")
    process = subprocess.Popen(
        [*mcptask_argv(), "watch", "--url", url, "-o", output, "--interval", "0.2"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    try:
        # A deadline for the first line: a watch that prints nothing must fail, not hang.
        ready, _, _ = select.select([process.stdout], [], [], 20)
        assert ready, "watch printed nothing within 20 s"
        assert b"working-00" in process.stdout.readline()
        process.stdout.close()  # the reader is gone
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.stderr is not None
    assert process.stderr.read() == b""

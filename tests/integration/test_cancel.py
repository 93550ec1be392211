"""`mcptask cancel` end to end: the real process against the reference server (HTTP and stdio)."""

from __future__ import annotations

import collections
import json
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pexpect
import pytest

from tests.cli_process import (
    Result,
    mcptask_argv,
    reference_stdio_command,
    run_mcptask,
    spawn_mcptask,
)
from tests.conftest import StartServer
from tests.reference_server_process import stop_process

MANY = "working=150,input_required=50,completed=10,failed=5,cancelled=5"


Options = Callable[..., list[str]]


@pytest.fixture(params=["http", "stdio"])
def target(request: pytest.FixtureRequest, reference_server: StartServer) -> Options:
    """A function giving the `--url`/`--server` options for a server started with `args`."""

    def make(*args: str) -> list[str]:
        if request.param == "http":
            return ["--url", reference_server(*args)]
        return ["--server", reference_stdio_command(*args)]

    return make


def outcomes(result: Result) -> dict[str, tuple[str, str | None]]:
    return {r["taskId"]: (r["outcome"], r["status"]) for r in result.json()["results"]}


def test_cancel_one_working_task(target: Options) -> None:
    result = run_mcptask("cancel", "working-001", *target("--seed", "working=2"), "-o", "json")
    assert result.code == 0, result.stderr
    assert outcomes(result) == {"working-001": ("cancelled", "cancelled")}
    assert result.json()["summary"]["cancelled"] == 1


def test_table_output_has_a_summary(reference_server: StartServer) -> None:
    url = reference_server("--seed", "working=1,completed=1")
    result = run_mcptask("cancel", "working-001", "completed-001", "--url", url, "-o", "table")
    assert result.code == 0, result.stderr
    assert "already-finished" in result.stdout
    assert "2 tasks: 1 cancelled, 1 already-finished" in result.stdout


def test_all_working_over_many_pages(reference_server: StartServer) -> None:
    url = reference_server("--seed", MANY, "--page-size", "30")
    result = run_mcptask("cancel", "--all-working", "--yes", "--url", url, "-o", "json")
    assert result.code == 0, result.stderr
    results = result.json()["results"]
    assert len(results) == 200
    assert len({r["taskId"] for r in results}) == 200
    assert {r["outcome"] for r in results} == {"cancelled"}
    assert all(not r["taskId"].startswith(("completed", "failed")) for r in results)
    after = run_mcptask("list", "--url", url, "-o", "json").json()["tasks"]
    statuses = collections.Counter(task["status"] for task in after)
    assert statuses == {"cancelled": 205, "completed": 10, "failed": 5}


def test_all_working_over_stdio_with_status_filter() -> None:
    server = reference_stdio_command("--seed", "working=3,input_required=2", "--page-size", "2")
    result = run_mcptask(
        "cancel", "--all-working", "--status", "input_required", "--server", server, "-o", "ids"
    )
    assert result.code == 0, result.stderr
    assert sorted(result.stdout.split()) == ["input_required-001", "input_required-002"]


def test_finished_and_unknown_ids(target: Options) -> None:
    result = run_mcptask(
        "cancel",
        "failed-001",
        "nope",
        "working-001",
        *target("--seed", "working=1,failed=1"),
        "-o",
        "json",
    )
    assert result.code == 6
    assert outcomes(result) == {
        "failed-001": ("already-finished", "failed"),
        "nope": ("not-found", None),
        "working-001": ("cancelled", "cancelled"),
    }
    assert result.json()["exitCode"] == 6


def test_task_that_finishes_as_its_cancel_arrives(
    target: Options,
) -> None:
    options = target("--seed", "working=3", "--complete-on-cancel", "working-002")
    result = run_mcptask("cancel", "--all-working", "--yes", *options, "-o", "json")
    assert result.code == 0, result.stderr
    found = outcomes(result)
    assert found["working-002"] == ("already-finished", "completed")
    assert found["working-001"] == ("cancelled", "cancelled")


def test_lenient_server_that_succeeds_on_a_finished_task(reference_server: StartServer) -> None:
    url = reference_server("--seed", "completed=1", "--cancel-mode", "lenient")
    result = run_mcptask("cancel", "completed-001", "--url", url, "-o", "json")
    assert result.code == 0
    assert outcomes(result) == {"completed-001": ("already-finished", "completed")}


def test_cooperative_cancel_is_confirmed_by_polling(reference_server: StartServer) -> None:
    url = reference_server(
        "--seed",
        "working=2",
        "--cancel-mode",
        "cooperative",
        "--cancel-delay",
        "600",
        "--poll-interval",
        "100",
    )
    result = run_mcptask("cancel", "working-001", "working-002", "--url", url, "-o", "json")
    assert result.code == 0, result.stderr
    assert set(outcomes(result).values()) == {("cancelled", "cancelled")}


def test_cancel_that_never_settles_is_pending(reference_server: StartServer) -> None:
    url = reference_server(
        "--seed",
        "working=1",
        "--cancel-mode",
        "cooperative",
        "--cancel-delay",
        "-1",
        "--poll-interval",
        "100",
    )
    result = run_mcptask(
        "cancel", "working-001", "--url", url, "--wait-timeout", "0.5", "-o", "json"
    )
    assert result.code == 7
    assert outcomes(result) == {"working-001": ("pending", "working")}


def test_no_wait_sends_no_get(reference_server: StartServer) -> None:
    # 2025-11-25: the cancel answer itself says `cancelled` (2026-07-28 only acknowledges).
    url = reference_server("--seed", "working=1", "--protocol-eras", "legacy")
    result = run_mcptask("cancel", "working-001", "--url", url, "--no-wait", "-o", "json", "-v")
    assert result.code == 0
    assert outcomes(result) == {"working-001": ("cancelled", "cancelled")}
    assert '"tasks/get"' not in result.stderr


def test_ids_from_stdin(target: Options) -> None:
    ids = "working-002\n\n# a comment\nworking-001\nworking-002\n"
    result = run_mcptask("cancel", "-", *target("--seed", "working=3"), "-o", "jsonl", stdin=ids)
    assert result.code == 0, result.stderr
    lines = [line for line in result.stdout.splitlines() if line]
    assert [line.count('"taskId"') for line in lines] == [1, 1]
    assert '"working-002"' in lines[0]
    assert '"working-001"' in lines[1]


def test_ids_from_a_file(reference_server: StartServer, tmp_path: Path) -> None:
    path = tmp_path / "ids.txt"
    path.write_text("working-001\n# done\ncompleted-001\n")
    url = reference_server("--seed", "working=1,completed=1")
    result = run_mcptask("cancel", "--from-file", str(path), "--url", url, "-o", "json")
    assert result.code == 0, result.stderr
    assert set(outcomes(result)) == {"working-001", "completed-001"}


def test_dry_run_sends_no_cancel(target: Options) -> None:
    options = target("--seed", "working=2,completed=1")
    result = run_mcptask("cancel", "--all-working", "--dry-run", *options, "-o", "json", "-v")
    assert result.code == 0, result.stderr
    document = result.json()
    assert document["dryRun"] is True
    assert sorted(task["taskId"] for task in document["tasks"]) == ["working-001", "working-002"]
    assert '"method":"tasks/cancel"' not in result.stderr


def test_selector_matching_nothing_is_success(reference_server: StartServer) -> None:
    url = reference_server("--seed", "completed=2")
    result = run_mcptask("cancel", "--all-working", "--url", url, "-o", "json")
    assert result.code == 0
    assert result.json()["results"] == []


def test_without_cancel_capability_nothing_is_sent(reference_server: StartServer) -> None:
    url = reference_server("--seed", "working=1", "--no-cancel", "--protocol-eras", "legacy")
    result = run_mcptask("cancel", "working-001", "--url", url, "-v")
    assert result.code == 5
    assert result.stdout == ""
    assert "does not offer tasks/cancel" in result.stderr
    assert '"method":"tasks/cancel"' not in result.stderr


def test_cancel_method_missing_in_modern_stops_the_run(reference_server: StartServer) -> None:
    # 2026-07-28 has no cancel capability of its own: the server's 404/-32601 decides.
    url = reference_server("--seed", "working=2", "--no-cancel", "--protocol-eras", "modern")
    result = run_mcptask("cancel", "working-001", "working-002", "--url", url, "-o", "json")
    assert result.code == 5
    # The first cancel was sent and refused (an error, not "not attempted"); the second was
    # never sent.
    assert outcomes(result) == {"working-001": ("error", None), "working-002": ("skipped", None)}
    assert "tasks/cancel" in result.json()["error"]


def test_all_working_without_list_points_to_ids(reference_server: StartServer) -> None:
    url = reference_server("--seed", "working=1", "--no-list")
    result = run_mcptask("cancel", "--all-working", "--url", url)
    result.assert_one_line_error(5, "--all-working needs tasks/list", "--from-file")


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        ((), "nothing to cancel"),
        (("--status", "working", "x"), "--all-working"),
        (("--from-file", "/nonexistent/ids"), "cannot read"),
    ],
)
def test_cancel_usage_errors(args: tuple[str, ...], fragment: str) -> None:
    result = run_mcptask("cancel", *args, "--url", "http://127.0.0.1:9/mcp")
    result.assert_one_line_error(2, fragment)


# -- interruption ------------------------------------------------------------------------------


def _start_cancel(options: list[str], output: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*mcptask_argv(), "cancel", "--all-working", "--yes", *options, "-o", output],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def _first_cancel_seen(options: list[str], deadline: float) -> None:
    """Wait until the server shows at least one cancelled task (the run is under way)."""
    while time.monotonic() < deadline:
        listed = run_mcptask("list", "--status", "cancelled", *options, "-o", "ids")
        if listed.stdout.strip():
            return
        time.sleep(0.2)
    raise AssertionError("the cancel run did not start")


def test_sigint_partway_reports_every_task_once_in_json(reference_server: StartServer) -> None:
    options = ["--url", reference_server("--seed", "working=200", "--latency", "25")]
    process = _start_cancel(options, "json")
    try:
        _first_cancel_seen(options, time.monotonic() + 30)
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        stop_process(process)
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    document = json.loads(stdout)
    ids = [r["taskId"] for r in document["results"]]
    assert sorted(ids) == sorted(f"working-{n:03d}" for n in range(1, 201))
    seen = collections.Counter(r["outcome"] for r in document["results"])
    assert set(seen) == {"cancelled", "skipped"}
    assert seen["cancelled"] >= 1
    assert seen["skipped"] >= 1
    assert document["interrupted"] is True


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_sigint_partway_streams_every_task_once_in_jsonl(
    reference_server: StartServer, transport: str
) -> None:
    seed = ("--seed", "working=200", "--latency", "25")
    options = (
        ["--url", reference_server(*seed)]
        if transport == "http"
        else ["--server", reference_stdio_command(*seed)]
    )
    process = _start_cancel(options, "jsonl")
    try:
        assert process.stdout is not None
        first = [process.stdout.readline() for _ in range(3)]
        process.send_signal(signal.SIGINT)
        # Through the same buffer as readline (communicate would read the pipe past what
        # readline has already buffered, and lose those lines).
        rest = process.stdout.read()
        _, stderr = process.communicate(timeout=60)
    finally:
        stop_process(process)
    assert process.returncode == 130, stderr
    lines = [json.loads(line) for line in first + rest.splitlines() if line.strip()]
    ids = [line["taskId"] for line in lines]
    assert len(ids) == 200
    assert len(set(ids)) == 200
    outcomes_seen = collections.Counter(line["outcome"] for line in lines)
    assert set(outcomes_seen) == {"cancelled", "skipped"}
    assert outcomes_seen["skipped"] >= 1


# -- the prompt on a terminal ------------------------------------------------------------------


@pytest.mark.parametrize(("answer", "code", "still_working"), [("n", 130, 3), ("y", 0, 0)])
def test_bulk_cancel_asks_at_a_terminal(
    reference_server: StartServer, answer: str, code: int, still_working: int
) -> None:
    url = reference_server("--seed", "working=3")
    child = spawn_mcptask("cancel", "--all-working", "--url", url)
    try:
        child.expect(r"Cancel these 3 tasks\?")
        child.sendline(answer)
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == code
    working = run_mcptask("list", "--url", url, "--status", "working", "-o", "ids")
    assert len(working.stdout.split()) == still_working


def test_a_bulk_cancel_reported_as_json_to_a_pipe_never_loads_rich(
    reference_server: StartServer,
) -> None:
    # Past the progress bar's threshold, but stderr is a pipe: no bar, and Rich (some 20 ms
    # to import) is not even asked whether stderr is a terminal.
    url = reference_server("--seed", "working=12")
    result = run_mcptask(
        "cancel",
        "--all-working",
        "--yes",
        "--url",
        url,
        "-o",
        "json",
        env={"PYTHONPROFILEIMPORTTIME": "1", "FORCE_COLOR": "", "TTY_COMPATIBLE": ""},
    )
    assert result.code == 0, result.stderr[-2000:]
    assert result.json()["summary"]["cancelled"] == 12
    imported = [line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines()]
    assert "mcptask.operations.cancel" in imported  # the import log is there to be read
    assert not [name for name in imported if name.split(".")[0] == "rich"]

"""`mcptask start` and `mcptask result` end to end: the real executable against the reference
server, in both eras (single-era servers: `--protocol-eras legacy|modern`), over HTTP and
stdio."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.cli_process import mcptask_argv, reference_stdio_command, run_mcptask
from tests.conftest import StartServer

from .known_helpers import MakeTarget, Target, make_target_factory, task_id_of

ALL = ["legacy-http", "legacy-stdio", "modern-http", "modern-stdio"]
HTTP = ["legacy-http", "modern-http"]


@pytest.fixture
def target(
    request: pytest.FixtureRequest, reference_server: StartServer, tmp_path: Path
) -> MakeTarget:
    return make_target_factory(request, reference_server, tmp_path)


# -- start ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", ALL, indirect=True)
def test_start_prints_and_records_the_task(target: MakeTarget) -> None:
    server = target()
    started = server.run("start", "long_job", "seconds:=60", "message=from the test", "-o", "json")
    task_id = task_id_of(started)
    document = started.json()
    assert document["tool"] == "long_job"
    assert document["task"]["status"] == "working"
    assert document["task"]["statusMessage"] == "from the test"
    assert document["result"] is None
    record = server.recorded()
    assert list(record) == [task_id]
    assert (record[task_id].via, record[task_id].tool) == ("tools/call", "long_job")
    if server.era == "legacy" and server.transport == "http":
        # the session that owns the task is kept (no DELETE) and recorded
        assert document["sessionId"]
        assert record[task_id].session_id == document["sessionId"]
    else:
        assert document["sessionId"] is None
        assert record[task_id].session_id is None
    ids = server.run("start", "long_job", "seconds:=60", "-o", "ids")
    assert ids.code == 0, ids.stderr
    assert ids.stdout.strip() in server.recorded()
    assert len(ids.stdout.splitlines()) == 1


@pytest.mark.parametrize("target", ALL, indirect=True)
def test_start_watch_follows_the_task_to_its_end(target: MakeTarget) -> None:
    server = target()
    result = server.run("start", "long_job", "seconds:=0.5", "--watch", "-o", "jsonl")
    assert result.code == 0, result.stderr
    first, *changes = [json.loads(line) for line in result.stdout.splitlines()]
    task_id = first["task"]["taskId"]
    assert {change["taskId"] for change in changes} == {task_id}
    assert changes[-1]["status"] == "completed"
    assert task_id in server.recorded()
    failing = server.run(
        "start", "long_job", "seconds:=0.2", "outcome=failed", "--watch", "--exit-status"
    )
    assert failing.code == 7, failing.stderr
    silent = server.run("start", "long_job", "seconds:=0.2", "--watch", "-o", "ids")
    assert silent.code == 0, silent.stderr
    assert silent.stdout.strip() in server.recorded()


@pytest.mark.parametrize("target", ALL, indirect=True)
def test_start_checks_arguments_against_the_schema_and_sends_nothing(target: MakeTarget) -> None:
    server = target()
    wrong_type = server.run("start", "long_job", "seconds=abc")
    wrong_type.assert_one_line_error(
        2, "seconds: 'abc' is not of type 'number'", "nothing was sent"
    )
    unknown = server.run("start", "no_such_tool")
    unknown.assert_one_line_error(2, "no tool 'no_such_tool'", "long_job")
    assert server.recorded() == {}


@pytest.mark.parametrize("target", ["legacy-http"], indirect=True)
def test_start_refuses_each_kind_of_bad_argument(target: MakeTarget) -> None:
    """Once: the tool's schema reached the client in each era and over each transport above;
    what it refuses after that does not depend on either."""
    server = target()
    wrong_value = server.run("start", "long_job", "outcome=maybe")
    wrong_value.assert_one_line_error(2, "outcome: 'maybe' is not one of")
    malformed = server.run("start", "long_job", "seconds")
    malformed.assert_one_line_error(2, "neither KEY=VALUE")
    bad_json = server.run("start", "long_job", "seconds:=five")
    bad_json.assert_one_line_error(2, "not valid JSON")
    assert server.recorded() == {}


@pytest.mark.parametrize("target", ALL, indirect=True)
def test_args_option_and_file(target: MakeTarget, tmp_path: Path) -> None:
    server = target()
    arguments = tmp_path / "args.json"
    arguments.write_text(json.dumps({"seconds": 60, "message": "from a file"}))
    started = server.run("start", "long_job", "--args", f"@{arguments}", "-o", "json")
    assert started.json()["task"]["statusMessage"] == "from a file"
    inline = server.run(
        "start", "long_job", "--args", '{"seconds": 60}', "message=item", "-o", "json"
    )
    assert inline.json()["task"]["statusMessage"] == "item"


@pytest.mark.parametrize("target", HTTP, indirect=True)
def test_a_tool_that_forbids_tasks_or_a_call_run_at_once(target: MakeTarget) -> None:
    server = target("--conformance-fixtures")
    greeted = server.run("start", "greet", "name=Ada")
    if server.era == "legacy":
        # greet's execution.taskSupport is absent, which means forbidden: refused, unsent
        greeted.assert_one_line_error(5, "tool 'greet' does not take task-augmented calls")
    else:
        # 2026-07-28: the server decides per call, and runs greet at once
        assert greeted.code == 0, greeted.stderr
        assert "without making a task" in greeted.stderr
        document = server.run("start", "greet", "name=Ada", "-o", "json").json()
        assert document["task"] is None
        assert document["result"]["content"][0]["text"] == "Hello, Ada!"
    assert server.recorded() == {}


@pytest.mark.parametrize("target", ["legacy-http"], indirect=True)
def test_ttl_is_asked_for_in_2025_11_25(target: MakeTarget) -> None:
    server = target()
    document = server.run("start", "long_job", "seconds:=60", "--ttl", "90", "-o", "json").json()
    assert document["task"]["ttl"] == 90_000
    (task,) = server.recorded().values()
    assert task.ttl_ms == 90_000
    assert task.expires_at is not None


@pytest.mark.parametrize("target", ["modern-http"], indirect=True)
def test_ttl_cannot_be_asked_for_in_2026_07_28(target: MakeTarget) -> None:
    result = target().run("start", "long_job", "seconds:=60", "--ttl", "90", "-o", "ids")
    assert result.code == 0, result.stderr
    assert "--ttl was not sent" in result.stderr


# -- result ------------------------------------------------------------------------------------


@pytest.mark.parametrize("target", HTTP, indirect=True)
def test_result_of_each_kind_of_ending(target: MakeTarget) -> None:
    server = target("--conformance-fixtures")
    done = task_id_of(server.run("start", "long_job", "seconds:=0.2", "-o", "json"))
    table = server.run("result", done, "-o", "table")
    assert table.code == 0, table.stderr
    assert table.stdout.strip() == "long_job completed after 0.2 s"
    document = server.run("result", done, "-o", "json").json()
    assert document["outcome"] == "completed"
    assert document["result"]["content"] == [
        {"type": "text", "text": "long_job completed after 0.2 s"}
    ]
    # a tool that reports an error (isError): exit 9 whatever status the server gave the task
    tool_error = task_id_of(server.run("start", "failing_job", "seconds:=0.1", "-o", "json"))
    failed_tool = server.run("result", tool_error, "-o", "json")
    assert failed_tool.code == 9, failed_tool.stderr
    assert failed_tool.json()["outcome"] == "tool-error"
    assert failed_tool.json()["result"]["isError"] is True
    legacy_failure = task_id_of(
        server.run("start", "long_job", "seconds:=0.1", "outcome=failed", "-o", "json")
    )
    # long_job's failure: `failed` with an isError result in 2025-11-25; in 2026-07-28,
    # where `failed` means a JSON-RPC error, the reference server inlines an error instead
    assert server.run("result", legacy_failure).code == (9 if server.era == "legacy" else 10)
    # a task whose request ended in a JSON-RPC error
    broken = task_id_of(server.run("start", "protocol_error_job", "seconds:=0.1", "-o", "json"))
    failed = server.run("result", broken, "-o", "json")
    assert failed.code == 10, failed.stderr
    assert failed.json()["outcome"] == "failed"
    assert failed.json()["error"]["code"] == -32603
    # cancelled
    stopped = task_id_of(server.run("start", "long_job", "seconds:=60", "-o", "json"))
    assert server.run("cancel", stopped).code == 0
    cancelled = server.run("result", stopped)
    assert cancelled.code == 11
    assert "was cancelled" in cancelled.stderr


@pytest.mark.parametrize("target", HTTP, indirect=True)
def test_result_waits_within_its_timeout(target: MakeTarget) -> None:
    server = target()
    slow = task_id_of(server.run("start", "long_job", "seconds:=60", "-o", "json"))
    # The job runs 60 s: "pending" (not a result) is the proof that result stopped waiting.
    pending = server.run("result", slow, "--wait-timeout", "0.5", "-o", "json")
    assert pending.code == 7, pending.stderr
    assert pending.json()["outcome"] == "pending"
    assert "still working" in pending.stderr
    soon = task_id_of(server.run("start", "long_job", "seconds:=1", "-o", "json"))
    waited = server.run("result", soon, "--wait-timeout", "30")
    assert waited.code == 0, waited.stderr
    unknown = server.run("result", "no-such-task")
    unknown.assert_one_line_error(6, "no-such-task not found")


@pytest.mark.parametrize("target", ["legacy-stdio", "modern-stdio"], indirect=True)
def test_result_over_stdio_of_seeded_tasks(target: MakeTarget) -> None:
    server = target("--seed", "completed=1,failed=1,cancelled=1")
    assert server.run("result", "completed-001").code == 0
    # The seeded failure: a tool result with isError in 2025-11-25, a JSON-RPC error in
    # 2026-07-28, as the reference server spells each era.
    assert server.run("result", "failed-001").code == (9 if server.era == "legacy" else 10)
    assert server.run("result", "cancelled-001").code == 11


# -- a Ctrl-C during start --watch never loses the task ----------------------------------------


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_sigint_during_start_watch_the_id_was_printed_and_recorded(
    transport: str, reference_server: StartServer, tmp_path: Path
) -> None:
    option = (
        ["--url", reference_server()]
        if transport == "http"
        else ["--server", reference_stdio_command()]
    )
    state = tmp_path / "state"
    env = {"MCPTASK_STATE_DIR": str(state)}
    target = Target("modern", transport, option, state)
    process = subprocess.Popen(
        [*mcptask_argv(), "start", "long_job", "seconds:=120", "--watch", "-o", "jsonl", *option],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=_process_env(env),
    )
    try:
        assert process.stdout is not None
        first = json.loads(process.stdout.readline())
        task_id = first["task"]["taskId"]
        # recorded before it was printed
        assert task_id in target.recorded()
        time.sleep(0.5)  # inside the watch now
        process.send_signal(signal.SIGINT)
        _out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.returncode == 130, err
    assert task_id in target.recorded()
    if transport == "http":
        # the task is still there and can be picked up by the next command
        assert run_mcptask("get", task_id, *option, env=env).code == 0


def _process_env(extra: dict[str, str]) -> dict[str, str]:
    import os
    import sys

    environment = {k: v for k, v in os.environ.items() if not k.startswith("MCPTASK_")}
    environment.update({"NO_COLOR": "1", "COLUMNS": "200"})
    environment["PATH"] = os.pathsep.join(
        [str(Path(sys.executable).parent), environment.get("PATH", "")]
    )
    environment.update(extra)
    return environment

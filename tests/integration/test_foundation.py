"""`connect`, `list`, `get` and every error path: the real mcptask process, a real server."""

from __future__ import annotations

import json
import signal
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.cli_process import mcptask_argv, reference_stdio_command, run_mcptask, unused_port
from tests.clocked_reference_server import clocked_http_server
from tests.conftest import StartServer
from tests.reference_server_process import stop_process

SEED = "working=3,completed=2,failed=1,input_required=1"


@pytest.fixture(params=["sse", "json"])
def seeded_url(request: pytest.FixtureRequest, shared_reference_server: StartServer) -> str:
    return shared_reference_server("--seed", SEED, "--page-size", "2", "--answer", request.param)


# -- connect -----------------------------------------------------------------------------------


def test_connect_http_reports_server_era_session_and_operations(seeded_url: str) -> None:
    result = run_mcptask("connect", seeded_url, "-o", "json", "--protocol", "2025-11-25")
    assert result.code == 0, result.stderr
    document = result.json()
    assert document["server"]["name"] == "mcptask-reference"
    assert document["protocolVersion"] == "2025-11-25"
    assert document["era"] == "legacy"
    assert document["transport"] == "http"
    assert document["sessionId"]
    assert document["tasks"] == {
        "supported": True,
        "list": True,
        "cancel": True,
        "toolCalls": True,
    }


def test_connect_stdio_with_a_server_command() -> None:
    result = run_mcptask("connect", "--server", reference_stdio_command(), "-o", "json")
    assert result.code == 0, result.stderr
    assert result.json()["transport"] == "stdio"
    assert result.json()["sessionId"] is None


def test_connect_table_says_plainly_when_no_tasks(shared_reference_server: StartServer) -> None:
    url = shared_reference_server("--no-tasks")
    result = run_mcptask("connect", "--url", url, "-o", "table")
    assert result.code == 0
    assert "not offered" in result.stdout
    assert "offers no tasks" in result.stderr


def test_untrusted_server_text_is_neither_markup_nor_escapes(
    reference_server: StartServer,
) -> None:
    url = reference_server("--server-name", "[bold red]evil[/] \x1b[31mred\x1b]0;title\x07")
    result = run_mcptask("connect", url, "-o", "table")
    assert result.code == 0, result.stderr
    assert "[bold red]evil[/]" in result.stdout
    assert "\x1b" not in result.stdout
    assert "\x07" not in result.stdout


# -- list --------------------------------------------------------------------------------------


def test_list_follows_every_page(seeded_url: str) -> None:
    result = run_mcptask("list", "--url", seeded_url, "-o", "json")
    assert result.code == 0, result.stderr
    document = result.json()
    assert document["count"] == 7
    assert {task["taskId"] for task in document["tasks"]} >= {"working-001", "failed-001"}


def test_list_filters_limits_and_prints_ids(seeded_url: str) -> None:
    result = run_mcptask(
        "list", "--url", seeded_url, "--status", "working,input_required", "-o", "ids"
    )
    assert result.code == 0, result.stderr
    assert sorted(result.stdout.split()) == [
        "input_required-001",
        "working-001",
        "working-002",
        "working-003",
    ]
    limited = run_mcptask("list", "--url", seeded_url, "--limit", "2", "-o", "jsonl")
    assert len(limited.stdout.splitlines()) == 2


def test_list_over_stdio() -> None:
    result = run_mcptask("list", "--server", reference_stdio_command("--seed", SEED), "-o", "json")
    assert result.code == 0, result.stderr
    assert result.json()["count"] == 7


def test_empty_list_explains_itself(shared_reference_server: StartServer) -> None:
    result = run_mcptask("list", "--url", shared_reference_server(), "-o", "json")
    assert result.code == 0
    assert result.json() == {"tasks": [], "count": 0}
    assert "--session-id" in result.stderr


def test_session_scoped_tasks_are_visible_only_when_joining(
    reference_server: StartServer,
) -> None:
    url = reference_server("--scope", "session")
    session_id, task_id = _start_task_in_new_session(url)
    fresh = run_mcptask("list", "--url", url, "-o", "ids")
    assert task_id not in fresh.stdout
    joined = run_mcptask("list", "--url", url, "--session-id", session_id, "-o", "ids")
    assert joined.code == 0, joined.stderr
    assert joined.stdout.split() == [task_id]
    got = run_mcptask("get", task_id, "--url", url, "--session-id", session_id, "-o", "json")
    assert got.json()["status"] == "working"
    # mcptask must not end a session it joined: the task is still there afterwards.
    again = run_mcptask("list", "--url", url, "--session-id", session_id, "-o", "ids")
    assert again.stdout.split() == [task_id]


def test_joined_session_that_ended_is_reported(reference_server: StartServer) -> None:
    url = reference_server("--scope", "session")
    session_id, _ = _start_task_in_new_session(url, end=True)
    result = run_mcptask("list", "--url", url, "--session-id", session_id)
    result.assert_one_line_error(6, "has ended")


def test_expired_session_is_reinitialized(reference_server: StartServer) -> None:
    url = reference_server("--seed", "working=5", "--page-size", "1", "--drop-session-after", "3")
    result = run_mcptask("list", "--url", url, "-o", "ids")
    assert result.code == 0, result.stderr
    assert len(result.stdout.split()) == 5


# -- get ---------------------------------------------------------------------------------------


def test_get_one_task(seeded_url: str) -> None:
    result = run_mcptask("get", "failed-001", "--url", seeded_url, "-o", "json")
    assert result.code == 0, result.stderr
    task = result.json()
    assert task["taskId"] == "failed-001"
    assert task["status"] == "failed"
    assert "createdAt" in task


def test_get_table_over_stdio() -> None:
    result = run_mcptask(
        "get", "working-002", "--server", reference_stdio_command("--seed", SEED), "-o", "table"
    )
    assert result.code == 0, result.stderr
    assert "working-002" in result.stdout
    assert "working" in result.stdout


def test_get_unknown_task(seeded_url: str) -> None:
    run_mcptask("get", "nope", "--url", seeded_url).assert_one_line_error(6, "nope", "not found")


# -- capability gate ---------------------------------------------------------------------------


def test_list_without_the_list_capability(reference_server: StartServer) -> None:
    url = reference_server("--no-list")
    result = run_mcptask("list", "--url", url, "-v")
    assert result.code == 5
    assert result.stdout == ""
    assert "offers: get, cancel" in result.stderr
    assert '"tasks/list"' not in result.stderr  # nothing was sent


def test_get_without_any_tasks_capability(shared_reference_server: StartServer) -> None:
    result = run_mcptask("get", "x", "--url", shared_reference_server("--no-tasks"))
    result.assert_one_line_error(5, "offers no tasks")


# -- transport and protocol errors -------------------------------------------------------------


def test_connection_refused() -> None:
    result = run_mcptask("list", "--url", f"http://127.0.0.1:{unused_port()}/mcp")
    result.assert_one_line_error(3, "cannot connect")


def test_server_too_slow_to_answer(reference_server: StartServer) -> None:
    url = reference_server("--seed", "working=1", "--latency", "3000")
    result = run_mcptask("get", "working-001", "--url", url, "--timeout", "0.5")
    result.assert_one_line_error(3, "did not answer in time")


def test_stdio_server_too_slow_to_answer() -> None:
    server = reference_stdio_command("--seed", "working=1", "--latency", "3000")
    result = run_mcptask("get", "working-001", "--server", server, "--timeout", "0.5")
    result.assert_one_line_error(3, "did not answer tasks/get within 0.5s")


def test_runs_as_a_python_module(seeded_url: str) -> None:
    import subprocess
    import sys

    completed = subprocess.run(
        [sys.executable, "-m", "mcptask", "get", "working-001", "--url", seeded_url, "-o", "ids"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split() == ["working-001"]


def test_unauthorized_shows_the_challenge(reference_server: StartServer) -> None:
    url = reference_server("--require-token", "right-token")
    result = run_mcptask("list", "--url", url, env={"MCPTASK_TOKEN": "wrong-token"})
    result.assert_one_line_error(4, "HTTP 401", 'realm="mcptask-reference"')
    assert "wrong-token" not in result.stderr


def test_forbidden(reference_server: StartServer) -> None:
    url = reference_server("--require-token", "good", "--forbid-token", "weak")
    result = run_mcptask("list", "--url", url, env={"MCPTASK_TOKEN": "weak"})
    result.assert_one_line_error(4, "HTTP 403", "insufficient_scope")


def test_token_is_sent_and_never_logged(reference_server: StartServer) -> None:
    url = reference_server("--require-token", "t0ken-value", "--seed", "working=1")
    result = run_mcptask(
        "list", "--url", url, "-o", "ids", "-v", env={"MCPTASK_TOKEN": "t0ken-value"}
    )
    assert result.code == 0, result.stderr
    assert result.stdout.split() == ["working-001"]
    assert "t0ken-value" not in result.stderr + result.stdout
    assert "POST" in result.stderr  # the wire log is there


@pytest.mark.parametrize(
    ("fault", "code", "fragment"),
    [
        ("not-json", 8, "not valid JSON"),
        ("not-jsonrpc", 8, "not a JSON-RPC"),
        ("wrong-content-type", 8, "content type"),
        ("wrong-id", 8, "with the id"),
        ("drop", 3, "closed the connection"),
    ],
)
def test_protocol_faults_over_http(
    reference_server: StartServer, fault: str, code: int, fragment: str
) -> None:
    url = reference_server("--seed", "working=1", "--fault", fault, "--answer", "json")
    run_mcptask("get", "working-001", "--url", url).assert_one_line_error(code, fragment)


@pytest.mark.parametrize(
    ("fault", "code", "fragment"),
    [
        ("not-json", 8, "not JSON"),
        ("not-jsonrpc", 8, "not a JSON-RPC"),
        ("drop", 3, "exited"),
        ("wrong-id", 8, "never sent"),
    ],
)
def test_protocol_faults_over_stdio(fault: str, code: int, fragment: str) -> None:
    server = reference_stdio_command("--seed", "working=1", "--fault", fault)
    run_mcptask("get", "working-001", "--server", server).assert_one_line_error(code, fragment)


def test_server_that_dies_shows_its_last_words() -> None:
    server = "python3 -c \"import sys; sys.stderr.write('fatal: no config\\n'); sys.exit(3)\""
    run_mcptask("list", "--server", server).assert_one_line_error(3, "code 3", "no config")


def test_server_command_that_does_not_exist() -> None:
    result = run_mcptask("list", "--server", "/nonexistent/mcp-server --stdio")
    result.assert_one_line_error(3, "cannot start")


# -- usage errors ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        # The rest of mcptask's own refusals are in process: tests/cli/test_settings.py.
        (("list",), "no server given"),
        (("list", "--bogus"), "--bogus"),
        (("get",), "ID"),
    ],
)
def test_usage_errors(args: tuple[str, ...], fragment: str) -> None:
    run_mcptask(*args).assert_one_line_error(2, fragment)


def test_environment_names_the_server(seeded_url: str) -> None:
    result = run_mcptask("list", "-o", "ids", env={"MCPTASK_URL": seeded_url})
    assert result.code == 0, result.stderr
    assert len(result.stdout.split()) == 7


def test_version_and_help() -> None:
    assert run_mcptask("--version").stdout.startswith("mcptask ")
    helped = run_mcptask("--help")
    assert helped.code == 0
    for command in ("connect", "list", "get", "cancel", "reference-server"):
        assert command in helped.stdout


# -- helpers -----------------------------------------------------------------------------------


def _start_task_in_new_session(url: str, *, end: bool = False) -> tuple[str, str]:
    """Initialize a session by hand and start a long task in it; optionally end the session."""
    accept = {"Accept": "application/json, text/event-stream"}
    with httpx.Client(headers=accept, timeout=10) as http:
        init = http.post(
            url,
            headers={"Accept": "application/json"} | accept,
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
        session = init.headers["Mcp-Session-Id"]
        headers = {"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"}
        http.post(
            url, headers=headers, json={"jsonrpc": "2.0", "method": "notifications/initialized"}
        )
        call = http.post(
            url,
            headers=headers,
            json={
                "jsonrpc": "2.0",
                "id": 2,
                "method": "tools/call",
                "params": {
                    "name": "long_job",
                    "arguments": {"seconds": 600},
                    "task": {"ttl": 600000},
                },
            },
        )
        task_id = _result_of(call)["task"]["taskId"]
        if end:
            http.delete(url, headers=headers)
        return session, str(task_id)


def _result_of(response: httpx.Response) -> Any:
    if response.headers["Content-Type"].startswith("text/event-stream"):
        for line in response.text.splitlines():
            if line.startswith("data:") and line[5:].strip():
                message = json.loads(line[5:])
                if "result" in message:
                    return message["result"]
        raise AssertionError(f"no result in {response.text!r}")
    return response.json()["result"]


# -- hardening found by review -----------------------------------------------------------------


def test_session_dropped_right_after_initialize(reference_server: StartServer) -> None:
    url = reference_server("--protocol-eras", "legacy", "--drop-session-after", "1")
    run_mcptask("list", "--url", url).assert_one_line_error(8, "dropped the session")


def test_bad_credentials_are_usage_errors_that_never_show_the_secret(
    shared_reference_server: StartServer, tmp_path: Path
) -> None:
    url = shared_reference_server()
    token_file = tmp_path / "token"
    token_file.write_text("supersecret\nsecond line\n")
    result = run_mcptask("list", "--url", url, "--token-file", str(token_file))
    result.assert_one_line_error(2, "printable ASCII")
    assert "supersecret" not in result.stderr
    header = run_mcptask("list", "--url", url, "-H", "X-Key: s\u00e9cret")
    header.assert_one_line_error(2, "X-Key")
    assert "cret" not in header.stderr


def test_environment_token_does_not_break_stdio_servers() -> None:
    server = reference_stdio_command("--seed", "working=1")
    result = run_mcptask(
        "list", "--server", server, "-o", "ids", env={"MCPTASK_TOKEN": "for-http-only"}
    )
    assert result.code == 0, result.stderr
    assert result.stdout.split() == ["working-001"]


def test_a_reader_that_goes_away_ends_output_quietly(reference_server: StartServer) -> None:
    url = reference_server("--seed", "working=10000", "--page-size", "1000")
    process = subprocess.Popen(
        [*mcptask_argv(), "list", "--url", url, "-o", "ids"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.readline().startswith(b"working-")
        process.stdout.close()
        _, stderr = process.communicate(timeout=60)
    finally:
        stop_process(process)
    assert process.returncode == 0
    assert stderr == b""


def test_sigterm_while_connecting_is_an_interruption() -> None:
    # The server in process, to see the slow tasks/list arrive: the signal comes inside it.
    with clocked_http_server("--seed", "working=3", "--latency", "3000") as server:
        process = subprocess.Popen(
            [*mcptask_argv(), "list", *server.target],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            server.wait_for_request("tasks/list", process)
            process.send_signal(signal.SIGTERM)
            stdout, stderr = process.communicate(timeout=30)
        finally:
            stop_process(process)
    assert process.returncode == 130
    assert stdout == ""
    assert stderr.strip() == "mcptask: error: interrupted"

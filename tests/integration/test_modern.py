"""The 2026-07-28 era end to end: era detection, get, cancel and watch against the reference
server over HTTP and stdio, dual-era and single-era."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.cli_process import (
    Result,
    reference_stdio_command,
    run_mcptask,
    run_mcptask_during,
    run_mcptask_until,
)
from tests.clocked_reference_server import clocked_stdio_server
from tests.conftest import StartServer

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/tasks": {}}
    },
}
Options = Callable[..., list[str]]


@pytest.fixture(params=["http", "stdio"])
def target(request: pytest.FixtureRequest, reference_server: StartServer) -> Options:
    """`--url`/`--server` options for a reference server started with `args`."""

    def make(*args: str) -> list[str]:
        if request.param == "http":
            return ["--url", reference_server(*args)]
        return ["--server", reference_stdio_command(*args)]

    return make


def start_modern_job(url: str, *steps: tuple[float, str, str], on_cancel: str | None = None) -> str:
    """A stateless 2026-07-28 `tools/call` of `long_job`; returns the task id it created."""
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "long_job",
            "arguments": {
                "steps": [list(s) for s in steps],
                **({"onCancel": on_cancel} if on_cancel else {}),
            },
            "_meta": MODERN_META,
        },
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "long_job",
    }
    answer = httpx.post(url, json=body, headers=headers, timeout=10)
    result = _result(answer)
    assert result["resultType"] == "task"
    return str(result["taskId"])


def _result(response: httpx.Response) -> Any:
    if response.headers["Content-Type"].startswith("application/json"):
        return response.json()["result"]
    for line in response.text.splitlines():
        if line.startswith("data:") and '"result"' in line:
            return json.loads(line[5:])["result"]
    raise AssertionError(response.text)


def outcomes(result: Result) -> dict[str, tuple[str, str | None]]:
    return {r["taskId"]: (r["outcome"], r["status"]) for r in result.json()["results"]}


# -- era detection -----------------------------------------------------------------------------


def test_auto_speaks_modern_to_a_dual_era_server(target: Options) -> None:
    result = run_mcptask("connect", *target(), "-o", "json")
    assert result.code == 0, result.stderr
    document = result.json()
    assert document["era"] == "modern"
    assert document["protocolVersion"] == "2026-07-28"
    assert document["supportedVersions"] == ["2026-07-28", "2025-11-25"]
    assert "io.modelcontextprotocol/tasks" in document["extensions"]
    assert document["sessionId"] is None
    # 2026-07-28 has no list; the server's 2025-11-25 does, and auto mode uses it for
    # `list`: the top-level summary says what mcptask can do, `eras` says where.
    assert document["tasks"] == {
        "supported": True,
        "list": True,
        "cancel": True,
        "toolCalls": True,
    }
    eras = {era["protocolVersion"]: era for era in document["eras"]}
    assert [era["protocolVersion"] for era in document["eras"]] == ["2026-07-28", "2025-11-25"]
    assert eras["2026-07-28"]["era"] == "modern"
    assert eras["2026-07-28"]["tasks"]["list"] is False
    assert eras["2025-11-25"]["era"] == "legacy"
    assert eras["2025-11-25"]["tasks"] == {
        "supported": True,
        "list": True,
        "cancel": True,
        "toolCalls": True,
    }


def test_auto_falls_back_to_initialize_for_a_legacy_server(target: Options) -> None:
    result = run_mcptask("connect", *target("--protocol-eras", "legacy"), "-o", "json", "-v")
    assert result.code == 0, result.stderr
    assert result.json()["era"] == "legacy"
    assert result.json()["protocolVersion"] == "2025-11-25"
    assert result.stderr.index('"server/discover"') < result.stderr.index('"initialize"')


def test_pinned_legacy_protocol_on_a_dual_era_server(target: Options) -> None:
    result = run_mcptask("connect", *target(), "--protocol", "2025-11-25", "-o", "json", "-v")
    assert result.code == 0, result.stderr
    assert result.json()["era"] == "legacy"
    assert "server/discover" not in result.stderr


def test_pinned_modern_protocol_against_a_legacy_server(target: Options) -> None:
    result = run_mcptask(
        "connect", *target("--protocol-eras", "legacy"), "--protocol", "2026-07-28"
    )
    result.assert_one_line_error(5, "does not speak 2026-07-28")


def test_pinned_legacy_protocol_against_a_modern_only_server(target: Options) -> None:
    result = run_mcptask(
        "connect", *target("--protocol-eras", "modern"), "--protocol", "2025-11-25"
    )
    result.assert_one_line_error(5, "2026-07-28")


def test_modern_requests_carry_meta_and_headers_and_no_session(
    shared_reference_server: StartServer,
) -> None:
    url = shared_reference_server("--seed", "working=1")
    result = run_mcptask("get", "working-001", "--url", url, "-o", "json", "-v")
    assert result.code == 0, result.stderr
    get_lines = [line for line in result.stderr.splitlines() if '"tasks/get"' in line]
    assert get_lines
    for line in get_lines:
        assert "'Mcp-Method': 'tasks/get'" in line
        assert "'Mcp-Name': 'working-001'" in line
        assert "'MCP-Protocol-Version': '2026-07-28'" in line
        assert "Mcp-Session-Id" not in line
        assert '"io.modelcontextprotocol/tasks"' in line


# -- no list in this era -----------------------------------------------------------------------


@pytest.mark.parametrize("command", [("list",), ("cancel", "--all-working", "--yes"), ("watch",)])
def test_no_list_in_a_modern_only_server(target: Options, command: tuple[str, ...]) -> None:
    result = run_mcptask(*command, *target("--protocol-eras", "modern", "--seed", "working=2"))
    result.assert_one_line_error(5, "no tasks/list", "--from-file")


def test_list_uses_the_legacy_era_of_a_dual_era_server(target: Options) -> None:
    result = run_mcptask("list", *target("--seed", "working=2,completed=1"), "-o", "ids", "-v")
    assert result.code == 0, result.stderr
    assert sorted(result.stdout.split()) == ["completed-001", "working-001", "working-002"]
    assert '"initialize"' in result.stderr


# -- get ---------------------------------------------------------------------------------------


def test_get_shows_modern_fields_and_an_inlined_result(reference_server: StartServer) -> None:
    url = reference_server("--protocol-eras", "modern", "--seed", "working=1")
    working = run_mcptask("get", "working-001", "--url", url, "-o", "json").json()
    assert working["resultType"] == "complete"
    assert "pollIntervalMs" in working
    assert "ttlMs" in working
    assert "pollInterval" not in working
    done = start_modern_job(url, (0.1, "completed", "done"))
    for _ in range(50):
        task = run_mcptask("get", done, "--url", url, "-o", "json").json()
        if task["status"] == "completed":
            break
    assert task["status"] == "completed"
    assert task["result"]["content"][0]["type"] == "text"
    table = run_mcptask("get", done, "--url", url, "-o", "table")
    assert "result" in table.stdout
    assert "Poll interval" in table.stdout


def test_get_unknown_task_in_modern(target: Options) -> None:
    run_mcptask("get", "nope", *target("--protocol-eras", "modern")).assert_one_line_error(
        6, "not found"
    )


# -- cancel ------------------------------------------------------------------------------------


def test_cancel_is_acknowledged_then_confirmed_by_polling(target: Options) -> None:
    options = target(
        "--protocol-eras",
        "modern",
        "--seed",
        "working=2,completed=1",
        "--complete-on-cancel",
        "working-002",
        "--poll-interval",
        "100",
    )
    result = run_mcptask(
        "cancel", "working-001", "working-002", "completed-001", "nope", *options, "-o", "json"
    )
    assert result.code == 6, result.stderr
    assert outcomes(result) == {
        "working-001": ("cancelled", "cancelled"),
        "working-002": ("already-finished", "completed"),
        "completed-001": ("already-finished", "completed"),
        "nope": ("not-found", None),
    }


def test_ack_only_cancel_stays_pending(target: Options) -> None:
    options = target(
        "--protocol-eras",
        "modern",
        "--seed",
        "working=1",
        "--modern-cancel-delay",
        "-1",
        "--poll-interval",
        "100",
    )
    result = run_mcptask("cancel", "working-001", *options, "--wait-timeout", "1", "-o", "json")
    assert result.code == 7
    assert outcomes(result) == {"working-001": ("pending", "working")}


def test_modern_cancel_ids_from_stdin(target: Options) -> None:
    options = target("--protocol-eras", "modern", "--seed", "working=3", "--poll-interval", "100")
    result = run_mcptask(
        "cancel", "-", *options, "-o", "ids", stdin="working-003\n# skip\n\nworking-001\n"
    )
    assert result.code == 0, result.stderr
    assert result.stdout.split() == ["working-003", "working-001"]


# -- watch -------------------------------------------------------------------------------------


def changes(stdout: str) -> list[tuple[str, str | None, str]]:
    """The changes -o jsonl printed (lines of a -v wire log among them left out)."""
    lines = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    return [(line["taskId"], line["previous"], line["status"]) for line in lines]


@pytest.mark.parametrize("notify", ["--notify", "--no-notify"])
def test_watch_over_http_with_and_without_pushes(
    reference_server: StartServer, notify: str
) -> None:
    url = reference_server("--protocol-eras", "modern", notify, "--poll-interval", "5000")
    task = start_modern_job(url, (600.0, "completed", "never"), on_cancel="complete")
    interval = [] if notify == "--notify" else ["--interval", "0.2"]
    # Once the watch has seen the task working (and its subscription is acknowledged, where
    # the server pushes), another process's cancel makes the job complete (onCancel=complete).
    pushed = ["subscriptions/acknowledged"] if notify == "--notify" else []
    result = run_mcptask_until(
        ('"previous":null', *pushed),
        lambda: run_mcptask("cancel", task, "--url", url),
        *("watch", task, "--url", url, "-o", "jsonl", "-v", *interval),
    )  # stdout and stderr in one: the output lines and the wire log
    assert result.code == 0, result.stdout
    assert (task, "working", "completed") in changes(result.stdout)
    assert '"subscriptions/listen"' in result.stdout
    assert ('"notifications/tasks"' in result.stdout) == (notify == "--notify")


def test_watch_over_stdio_through_input_required(tmp_path: Path) -> None:
    script = tmp_path / "tasks.json"
    script.write_text(
        json.dumps(
            [
                {
                    "taskId": "asker",
                    "steps": [
                        [2.0, "input_required", "name?"],
                        [0.8, "working", "ok"],
                        [0.8, "failed", "no"],
                    ],
                },
            ]
        )
    )
    # The server in process, on a manual clock that moves on once the watch wrote each state.
    with clocked_stdio_server(
        "--protocol-eras", "modern", "--tasks-file", str(script), "--poll-interval", "200"
    ) as server:
        result = run_mcptask_during(
            lambda watch: server.play(2.0, 0.8, 0.8, watch=watch, reported=True),
            "watch", "asker", *server.target, "-o", "jsonl", "--exit-status",
        )  # fmt: skip
    assert result.code == 7, result.stderr
    assert changes(result.stdout) == [
        ("asker", None, "working"),
        ("asker", "working", "input_required"),
        ("asker", "input_required", "working"),
        ("asker", "working", "failed"),
    ]

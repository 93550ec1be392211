"""`list -o jsonl|ids|json`, which print in bounded memory: the real mcptask process, the real
reference server.

What streaming must not change: the bytes printed are the documented rendering of the
server's tasks (`json.dumps` of the document, indented by 2; one compact object per line;
one id per line), newest first or in the server's order, with --status and --limit, over
HTTP (JSON and SSE answers) and stdio. A page that fails half way: what was printed stays,
one error line says the list is incomplete (or nothing is printed, where the output waits
for the last page), and the exit code is the failure's. The record of known tasks still
hears every task. A reader that goes away (`| head`) stops the listing.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.cli_process import mcptask_argv, reference_stdio_command, run_mcptask
from tests.conftest import StartServer

SEED = "working=12,input_required=3,completed=9,failed=4,cancelled=2"
PAGE = "7"  # 30 tasks: five pages, the last one short
HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def server_tasks(url: str) -> list[dict[str, Any]]:
    """Every task of the server, in its order, as its tasks/list pages carry them (JSON)."""
    with httpx.Client(timeout=10) as http:
        params = {
            "protocolVersion": "2025-11-25",
            "capabilities": {"tasks": {}},
            "clientInfo": {"name": "test", "version": "0"},
        }
        answer = http.post(
            url,
            json={"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params},
            headers=HEADERS,
        )
        headers = HEADERS | {
            "Mcp-Session-Id": answer.headers["Mcp-Session-Id"],
            "MCP-Protocol-Version": "2025-11-25",
        }
        tasks: list[dict[str, Any]] = []
        cursor = None
        for number in range(2, 100):
            message = {
                "jsonrpc": "2.0",
                "id": number,
                "method": "tasks/list",
                "params": {"cursor": cursor} if cursor else {},
            }
            result = answer_of(http.post(url, json=message, headers=headers))["result"]
            tasks.extend(result["tasks"])
            cursor = result.get("nextCursor")
            if cursor is None:
                return tasks
    raise AssertionError("tasks/list never ended")


def answer_of(response: httpx.Response) -> Any:
    """The JSON-RPC answer of a POST, whether the body is JSON or an event stream."""
    if response.headers["Content-Type"].startswith("text/event-stream"):
        data = [line[5:] for line in response.text.splitlines() if line.startswith("data:")]
        return json.loads([line for line in data if line.strip()][-1])
    return response.json()


def rendered(output: str, tasks: list[dict[str, Any]]) -> str:
    """What `list -o OUTPUT` prints for these tasks, as the README documents it."""
    if output == "json":
        return json.dumps({"tasks": tasks, "count": len(tasks)}, indent=2) + "\n"
    if output == "jsonl":
        return "".join(json.dumps(task, separators=(",", ":")) + "\n" for task in tasks)
    return "".join(task["taskId"] + "\n" for task in tasks)


def newest_first(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(tasks, key=lambda task: task["createdAt"], reverse=True)  # one offset: Z


@pytest.fixture(params=["json", "sse"])
def url(request: pytest.FixtureRequest, shared_reference_server: StartServer) -> str:
    return shared_reference_server("--seed", SEED, "--page-size", PAGE, "--answer", request.param)


@pytest.mark.parametrize("output", ["jsonl", "ids", "json"])
@pytest.mark.parametrize("order", ["newest", "server"])
def test_the_streamed_output_is_the_documented_rendering(url: str, output: str, order: str) -> None:
    tasks = server_tasks(url)
    assert len(tasks) == 30
    shown = newest_first(tasks) if order == "newest" else tasks
    result = run_mcptask("list", "--url", url, "-o", output, "--order", order)
    assert result.code == 0, result.stderr
    assert result.stdout == rendered(output, shown)
    assert result.stderr == ""


@pytest.mark.parametrize("output", ["jsonl", "ids", "json"])
@pytest.mark.parametrize("order", ["newest", "server"])
def test_status_and_limit_while_streaming(url: str, output: str, order: str) -> None:
    tasks = server_tasks(url)
    kept = [task for task in tasks if task["status"] in ("working", "failed")]
    shown = (newest_first(kept) if order == "newest" else kept)[:10]
    result = run_mcptask(
        "list", "--url", url, "-o", output, "--order", order, "--status", "working,failed",
        "--limit", "10",
    )  # fmt: skip
    assert result.code == 0, result.stderr
    assert result.stdout == rendered(output, shown)


def test_the_table_in_the_servers_order(url: str) -> None:
    ids = [task["taskId"] for task in server_tasks(url)]
    result = run_mcptask("list", "--url", url, "-o", "table", "--order", "server")
    assert result.code == 0, result.stderr
    rows = [line.split()[0] for line in result.stdout.splitlines()[1:]]
    assert rows == ids


@pytest.mark.parametrize("order", ["newest", "server"])
def test_streaming_over_stdio(order: str) -> None:
    command = reference_stdio_command("--seed", SEED, "--page-size", PAGE)
    document = run_mcptask("list", "--server", command, "-o", "json", "--order", order)
    assert document.code == 0, document.stderr
    tasks = document.json()["tasks"]
    assert len(tasks) == 30
    assert document.stdout == rendered("json", tasks)  # the whole document, byte for byte
    # Each command spawns its own server (its seeded tasks are stamped anew): the same
    # tasks in the same order, each line the documented rendering of its own task.
    lines = run_mcptask("list", "--server", command, "-o", "jsonl", "--order", order)
    assert lines.code == 0, lines.stderr
    parsed = [json.loads(line) for line in lines.stdout.splitlines()]
    assert [task["taskId"] for task in parsed] == [task["taskId"] for task in tasks]
    assert lines.stdout == rendered("jsonl", parsed)
    ids = run_mcptask("list", "--server", command, "-o", "ids", "--order", order)
    assert ids.stdout == rendered("ids", tasks)


def test_an_unknown_order_is_a_usage_error(url: str) -> None:
    run_mcptask("list", "--url", url, "--order", "oldest").assert_one_line_error(
        2, "--order takes newest or server, not 'oldest'"
    )
    run_mcptask("list", "--url", url, "--known", "--order", "server").assert_one_line_error(
        2, "--known"
    )


# -- a page that fails half way ------------------------------------------------------------------

# initialize is request 1 (2025-11-25 pinned: no discovery), pages are 2, 3, 4...: the server
# dies on the third page, after two pages (14 tasks) were answered.
DYING = ("--seed", "working=30", "--page-size", PAGE, "--die-after", "4")
PINNED = ("--protocol", "2025-11-25", "--retries", "0")


def dying_target(transport: str, reference_server: StartServer) -> list[str]:
    if transport == "http":
        return ["--url", reference_server(*DYING)]
    return ["--server", reference_stdio_command(*DYING)]


@pytest.mark.parametrize("transport", ["http", "stdio"])
@pytest.mark.parametrize("output", ["jsonl", "ids"])
def test_a_page_failing_after_printed_pages_leaves_whole_lines_and_says_so(
    transport: str, output: str, reference_server: StartServer
) -> None:
    target = dying_target(transport, reference_server)
    result = run_mcptask("list", *target, "-o", output, "--order", "server", *PINNED)
    assert result.code == 3, result.stderr
    lines = result.stdout.splitlines()
    expected = [f"working-{number:03d}" for number in range(1, 15)]
    if output == "jsonl":
        assert [json.loads(line)["taskId"] for line in lines] == expected
    else:
        assert lines == expected
    assert result.stdout.endswith("\n")
    assert len(result.stderr_lines) == 1, result.stderr
    assert result.stderr.startswith("mcptask: error: ")
    assert "(after 14 tasks were printed: the list is incomplete)" in result.stderr
    assert "Traceback" not in result.stderr


@pytest.mark.parametrize("transport", ["http", "stdio"])
@pytest.mark.parametrize(
    ("output", "order"),
    [("jsonl", "newest"), ("ids", "newest"), ("json", "newest"), ("json", "server")],
)
def test_a_page_failing_prints_nothing_where_the_output_waits_for_the_last(
    transport: str, output: str, order: str, reference_server: StartServer
) -> None:
    target = dying_target(transport, reference_server)
    result = run_mcptask("list", *target, "-o", output, "--order", order, *PINNED)
    result.assert_one_line_error(3)
    assert "incomplete" not in result.stderr


# -- the record and the reader -------------------------------------------------------------------


def test_the_record_hears_every_streamed_task(
    reference_server: StartServer, tmp_path: Path
) -> None:
    url = reference_server("--seed", "working=1100", "--page-size", "100")
    env = {"MCPTASK_STATE_DIR": str(tmp_path)}
    listed = run_mcptask("list", "--url", url, "-o", "ids", "--order", "server", env=env)
    assert listed.code == 0, listed.stderr
    assert len(listed.stdout.splitlines()) == 1100
    from mcptask.store.identity import ServerIdentity
    from mcptask.store.known_tasks import KnownTasks

    record = KnownTasks.open(ServerIdentity.for_url(url), env)
    try:
        assert sorted(record.ids()) == sorted(listed.stdout.splitlines())
    finally:
        record.close()


def test_a_reader_that_goes_away_stops_the_listing(reference_server: StartServer) -> None:
    # 30 pages of about 23 kB of JSON lines: more than a pipe holds, so mcptask is still
    # listing when the reader goes.
    url = reference_server("--seed", "working=3000", "--page-size", "100", "--log")
    process = reference_server.processes[url]
    argv = [*mcptask_argv(), "list", "--url", url, "-o", "jsonl", "--order", "server"]
    with subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL
    ) as mcptask:
        assert mcptask.stdout is not None
        assert json.loads(mcptask.stdout.readline())["taskId"] == "working-001"
        mcptask.stdout.close()  # as `| head -1` does
        _, stderr = mcptask.communicate(timeout=60)
    assert mcptask.returncode == 0, stderr
    assert stderr == b""
    posts = process.stderr_text().count('"POST ')  # type: ignore[attr-defined]
    assert posts < 30, f"{posts} requests: the listing went on after its reader had gone"

"""A hostile server's task listings against `mcptask list` and what is piped from it: ids
made to be taken for options, cursors that never end, ids too long for the table."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import uuid
from pathlib import Path

from tests.cli_process import mcptask_argv, run_mcptask
from tests.security.hostile_mcp import HostileMcp, Page, task

LEGACY = ("--protocol", "2025-11-25")
LEGACY_OPTION = " ".join(LEGACY)
MAX_PAGES = 5_000  # mcptask.protocol.tasks.MAX_PAGES, as the README documents it

HOSTILE_IDS = [
    "--url=http://127.0.0.1:9/steal",  # an option with its value
    "-v",
    "ok-1 --url http://127.0.0.1:9/steal",  # split into words by the shell
    "*",  # glob-expanded by the shell
    "it's",  # xargs takes quotes
    "line\n--url=http://127.0.0.1:9/steal",  # a newline becomes a space: two words
]


def one_page(task_ids: list[str]) -> HostileMcp:
    return HostileMcp(pages=lambda cursor: ([task(task_id) for task_id in task_ids], None))


def test_ids_that_a_shell_would_take_for_options_or_split_are_left_out() -> None:
    with one_page(["ok-1", *HOSTILE_IDS, "ok-2"]) as server:
        result = run_mcptask("list", "--url", server.url, *LEGACY, "-o", "ids", "--order", "server")
    assert result.code == 0, result.stderr
    assert result.stdout == "ok-1\nok-2\n"
    assert len(result.stderr_lines) == 1, result.stderr
    assert "left task id '--url=http://127.0.0.1:9/steal' out of -o ids" in result.stderr
    assert "-o json shows every id" in result.stderr
    # Newest first, the same (one line, the same ids).
    with one_page(["ok-1", *HOSTILE_IDS, "ok-2"]) as server:
        newest = run_mcptask("list", "--url", server.url, *LEGACY, "-o", "ids")
    assert sorted(newest.stdout.splitlines()) == ["ok-1", "ok-2"]
    assert len(newest.stderr_lines) == 1, newest.stderr
    # -o json still shows every id as the server sent it.
    with one_page(["ok-1", *HOSTILE_IDS, "ok-2"]) as server:
        document = run_mcptask("list", "--url", server.url, *LEGACY, "-o", "json").json()
    assert [item["taskId"] for item in document["tasks"]] == ["ok-1", *HOSTILE_IDS, "ok-2"]


def test_cancel_of_listed_ids_keeps_the_token_at_home() -> None:
    """`mcptask cancel $(mcptask list -o ids)` in a real shell, the server and its token in
    the environment: the ids reach cancel as ids of the same server (none is taken for an
    option, split, or glob-expanded), and nothing goes to the URL an id names."""
    with HostileMcp() as elsewhere, HostileMcp() as server:
        listed = ["ok-1", *[text.replace(":9/", f":{elsewhere.port}/") for text in HOSTILE_IDS]]
        server.pages = lambda cursor: ([task(task_id) for task_id in listed], None)
        mcptask = shlex.join(mcptask_argv())
        script = (
            f"{mcptask} cancel $({mcptask} list {LEGACY_OPTION} -o ids) {LEGACY_OPTION} -o json"
        )
        environment = _environment(MCPTASK_URL=server.url, MCPTASK_TOKEN="secret-token")
        completed = subprocess.run(
            ["sh", "-c", script],
            cwd=Path(__file__).parent,  # files for `*` to expand to
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            env=environment,
        )
    assert elsewhere.calls == [], completed.stderr
    assert elsewhere.authorizations == []
    assert completed.returncode == 0, completed.stderr
    assert [item["taskId"] for item in _results(completed.stdout)] == ["ok-1"]
    assert server.calls.count("tasks/cancel") == 1


def _environment(**extra: str) -> dict[str, str]:
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith("MCPTASK_")
    }
    environment.update({"NO_COLOR": "1", **extra})
    environment["PATH"] = os.pathsep.join(
        [str(Path(sys.executable).parent), environment.get("PATH", "")]
    )
    return environment


def _results(stdout: str) -> list[dict[str, object]]:
    document = json.loads(stdout)
    return list(document["results"])


def endless(cursor: str | None) -> Page:
    """A fresh cursor on every page, forever, and one new task on each."""
    number = int(cursor or 0)
    return [task(f"endless-{number}")], str(number + 1)


def test_endless_pagination_stops_with_one_line() -> None:
    with HostileMcp(pages=endless) as server:
        result = run_mcptask("list", "--url", server.url, *LEGACY, "-o", "json", timeout=300)
        asked = server.calls.count("tasks/list")
    result.assert_one_line_error(8, f"tasks/list goes on past {MAX_PAGES} pages")
    assert asked == MAX_PAGES


def test_endless_tool_pages_stop_start_with_one_line() -> None:
    with HostileMcp() as server:
        server.tools_cursor = lambda cursor: str(int(cursor or 0) + 1)
        result = run_mcptask("start", "job", "--url", server.url, *LEGACY, timeout=300)
        asked = server.calls.count("tools/list")
    result.assert_one_line_error(8, f"tools/list goes on past {MAX_PAGES} pages")
    assert asked == MAX_PAGES
    assert "tools/call" not in server.calls


def test_a_uuid_is_never_wrapped_in_a_table_of_80_columns() -> None:
    task_id = str(uuid.uuid4())
    message = "a status message long enough to need wrapping " * 3
    with HostileMcp(
        pages=lambda cursor: ([dict(task(task_id), statusMessage=message)], None)
    ) as server:
        result = run_mcptask(
            "list", "--url", server.url, *LEGACY, "-o", "table", env={"COLUMNS": "80"}
        )
    assert result.code == 0, result.stderr
    assert task_id in result.stdout  # whole, on one line
    assert all(len(line) <= 80 for line in result.stdout.splitlines())


def test_an_id_wider_than_the_screen_is_printed_whole() -> None:
    task_id = "x" * 120
    with one_page([task_id]) as server:
        result = run_mcptask(
            "list", "--url", server.url, *LEGACY, "-o", "table", env={"COLUMNS": "80"}
        )
    assert result.code == 0, result.stderr
    assert re.search(rf"^{task_id} +working ", result.stdout, re.MULTILINE)  # and its status

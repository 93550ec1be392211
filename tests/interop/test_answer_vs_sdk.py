"""`mcptask answer` against the official MCP Python SDK 1.x server, whose experimental tasks ask
for input as the 2025-11-25 spec describes: `ServerTaskContext.elicit()` puts the task in
`input_required` and queues an `elicitation/create` (tagged with the related task) that the
SDK's tasks/result handler delivers on that call's stream; the client's response, POSTed in
the session, resumes the task. The SDK's tasks are visible only to the session that created
them: `mcptask answer` finds it in the record `mcptask start` wrote."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.cli_process import run_mcptask

from .sdk_env import ensure_sdk_venv, start_sdk_server, stop


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    ensure_sdk_venv()
    address, proc = start_sdk_server("sse", "--ask-job")
    try:
        yield address
    finally:
        stop(proc)


def start_asking_task(url: str) -> str:
    started = run_mcptask("start", "ask_job", "--url", url, "-o", "ids")
    assert started.code == 0, started.stderr
    return started.stdout.strip()


def test_an_sdk_task_that_elicits_is_answered(url: str) -> None:
    task_id = start_asking_task(url)
    answered = run_mcptask("answer", task_id, "--url", url, "answer=main", "-o", "json")
    assert answered.code == 0, answered.stderr
    report = answered.json()
    ((key, asked),) = report["asked"].items()
    assert asked["method"] == "elicitation/create"
    assert asked["params"]["message"] == "Which branch?"
    assert report["sent"] == {key: {"action": "accept", "content": {"answer": "main"}}}
    assert report["outcome"] in ("working", "completed")
    result = run_mcptask("result", task_id, "--url", url, "--wait-timeout", "30", "-o", "json")
    assert result.code == 0, result.stderr
    assert result.json()["result"]["content"][0]["text"] == "deployed main"


def test_a_declined_sdk_question_reaches_the_tool(url: str) -> None:
    task_id = start_asking_task(url)
    declined = run_mcptask("answer", task_id, "--url", url, "--decline", "-o", "json")
    assert declined.code == 0, declined.stderr
    result = run_mcptask("result", task_id, "--url", url, "--wait-timeout", "30", "-o", "json")
    assert result.json()["result"]["content"][0]["text"] == "not deployed: decline"


def test_the_sdk_delivers_a_question_once_so_a_run_that_sends_nothing_spends_it(
    url: str,
) -> None:
    # The SDK takes a queued question off its queue as it delivers it on tasks/result: the
    # run whose answer did not fit heard it and sent nothing; the next run hears nothing.
    task_id = start_asking_task(url)
    misfit = run_mcptask("answer", task_id, "--url", url, "branch=main")
    misfit.assert_one_line_error(2, "has no field 'branch'")
    later = run_mcptask("answer", task_id, "--url", url, "answer=main", "--wait-timeout", "0")
    assert later.code == 7, later.stderr
    assert (later.json()["outcome"], later.json()["sent"]) == ("unheard", {})

"""`mcptask answer` on 2025-11-25 servers, end to end: the real process against the reference
server's legacy era (HTTP and stdio), which asks with `elicitation/create` requests on the
stream of the `tasks/result` that mcptask holds open, and takes the JSON-RPC response."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pexpect
import pytest

from tests.cli_process import reference_stdio_command, run_mcptask
from tests.conftest import StartServer
from tests.integration.test_answer import Target, spawn, tasks_file


@pytest.fixture(params=["http", "stdio"])
def target(request: pytest.FixtureRequest, reference_server: StartServer) -> Target:
    """`--url`/`--server` options for a legacy reference server started with `args`."""

    def make(*args: str) -> list[str]:
        if request.param == "http":
            return ["--url", reference_server("--protocol-eras", "legacy", *args)]
        return ["--server", reference_stdio_command("--protocol-eras", "legacy", *args)]

    return make


def only(mapping: dict[str, Any]) -> tuple[str, Any]:
    assert len(mapping) == 1, mapping
    return next(iter(mapping.items()))


def test_an_answer_from_items_reaches_the_task(target: Target, tmp_path: Path) -> None:
    server = target("--tasks-file", tasks_file(tmp_path))
    answered = run_mcptask("answer", "ask-1", *server, "answer=main", "-o", "json")
    assert answered.code == 0, answered.stderr
    report = answered.json()
    assert report["outcome"] in ("working", "completed")
    key, asked = only(report["asked"])
    assert asked["method"] == "elicitation/create"
    assert asked["params"]["message"] == "Which branch?"
    assert report["sent"] == {key: {"action": "accept", "content": {"answer": "main"}}}
    assert report["task"]["status"] == report["status"]


def test_decline_and_a_file_are_sent_as_the_response(target: Target, tmp_path: Path) -> None:
    steps = [[0, "input_required", "First?"], [0, "input_required", "Second?"]]
    server = target("--tasks-file", tasks_file(tmp_path, steps=steps))
    declined = run_mcptask("answer", "ask-1", *server, "--decline", "-o", "json")
    assert declined.code == 0, declined.stderr
    _, sent = only(declined.json()["sent"])
    assert sent == {"action": "decline"}
    if "--url" not in server:
        return  # a stdio server is a new process each time: its task starts again
    answer = tmp_path / "answer.json"
    answer.write_text(json.dumps({"action": "accept", "content": {"answer": "yes"}}))
    filed = run_mcptask("answer", "ask-1", *server, "--from-file", str(answer), "-o", "json")
    assert filed.code == 0, filed.stderr
    _, asked = only(filed.json()["asked"])
    assert asked["params"]["message"] == "Second?"


def test_a_misfit_answer_sends_nothing(target: Target, tmp_path: Path) -> None:
    server = target("--tasks-file", tasks_file(tmp_path))
    refused = run_mcptask("answer", "ask-1", *server, "branch=main")
    refused.assert_one_line_error(2, "has no field 'branch'")
    if "--url" in server:
        still = run_mcptask("get", "ask-1", *server, "-o", "json")
        assert still.json()["status"] == "input_required"


def test_a_question_that_cannot_reach_mcptask_is_said_unheard(
    reference_server: StartServer, tmp_path: Path
) -> None:
    # JSON answers: the server cannot send its question on the tasks/result stream.
    url = reference_server(
        "--protocol-eras", "legacy", "--answer", "json", "--tasks-file", tasks_file(tmp_path)
    )
    result = run_mcptask("answer", "ask-1", "--url", url, "answer=x", "--wait-timeout", "0")
    assert result.code == 7, result.stderr
    report = result.json()
    assert (report["outcome"], report["sent"], report["status"]) == (
        "unheard",
        {},
        "input_required",
    )
    shown = run_mcptask(
        "answer", "ask-1", "--url", url, "answer=x", "--wait-timeout", "0", "-o", "table"
    )
    assert "no question reached mcptask" in shown.stdout
    assert "another stream" in shown.stdout


def test_a_session_scoped_task_is_answered_in_its_kept_session(
    reference_server: StartServer,
) -> None:
    url = reference_server("--protocol-eras", "legacy", "--scope", "session")
    started = run_mcptask(
        "start",
        "long_job",
        "awaitInput:=true",
        'steps:=[[0, "input_required", "Which branch?"], [0.2, "completed", "deployed"]]',
        "--url",
        url,
        "-o",
        "ids",
    )
    assert started.code == 0, started.stderr
    task_id = started.stdout.strip()
    answered = run_mcptask("answer", task_id, "--url", url, "answer=main", "-o", "json")
    assert answered.code == 0, answered.stderr
    assert answered.json()["outcome"] in ("working", "completed")


def test_a_person_answers_a_legacy_task_on_a_terminal(
    reference_server: StartServer, tmp_path: Path
) -> None:
    url = reference_server("--protocol-eras", "legacy", "--tasks-file", tasks_file(tmp_path))
    child = spawn("answer", "ask-1", "--url", url)
    child.expect(r"task ask-1 asks \(1 request\)")
    child.expect("Which branch?")
    child.expect(r"accept, decline or cancel\?")
    child.sendline("")  # the default: accept
    child.expect(r"answer \(string, required\)")
    child.sendline("release")
    child.expect("Send it")
    child.sendline("y")
    sent_and_deployed(child, url)


VISIT = "https://auth.example.com/consent?x=1"


def test_a_url_request_shows_its_host_and_is_accepted_only_when_asked(
    target: Target, tmp_path: Path
) -> None:
    server = target("--tasks-file", tasks_file(tmp_path, askUrl=VISIT))
    shown = run_mcptask("answer", "ask-1", *server, "-o", "table")
    assert shown.code == 2
    assert f"URL: {VISIT}" in shown.stderr
    assert "host: auth.example.com" in shown.stderr
    if "--url" in server:
        still = run_mcptask("get", "ask-1", *server, "-o", "json")
        assert still.json()["status"] == "input_required"
    accepted = run_mcptask("answer", "ask-1", *server, "--accept", "-o", "json")
    assert accepted.code == 0, accepted.stderr
    report = accepted.json()
    assert report["outcome"] in ("working", "completed")
    key, asked = only(report["asked"])
    assert asked["method"] == "elicitation/create"
    assert asked["params"]["mode"] == "url"
    assert asked["params"]["url"] == VISIT
    assert asked["params"]["elicitationId"]
    assert report["sent"] == {key: {"action": "accept"}}


def test_a_url_request_is_declined(target: Target, tmp_path: Path) -> None:
    server = target("--tasks-file", tasks_file(tmp_path, askUrl=VISIT))
    declined = run_mcptask("answer", "ask-1", *server, "--decline", "-o", "json")
    assert declined.code == 0, declined.stderr
    _, sent = only(declined.json()["sent"])
    assert sent == {"action": "decline"}


def test_a_person_accepts_a_legacy_url_request_once_done_at_the_site(
    reference_server: StartServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BROWSER", "false")  # never a real browser, were one asked for
    path = tasks_file(tmp_path, askUrl=VISIT)
    url = reference_server("--protocol-eras", "legacy", "--tasks-file", path)
    child = spawn("answer", "ask-1", "--url", url)
    child.expect(r"a URL to visit")
    child.expect(r"host: auth\.example\.com")
    child.expect(r"accept, decline or cancel\?")
    child.sendline("accept")
    child.expect("Open the URL in a browser")
    child.sendline("n")
    child.expect("Have you finished at the site")
    child.sendline("n")  # not done: nothing is sent
    child.expect("Send it")
    child.sendline("n")
    child.expect(pexpect.EOF)
    child.close()
    still = run_mcptask("get", "ask-1", "--url", url, "-o", "json")
    assert still.json()["status"] == "input_required"
    child = spawn("answer", "ask-1", "--url", url)
    child.expect(r"accept, decline or cancel\?")
    child.sendline("accept")
    child.expect("Open the URL in a browser")
    child.sendline("n")
    child.expect("Have you finished at the site")
    child.sendline("y")
    child.expect("Send it")
    child.sendline("y")
    sent_and_deployed(child, url)


def test_a_started_long_job_asks_for_its_url(reference_server: StartServer) -> None:
    url = reference_server("--protocol-eras", "legacy")
    started = run_mcptask(
        "start", "long_job", "awaitInput:=true", f"askUrl={VISIT}",
        'steps:=[[0, "input_required", "Sign in"], [0.2, "completed", "signed in"]]',
        "--url", url, "-o", "ids",
    )  # fmt: skip
    assert started.code == 0, started.stderr
    task_id = started.stdout.strip()
    accepted = run_mcptask("answer", task_id, "--url", url, "--accept", "-o", "json")
    assert accepted.code == 0, accepted.stderr
    _, asked = only(accepted.json()["asked"])
    assert (asked["params"]["mode"], asked["params"]["url"]) == ("url", VISIT)
    result = run_mcptask("result", task_id, "--url", url, "--wait-timeout", "30", "-o", "json")
    assert "signed in" in result.stdout


def sent_and_deployed(child: pexpect.spawn, url: str) -> None:
    """The person's answer was taken, mcptask ended well, and the task went on to finish."""
    child.expect("the answer was taken")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    result = run_mcptask("result", "ask-1", "--url", url, "--wait-timeout", "30", "-o", "json")
    assert result.code == 0, result.stderr
    assert "deployed" in result.stdout

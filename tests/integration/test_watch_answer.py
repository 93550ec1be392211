"""`watch --answer` and `start --watch --answer` end to end: the real process, on a real
terminal (pexpect), against the reference server's conformance fixture tools, which ask for a
boolean form; and `watch` without --answer, which names the command that answers."""

from __future__ import annotations

import json
import signal
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pexpect
import pytest

from tests.cli_process import reference_stdio_command, run_mcptask
from tests.conftest import StartServer
from tests.integration.test_answer import (
    SECRET_FORM,
    AskingServer,
    asking,
    fixtures,
    fixtures_url,
    spawn,
)
from tests.reference_server_process import FIXTURES_ARG

__all__ = ["asking", "fixtures", "fixtures_url"]  # the fixtures, shared with test_answer.py

Fixtures = Callable[..., tuple[str, str]]


def finish(child: pexpect.spawn) -> int:
    child.expect(pexpect.EOF)
    child.close()
    return int(child.exitstatus if child.exitstatus is not None else -1)


def answer_the_form(child: pexpect.spawn, confirm: str) -> None:
    child.expect(r"\[confirm-1\] accept, decline or cancel\?")
    child.sendline("accept")
    child.expect(r"confirm \(boolean, required\)")
    child.sendline(confirm)
    child.expect("Send it")


def test_start_watch_answer_asks_sends_and_follows_on(reference_server: StartServer) -> None:
    url = reference_server("--protocol-eras", "modern", FIXTURES_ARG)
    child = spawn("start", "confirm_delete", "filename=a.txt", "--watch", "--answer", "--url", url)
    child.expect(r"Task ID\s+(\S+)")
    task_id = child.match.group(1)
    answer_the_form(child, "true")
    child.sendline("y")
    child.expect("the answer was sent; watching on")
    child.expect("completed")
    assert finish(child) == 0, child.logfile_read.getvalue()
    result = run_mcptask("result", task_id, "--url", url, "-o", "json")
    assert "Deleted a.txt" in result.stdout


def test_a_refused_answer_is_not_asked_again_and_ctrl_c_sends_nothing(fixtures: Fixtures) -> None:
    url, task_id = fixtures("confirm_delete", "filename=b.txt")
    child = spawn("watch", task_id, "--answer", "--interval", "0.1", "--url", url)
    answer_the_form(child, "true")
    child.sendline("n")  # not sent; the same question is not asked again on the next rounds
    child.expect(f"{task_id}: nothing was sent")
    with pytest.raises(pexpect.TIMEOUT):
        child.expect(r"accept, decline or cancel\?", timeout=1.5)
    child.sendintr()
    assert finish(child) == 130
    still = run_mcptask("get", task_id, "--url", url, "-o", "json").json()
    assert still["status"] == "input_required"


def test_ctrl_c_at_the_prompt_stops_the_watch_and_sends_nothing(fixtures: Fixtures) -> None:
    url, task_id = fixtures("confirm_delete", "filename=c.txt")
    child = spawn("watch", task_id, "--answer", "--url", url)
    child.expect(r"accept, decline or cancel\?")
    child.sendintr()
    assert finish(child) == 130
    still = run_mcptask("get", task_id, "--url", url, "-o", "json").json()
    assert still["status"] == "input_required"


def test_without_answer_watch_names_the_command_that_answers(fixtures: Fixtures) -> None:
    url, task_id = fixtures("confirm_delete", "filename=d.txt")
    watched = run_mcptask("watch", task_id, "--url", url, "--wait-timeout", "1")
    assert watched.code == 7, watched.stderr
    assert f"answer with: mcptask answer {task_id}" in watched.stderr
    assert watched.stderr.count("answer with:") == 1  # once per question, not per round


def test_answer_without_a_terminal_is_a_usage_error(fixtures: Fixtures) -> None:
    url, task_id = fixtures("confirm_delete", "filename=e.txt")
    result = run_mcptask("watch", task_id, "--answer", "--url", url)
    result.assert_one_line_error(2, "--answer asks on a terminal", "mcptask answer ID")
    started = run_mcptask("start", "confirm_delete", "filename=f.txt", "--answer", "--url", url)
    started.assert_one_line_error(2, "--answer applies to --watch")


def answer_text(child: pexpect.spawn, question: str, text: str) -> None:
    """Answer a legacy long_job's question (a form with one text field) and send it."""
    child.expect(rf"{question}\s+- answer: string, required")
    child.expect(r"accept, decline or cancel\?")
    child.sendline("")  # the default: accept
    child.expect(r"answer \(string, required\)")
    child.sendline(text)
    child.expect("Send it")
    child.sendline("y")
    child.expect("the answer was sent; watching on")


def test_watch_answer_on_a_legacy_server_answers_each_round(
    reference_server: StartServer,
) -> None:
    # 2025-11-25: the question comes as the server's own request on a held tasks/result.
    url = reference_server("--protocol-eras", "legacy", "--seed", "input_required=1")
    child = spawn("watch", "input_required-001", "--answer", "--url", url)
    answer_text(child, r"Waiting for input \(question 1\)", "go")
    child.sendintr()  # the seeded task keeps working: stop watching
    assert finish(child) == 130
    moved = run_mcptask("get", "input_required-001", "--url", url, "-o", "json").json()
    assert moved["status"] == "working"


def test_the_same_key_asked_anew_is_asked_again(asking: Callable[..., AskingServer]) -> None:
    server = asking({"unlock": SECRET_FORM})
    again: dict[str, Any] = json.loads(json.dumps(SECRET_FORM))
    again["params"]["message"] = "Wrong: try again"
    server.after = {"status": "input_required", "inputRequests": {"unlock": again}}
    child = spawn("watch", "t1", "--answer", "--interval", "0.1", "--url", server.url)
    child.expect(r"\[unlock\] accept, decline or cancel\?")
    child.sendline("accept")
    child.expect(r"vault \(string, required\)")
    child.sendline("")
    child.expect(r"passphrase \(string")
    child.sendline("s3cret-words")
    child.expect("Send it")
    child.sendline("y")
    child.expect("the answer was sent; watching on")
    child.expect(r"task t1 asks \(1 request\):\s+\[unlock\] a form\s+Wrong: try again")
    child.expect(r"\[unlock\] accept, decline or cancel\?")
    child.sendintr()
    assert finish(child) == 130
    assert len(server.updates) == 1


def test_sigterm_at_the_prompt_stops_the_watch_and_sends_nothing(fixtures: Fixtures) -> None:
    url, task_id = fixtures("confirm_delete", "filename=g.txt")
    child = spawn("watch", task_id, "--answer", "--url", url)
    child.expect(r"accept, decline or cancel\?")
    child.kill(signal.SIGTERM)
    assert finish(child) == 130
    still = run_mcptask("get", task_id, "--url", url, "-o", "json").json()
    assert still["status"] == "input_required"


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_start_watch_answer_on_a_legacy_server_asks_every_round(
    reference_server: StartServer, transport: str
) -> None:
    steps = [[0, "input_required", "Which branch?"], [0.2, "input_required", "Sure?"]]
    steps.append([0.2, "completed", "deployed"])
    if transport == "http":
        server = ["--url", reference_server("--protocol-eras", "legacy")]
    else:
        server = ["--server", reference_stdio_command("--protocol-eras", "legacy")]
    child = spawn(
        "start", "long_job", "awaitInput:=true", f"steps:={json.dumps(steps)}",
        "--watch", "--answer", *server,
    )  # fmt: skip
    answer_text(child, r"Which branch\?", "main")
    answer_text(child, r"Sure\?", "yes")  # asked again: on the held stream (and GET: once)
    child.expect("completed")
    assert finish(child) == 0, child.logfile_read.getvalue()


def test_watch_answer_on_a_legacy_stdio_server_answers_a_scripted_task(
    tmp_path: Path,
) -> None:
    # Over stdio the watch's one server process holds the task: --tasks-file puts it there.
    steps = [[0, "input_required", "Which branch?"], [0.2, "input_required", "Sure?"]]
    steps.append([0.2, "completed", "deployed"])
    tasks = tmp_path / "tasks.json"
    tasks.write_text(json.dumps([{"taskId": "ask-1", "awaitInput": True, "steps": steps}]))
    server = reference_stdio_command("--protocol-eras", "legacy", "--tasks-file", str(tasks))
    child = spawn("watch", "ask-1", "--answer", "--server", server)
    answer_text(child, r"Which branch\?", "main")
    answer_text(child, r"Sure\?", "yes")
    child.expect("completed")
    assert finish(child) == 0, child.logfile_read.getvalue()


def test_watch_answer_accepts_a_legacy_url_question_once_done_at_the_site(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BROWSER", "false")  # never a real browser, were one asked for
    steps = [[0, "input_required", "Sign in"], [0.2, "completed", "signed in"]]
    visit = "https://auth.example.com/consent?x=1"
    tasks = tmp_path / "tasks.json"
    entry = {"taskId": "ask-1", "awaitInput": True, "askUrl": visit, "steps": steps}
    tasks.write_text(json.dumps([entry]))
    server = reference_stdio_command("--protocol-eras", "legacy", "--tasks-file", str(tasks))
    child = spawn("watch", "ask-1", "--answer", "--server", server)
    child.expect(r"a URL to visit\s+Sign in\s+URL: https://auth\.example\.com/consent\?x=1")
    child.expect(r"host: auth\.example\.com")
    child.expect(r"accept, decline or cancel\?")
    child.sendline("accept")
    child.expect("Open the URL in a browser")
    child.sendline("n")
    child.expect("Have you finished at the site")
    child.sendline("y")
    child.expect("Send it")
    child.sendline("y")
    child.expect("the answer was sent; watching on")
    child.expect("completed")
    assert finish(child) == 0, child.logfile_read.getvalue()

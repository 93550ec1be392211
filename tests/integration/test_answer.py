"""`mcptask answer` end to end: the real process answers tasks that wait for input on real
servers: the reference server (long_job with awaitInput, HTTP and stdio), its conformance
fixture tools (a boolean form; two requests at once), and a server of the test's own for
what those do not ask (secrets, a URL to visit, sampling, hostile text). Interactive runs go
through a real terminal (pexpect)."""

from __future__ import annotations

import io
import json
import os
import threading
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pexpect
import pytest

from tests.cli_process import reference_stdio_command, run_mcptask, spawn_mcptask
from tests.conftest import StartServer
from tests.reference_server_process import FIXTURES_ARG, running_reference_server
from tests.security.hostile_http import Background

Target = Callable[..., list[str]]
ASK = {"steps": [[0, "input_required", "Which branch?"], [0.2, "completed", "deployed"]]}


@pytest.fixture(params=["http", "stdio"])
def target(request: pytest.FixtureRequest, reference_server: StartServer) -> Target:
    """`--url`/`--server` options for a reference server started with `args`."""

    def make(*args: str) -> list[str]:
        if request.param == "http":
            return ["--url", reference_server(*args)]
        return ["--server", reference_stdio_command(*args)]

    return make


def tasks_file(tmp_path: Path, **task: Any) -> str:
    path = tmp_path / "tasks.json"
    path.write_text(json.dumps([{"taskId": "ask-1", "awaitInput": True, **ASK, **task}]))
    return str(path)


def test_an_answer_from_items_moves_the_task_on(target: Target, tmp_path: Path) -> None:
    server = target("--protocol-eras", "modern", "--tasks-file", tasks_file(tmp_path))
    answered = run_mcptask("answer", "ask-1", *server, "answer=main", "-o", "json")
    assert answered.code == 0, answered.stderr
    report = answered.json()
    assert report["outcome"] in ("working", "completed")
    assert report["sent"] == {"input-1": {"action": "accept", "content": {"answer": "main"}}}
    assert report["asked"]["input-1"]["method"] == "elicitation/create"
    assert report["task"]["status"] == report["status"]


def test_a_task_that_does_not_wait_is_left_alone(target: Target) -> None:
    server = target("--protocol-eras", "modern", "--seed", "working=1")
    result = run_mcptask("answer", "working-001", *server, "answer=x", "-o", "json")
    assert result.code == 6, result.stderr
    assert result.json()["outcome"] == "not-waiting"
    assert result.json()["sent"] == {}


def test_result_of_a_task_that_waits_for_input_names_answer(target: Target, tmp_path: Path) -> None:
    server = target("--protocol-eras", "modern", "--tasks-file", tasks_file(tmp_path))
    result = run_mcptask("result", "ask-1", *server, "--wait-timeout", "60", "-o", "json")
    assert result.code == 7  # at once: waiting cannot help
    assert "waits for input" in result.stderr
    assert "mcptask answer ask-1" in result.stderr


def test_a_url_question_of_the_reference_server_is_accepted_when_asked(
    target: Target, tmp_path: Path
) -> None:
    visit = "https://auth.example.com/consent?x=1"
    path = tasks_file(tmp_path, askUrl=visit)
    server = target("--protocol-eras", "modern", "--tasks-file", path)
    shown = run_mcptask("answer", "ask-1", *server, "-o", "table")
    assert shown.code == 2
    assert f"URL: {visit}" in shown.stderr
    assert "host: auth.example.com" in shown.stderr
    accepted = run_mcptask("answer", "ask-1", *server, "--accept", "-o", "json")
    assert accepted.code == 0, accepted.stderr
    report = accepted.json()
    assert report["asked"]["input-1"]["params"]["mode"] == "url"
    assert report["sent"] == {"input-1": {"action": "accept"}}


# -- several requests at once, a boolean form, decline ------------------------------------------


@pytest.fixture(scope="module")
def fixtures_url() -> Iterator[str]:
    """One modern server with the conformance fixture tools for the module: each test starts
    and answers a task of its own, so none sees another's."""
    with running_reference_server("--protocol-eras", "modern", FIXTURES_ARG) as url:
        yield url


@pytest.fixture
def fixtures(fixtures_url: str) -> Callable[..., tuple[str, str]]:
    """Starts TOOL on the fixture tools' server, gives (url, id)."""
    url = fixtures_url

    def start(tool: str, *items: str) -> tuple[str, str]:
        started = run_mcptask("start", tool, *items, "--url", url, "-o", "ids")
        assert started.code == 0, started.stderr
        return url, started.stdout.strip()

    return start


def test_two_requests_answered_one_by_key_then_the_other(
    fixtures: Callable[..., tuple[str, str]],
) -> None:
    url, task_id = fixtures("multi_input")
    ambiguous = run_mcptask("answer", task_id, "--url", url, "name=bob")
    ambiguous.assert_one_line_error(2, "asks 2 things at once", "--key KEY")
    first = run_mcptask("answer", task_id, "--url", url, "--key", "confirm-1", "confirm=yes")
    assert first.code == 0, first.stderr
    assert first.json()["outcome"] == "input_required"
    assert list(first.json()["task"]["inputRequests"]) == ["name-1"]
    second = run_mcptask("answer", task_id, "--url", url, "name=bob", "-o", "table")
    assert second.code == 0, second.stderr
    assert "the answer was taken" in second.stdout
    result = run_mcptask("result", task_id, "--url", url, "-o", "json")
    assert "name=bob, confirm=True" in result.stdout


def test_a_file_answers_both_and_a_misfit_sends_nothing(
    fixtures: Callable[..., tuple[str, str]], tmp_path: Path
) -> None:
    url, task_id = fixtures("multi_input")
    answer = {
        "name-1": {"action": "accept", "content": {"name": "al"}},
        "confirm-1": {"action": "accept", "content": {"confirm": "yes"}},
    }
    misfit = run_mcptask(
        "answer", task_id, "--url", url, "--from-file", "-", stdin=json.dumps(answer)
    )
    misfit.assert_one_line_error(2, "'confirm-1'", "field 'confirm'", "not of type 'boolean'")
    unchanged = run_mcptask("get", task_id, "--url", url, "-o", "json").json()
    assert set(unchanged["inputRequests"]) == {"name-1", "confirm-1"}
    answer["confirm-1"]["content"] = {"confirm": True, "force": True}
    unknown = run_mcptask(
        "answer", task_id, "--url", url, "--from-file", "-", stdin=json.dumps(answer)
    )
    unknown.assert_one_line_error(2, "the form of 'confirm-1' has no field 'force'")
    answer["confirm-1"]["content"] = {"confirm": True}
    path = tmp_path / "answer.json"
    path.write_text(json.dumps(answer))
    sent = run_mcptask("answer", task_id, "--url", url, "--from-file", str(path))
    assert sent.code == 0, sent.stderr
    assert sent.json()["outcome"] in ("working", "completed")  # the worker ends it at once


def test_decline_is_sent_and_the_tool_takes_it(fixtures: Callable[..., tuple[str, str]]) -> None:
    url, task_id = fixtures("confirm_delete", "filename=notes.txt")
    declined = run_mcptask("answer", task_id, "--url", url, "--decline")
    assert declined.code == 0, declined.stderr
    assert declined.json()["sent"] == {"confirm-1": {"action": "decline"}}
    result = run_mcptask("result", task_id, "--url", url, "-o", "json")
    assert "Kept notes.txt" in result.stdout


# -- on a terminal -------------------------------------------------------------------------------


def spawn(*args: str) -> pexpect.spawn:
    # All of this process's environment (a test may set BROWSER), as a user's shell has it.
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPTASK_")}
    child = spawn_mcptask(*args, env={**env, "COLUMNS": "120"}, term="dumb", echo=False)
    child.logfile_read = io.StringIO()  # the whole transcript, as the terminal showed it
    return child


def test_a_person_answers_field_by_field(fixtures: Callable[..., tuple[str, str]]) -> None:
    url, task_id = fixtures("multi_input")
    child = spawn("answer", task_id, "--url", url)
    child.expect(r"\[name-1\] accept, decline or cancel\?")
    child.sendline("")  # the default: accept
    child.expect(r"name \(string, required\)")
    child.sendline("carol")
    child.expect(r"\[confirm-1\] accept, decline or cancel\?")
    child.sendline("accept")
    child.expect(r"confirm \(boolean, required\)")
    child.sendline("perhaps")
    child.expect("is not true or false")  # checked before moving on
    child.expect(r"confirm \(boolean, required\)")
    child.sendline("y")
    child.expect("Send it")
    child.sendline("y")
    child.expect("the answer was taken")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    result = run_mcptask("result", task_id, "--url", url, "-o", "json")
    assert "name=carol, confirm=True" in result.stdout


@pytest.mark.parametrize("stop", ["ctrl-c", "ctrl-d", "say-no"])
def test_stopping_at_the_prompt_sends_nothing(
    fixtures: Callable[..., tuple[str, str]], stop: str
) -> None:
    url, task_id = fixtures("confirm_delete", "filename=a.txt")
    child = spawn("answer", task_id, "--url", url)
    child.expect(r"accept, decline or cancel\?")
    if stop == "ctrl-c":
        child.sendintr()
    elif stop == "ctrl-d":  # end of input at the prompt: Click makes it an abort
        child.sendeof()
        child.expect("interrupted")
    else:
        child.sendline("accept")
        child.expect(r"confirm \(boolean, required\)")
        child.sendline("true")
        child.expect("Send it")
        child.sendline("n")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 130
    still = run_mcptask("get", task_id, "--url", url, "-o", "json").json()
    assert still["status"] == "input_required"


# -- what the reference server does not ask: a server of the test's own -------------------------


class AskingServer(Background):
    """A 2026-07-28 server with one task, `t1`, that asks `requests` until tasks/update
    answers them all, then completes; it keeps every answer it got."""

    def __init__(self, requests: Any, message: str = "") -> None:
        self.requests = requests
        self.message = message
        self.after: dict[str, Any] = {"status": "completed"}
        """What tasks/get says of the task once answered."""
        self.updates: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                result = owner.answer(body["method"], body.get("params") or {})
                data = json.dumps({"jsonrpc": "2.0", "id": body["id"], "result": result})
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data.encode())

            def log_message(self, format: str, *args: object) -> None:
                pass

        super().__init__(ThreadingHTTPServer(("127.0.0.1", 0), Handler))
        self.url = f"http://127.0.0.1:{self.port}/mcp"

    def answer(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        if method == "server/discover":
            return {
                "resultType": "complete",
                "supportedVersions": ["2026-07-28"],
                "capabilities": {"extensions": {"io.modelcontextprotocol/tasks": {}}},
                "serverInfo": {"name": "asking", "version": "1"},
            }
        with self.lock:
            if method == "tasks/update":
                self.updates.append(params["inputResponses"])
                return {"resultType": "complete"}
            task: dict[str, Any] = {"resultType": "complete", "taskId": "t1", "ttlMs": None}
            if self.updates:
                return {**task, **self.after, "pollIntervalMs": 100}
            task.update(status="input_required", inputRequests=self.requests, pollIntervalMs=100)
            if self.message:
                task["statusMessage"] = self.message
            return task


@pytest.fixture
def asking() -> Iterator[Callable[..., AskingServer]]:
    servers: list[AskingServer] = []

    def make(requests: Any, message: str = "") -> AskingServer:
        server = AskingServer(requests, message)
        server.__enter__()
        servers.append(server)
        return server

    yield make
    for server in servers:
        server.__exit__(None, None, None)


SECRET_FORM = {
    "method": "elicitation/create",
    "params": {
        "message": "Unlock the vault",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "vault": {"type": "string", "enum": ["dev", "prod"], "default": "dev"},
                "passphrase": {
                    "type": "string",
                    "format": "password",
                    "minLength": 4,
                    "default": "server-default-pw",
                },
            },
            "required": ["vault", "passphrase"],
        },
    },
}


def test_a_secret_is_sent_but_never_shown(asking: Callable[..., AskingServer]) -> None:
    server = asking({"unlock": SECRET_FORM})
    child = spawn("answer", "t1", "--url", server.url)
    child.expect(r"\[unlock\] accept, decline or cancel\?")
    child.sendline("accept")
    child.expect(r"vault \(string, required\)")
    child.sendline("")  # the default the server suggests
    child.expect(r"passphrase \(string, min length 4, format password, required\)")
    child.sendline("abc")  # too short: asked again, not echoed
    child.expect("too short")
    child.sendline("s3cret-words")
    child.expect("Send it")
    child.sendline("y")
    child.expect(pexpect.EOF)
    child.close()
    assert isinstance(child.logfile_read, io.StringIO)
    transcript = child.logfile_read.getvalue()
    assert child.exitstatus == 0, transcript
    assert server.updates == [
        {"unlock": {"action": "accept", "content": {"vault": "dev", "passphrase": "s3cret-words"}}}
    ]
    assert "s3cret-words" not in transcript
    assert "abc" not in transcript  # not even in why it was refused
    assert "server-default-pw" not in transcript
    scripted = asking({"unlock": SECRET_FORM})
    sent = run_mcptask(
        "answer", "t1", "--url", scripted.url, "vault=prod", "passphrase=hunter22", "-o", "json"
    )
    assert sent.code == 0, sent.stderr
    assert "hunter22" not in sent.stdout + sent.stderr
    assert sent.json()["sent"]["unlock"]["content"]["passphrase"] == "<hidden>"
    assert scripted.updates[0]["unlock"]["content"]["passphrase"] == "hunter22"


def test_a_secret_that_does_not_fit_is_refused_without_showing_it(
    asking: Callable[..., AskingServer],
) -> None:
    server = asking({"unlock": SECRET_FORM})
    refused = run_mcptask("answer", "t1", "--url", server.url, "vault=dev", "passphrase=q7%")
    refused.assert_one_line_error(2, "field 'passphrase'", "(hidden) is too short")
    assert "q7%" not in refused.stderr
    assert server.updates == []


def test_the_wire_log_never_shows_a_secret(asking: Callable[..., AskingServer]) -> None:
    server = asking({"unlock": SECRET_FORM})
    answer = ["vault=dev", 'passphrase=pa"ss-ß', "-v"]
    sent = run_mcptask("answer", "t1", "--url", server.url, *answer)
    assert sent.code == 0, sent.stderr
    assert server.updates[0]["unlock"]["content"]["passphrase"] == 'pa"ss-ß'
    assert "tasks/update" in sent.stderr
    assert "ss-\\u00df" not in sent.stderr  # as sent: JSON, ASCII-escaped
    assert "ss-ß" not in sent.stderr
    assert '"passphrase":<redacted>' in sent.stderr


@pytest.mark.parametrize(
    ("items", "stdin"),
    [
        (["size=inf"], None),
        (["size=NaN"], None),
        (["size:=Infinity"], None),
        (["--from-file", "-"], '{"action": "accept", "content": {"size": NaN}}'),
    ],
)
def test_a_number_json_cannot_carry_is_refused(
    asking: Callable[..., AskingServer], items: list[str], stdin: str | None
) -> None:
    schema = {"type": "object", "properties": {"size": {"type": "number"}}}
    ask = {"method": "elicitation/create", "params": {"requestedSchema": schema}}
    server = asking({"size": ask})
    refused = run_mcptask("answer", "t1", "--url", server.url, *items, stdin=stdin)
    refused.assert_one_line_error(2, "is not")
    assert server.updates == []


def test_a_form_that_cannot_be_checked_is_sent_with_a_warning(
    asking: Callable[..., AskingServer],
) -> None:
    schema = {"type": "object", "properties": {"size": {"type": "no-such-type"}}}
    server = asking(
        {"odd": {"method": "elicitation/create", "params": {"requestedSchema": schema}}}
    )
    sent = run_mcptask("answer", "t1", "--url", server.url, "size=3")
    assert sent.code == 0, sent.stderr
    assert "the form of 'odd' cannot be used" in sent.stderr
    assert "its answer was not checked" in sent.stderr
    assert server.updates == [{"odd": {"action": "accept", "content": {"size": "3"}}}]


def test_a_url_request_shows_its_host_and_is_accepted_only_when_asked(
    asking: Callable[..., AskingServer],
) -> None:
    visit = {
        "method": "elicitation/create",
        "params": {
            "mode": "url",
            "url": "https://auth.example.com/consent?x=1",
            "message": "Consent",
        },
    }
    server = asking({"visit": visit})
    shown = run_mcptask("answer", "t1", "--url", server.url, "-o", "table")
    assert shown.code == 2
    assert "URL: https://auth.example.com/consent?x=1" in shown.stderr
    assert "host: auth.example.com" in shown.stderr
    assert server.updates == []
    accepted = run_mcptask("answer", "t1", "--url", server.url, "--accept")
    assert accepted.code == 0, accepted.stderr
    assert server.updates == [{"visit": {"action": "accept"}}]


@pytest.mark.parametrize("url", ["file:///etc/passwd", "-new-window", "https://ok.example/x"])
def test_a_browser_is_opened_only_for_a_web_url(
    asking: Callable[..., AskingServer],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    url: str,
) -> None:
    opened = tmp_path / "opened"
    browser = tmp_path / "browser"
    browser.write_text(f'#!/bin/sh\nprintf "%s" "$1" > {opened}\n')
    browser.chmod(0o755)
    monkeypatch.setenv("BROWSER", str(browser))
    visit = {"method": "elicitation/create", "params": {"mode": "url", "url": url}}
    server = asking({"visit": visit})
    child = spawn("answer", "t1", "--url", server.url)
    child.expect(r"accept, decline or cancel\?")
    child.sendline("accept")
    if url.startswith("https"):
        child.expect("Open the URL in a browser")
        child.sendline("y")
    else:
        child.expect("opens no browser: not an http")
    child.expect("Have you finished at the site")
    child.sendline("n")
    child.expect("Send it")
    child.sendline("n")
    child.expect(pexpect.EOF)
    child.close()
    if url.startswith("https"):
        assert opened.read_text() == url
    else:
        assert not opened.exists()
    assert server.updates == []


def test_sampling_is_answered_only_from_a_file(asking: Callable[..., AskingServer]) -> None:
    sampling = {"method": "sampling/createMessage", "params": {"messages": [], "maxTokens": 5}}
    server = asking({"llm": sampling})
    refused = run_mcptask("answer", "t1", "--url", server.url, "text=hi")
    refused.assert_one_line_error(2, "sampling/createMessage, not a form", "--from-file")
    response = {"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "me"}
    sent = run_mcptask(
        "answer", "t1", "--url", server.url, "--from-file", "-", stdin=json.dumps(response)
    )
    assert sent.code == 0, sent.stderr
    assert server.updates == [{"llm": response}]


def test_watch_shows_what_a_silent_task_asks(asking: Callable[..., AskingServer]) -> None:
    server = asking({"unlock": SECRET_FORM})
    child = spawn("watch", "t1", "--url", server.url, "--wait-timeout", "1")
    child.expect("asks: Unlock the vault")  # the live table on a terminal
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 7


def test_hostile_text_in_a_question_is_shown_inert(asking: Callable[..., AskingServer]) -> None:
    hostile = {
        "method": "elicitation/create",
        "params": {
            "message": "\x1b]0;owned\x07[red]Approve?[/red]\x1b[2J",
            "requestedSchema": {
                "type": "object",
                "properties": {"[bold]ok\x1b[31m": {"type": "boolean", "description": "\x07y"}},
            },
        },
    }
    server = asking({"k[/]": hostile})
    shown = run_mcptask("answer", "t1", "--url", server.url, "-o", "table")
    assert shown.code == 2
    assert "\x1b" not in shown.stderr
    assert "\x07" not in shown.stderr
    assert "[red]Approve?[/red]" in shown.stderr
    assert "[bold]ok" in shown.stderr
    assert "[k[/]]" in shown.stderr
    assert server.updates == []


def test_start_watch_stops_at_its_wait_timeout_on_a_task_that_asks(target: Target) -> None:
    server = target("--protocol-eras", "modern")
    steps = json.dumps([[0, "input_required", "Which branch?"]])
    watched = run_mcptask(
        "start", "long_job", f"steps:={steps}", "awaitInput:=true", *server,
        "--watch", "--wait-timeout", "1", "-o", "jsonl",
    )  # fmt: skip
    assert watched.code == 7, watched.stderr
    assert json.loads(watched.stdout.splitlines()[-1])["status"] == "input_required"
    alone = run_mcptask("start", "long_job", *server, "--wait-timeout", "1")
    alone.assert_one_line_error(2, "--wait-timeout applies to --watch")


def test_an_input_required_task_that_asks_nothing_is_the_servers_fault(
    asking: Callable[..., AskingServer],
) -> None:
    server = asking({})
    result = run_mcptask("answer", "t1", "--url", server.url, "answer=x")
    result.assert_one_line_error(8, "says nothing of what it asks")
    assert server.updates == []


def test_an_answer_sent_but_not_followed_says_so(asking: Callable[..., AskingServer]) -> None:
    server = asking({"unlock": SECRET_FORM})
    server.after = {"status": "input_required", "inputRequests": "broken"}
    result = run_mcptask(
        "answer", "t1", "--url", server.url, "vault=dev", "passphrase=long-enough", "-o", "json"
    )
    assert result.code == 0, result.stderr
    assert result.json()["outcome"] == "sent"
    assert "the answer was sent, but the task could not be followed" in result.stderr
    assert "mcptask get t1" in result.stderr
    assert len(server.updates) == 1


def test_the_same_key_asked_anew_is_a_new_question(asking: Callable[..., AskingServer]) -> None:
    server = asking({"unlock": SECRET_FORM})
    again: dict[str, Any] = json.loads(json.dumps(SECRET_FORM))
    again["params"]["message"] = "Wrong: try again"
    server.after = {"status": "input_required", "inputRequests": {"unlock": again}}
    result = run_mcptask(
        "answer", "t1", "--url", server.url, "vault=dev", "passphrase=long-enough", "-o", "json"
    )
    assert result.code == 0, result.stderr
    assert result.json()["outcome"] == "input_required"  # not "unchanged" after a long wait
    assert result.json()["task"]["inputRequests"]["unlock"]["params"]["message"] == (
        "Wrong: try again"
    )


def test_key_on_a_terminal_asks_only_that_request(
    fixtures: Callable[..., tuple[str, str]],
) -> None:
    url, task_id = fixtures("multi_input")
    child = spawn("answer", task_id, "--url", url, "--key", "confirm-1")
    child.expect(r"\[confirm-1\] accept, decline or cancel\?")
    child.sendline("accept")
    child.expect(r"confirm \(boolean, required\)")
    child.sendline("yes")
    child.expect("Send it")
    child.sendline("y")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert isinstance(child.logfile_read, io.StringIO)
    assert "[name-1] accept" not in child.logfile_read.getvalue()

"""The real `mcptask` executable against a third-party MCP 2026-07-28 server with the tasks
extension ``io.modelcontextprotocol/tasks`` (SEP-2663): FastMCP 4 + fastmcp-tasks 4.1.4.

The server (ext_tasks_server.py) runs in its own venv, ``.venv-thirdparty``, built on first use
by env.py. Tasks are created with raw stateless 2026-07-28 ``tools/call long_job`` requests
(env.start_task), never with mcptask, and checked with raw ``tasks/get`` (env.get_task), so each
test compares what mcptask says with what the server says.

What the server does that shapes these tests (see README.md beside this file):
- every request is stateless: no initialize, no session; any client sees any task;
- ``tasks/cancel`` answers an empty ack, and the next ``tasks/get`` says ``cancelled``;
- a tool error ends a task ``completed`` with ``result.isError: true``, never ``failed``;
- there is no ``tasks/list`` (-32601) and no ``subscriptions/listen`` (-32601): mcptask's watch
  must poll;
- task ids are base64url and may begin with ``-``, so ids always come after ``--``;
- the Docket worker runs at most 10 tasks at once, so every long task is cancelled at teardown.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import queue
import re
import subprocess
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import httpx
import pytest

from tests.cli_process import Result, mcptask_argv, run_mcptask

from .env import (
    EXTENSION,
    PROTOCOL_VERSION,
    TERMINAL,
    RpcError,
    cancel_task,
    get_task,
    start_ext_tasks_server,
    start_task,
    stop,
    wait_for_status,
)

JSON = dict[str, Any]

SERVER_NAME = "mcptask-thirdparty-ext-tasks"
SERVER_VERSION = "4.1.4"
LONG = 600.0  # seconds a "long" task works: longer than the whole suite
SHORT = 0.2  # seconds a "short" task works before it completes
WATCHED = 3.0  # seconds a watched task works: it is seen working first, then completed
DEADLINE = 60.0  # per mcptask run and per wait: only against hangs, never asserted on
UNKNOWN_ID = "no-such-task-7e3a"
WATCH_KEYS = {"time", "taskId", "previous", "status", "statusMessage"}
CANCEL_RESULT_KEYS = {"taskId", "outcome", "status", "message"}
OUTCOMES = (
    "cancelled",
    "already-finished",
    "not-found",
    "pending",
    "requested",
    "unknown",
    "error",
    "skipped",
)
NO_LIST_FRAGMENTS = ("2026-07-28", "tasks/list", "--from-file", "stdin")


# --------------------------------------------------------------------------------------------
# Fixtures
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    """One server for the module (it takes ~5 s to come up); yields its URL."""
    url, proc = start_ext_tasks_server()
    try:
        yield url
    finally:
        stop(proc)


class Tasks:
    """Creates long_job tasks on the server; cancels the unfinished ones at teardown."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.ids: list[str] = []

    def start(self, seconds: float, outcome: str = "completed") -> str:
        task_id = start_task(self.url, seconds, outcome)
        self.ids.append(task_id)
        return task_id

    def finished(self, seconds: float = SHORT, outcome: str = "completed") -> str:
        """A task that has already completed (waited for with raw tasks/get)."""
        task_id = self.start(seconds, outcome)
        assert wait_for_status(self.url, task_id, timeout=DEADLINE)["status"] == "completed"
        return task_id

    def cleanup(self) -> None:
        for task_id in self.ids:
            with contextlib.suppress(RpcError, httpx.HTTPError, AssertionError):
                if get_task(self.url, task_id)["status"] not in TERMINAL:
                    cancel_task(self.url, task_id)


@pytest.fixture
def tasks(server: str) -> Iterator[Tasks]:
    factory = Tasks(server)
    yield factory
    factory.cleanup()


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def mcptask(*args: str, stdin: str | None = None) -> Result:
    return run_mcptask(*args, stdin=stdin, timeout=DEADLINE)


def without_volatile(task: JSON) -> JSON:
    """A task without lastUpdatedAt, which the server bumps while the task works."""
    return {key: value for key, value in task.items() if key != "lastUpdatedAt"}


def cancel_json(result: Result) -> JSON:
    assert "Traceback" not in result.stderr, result.stderr
    try:
        document: JSON = result.json()
    except json.JSONDecodeError:
        raise AssertionError(
            f"cancel printed no JSON (exit {result.code}); stdout: {result.stdout!r}; "
            f"stderr: {result.stderr!r}"
        ) from None
    assert set(document) >= {"results", "summary", "interrupted", "error", "exitCode"}, document
    assert document["exitCode"] == result.code, document
    for row in document["results"]:
        assert set(row) == CANCEL_RESULT_KEYS, row
    return document


def summary(**counts: int) -> dict[str, int]:
    """A cancel summary: every outcome, 0 unless given."""
    return {outcome: counts.get(outcome.replace("-", "_"), 0) for outcome in OUTCOMES}


def parse_watch_lines(stdout: str) -> list[JSON]:
    """The JSON lines of `watch -o jsonl`, each checked for the documented shape."""
    lines: list[JSON] = []
    for raw in stdout.splitlines():
        if not raw.strip():
            continue
        line: JSON = json.loads(raw)
        assert set(line) == WATCH_KEYS, line
        assert isinstance(line["time"], str), line
        datetime.fromisoformat(line["time"].replace("Z", "+00:00"))
        lines.append(line)
    return lines


def transitions(lines: list[JSON], task_id: str) -> list[tuple[str | None, str]]:
    """(previous, status) of each line about `task_id`, in order."""
    return [(line["previous"], line["status"]) for line in lines if line["taskId"] == task_id]


@dataclass(frozen=True)
class Post:
    """One POST as mcptask's -v log shows it: `> POST URL {headers} {body}`."""

    url: str
    headers: dict[str, str]
    body: JSON

    @property
    def method(self) -> str:
        method: str = self.body["method"]
        return method

    @property
    def params(self) -> JSON:
        params: JSON = self.body.get("params", {})
        return params


POST_LINE = re.compile(r"> POST (\S+) (\{[^{}]*\}) (\{.*\})\s*$")


def wire_posts(stderr: str) -> list[Post]:
    posts: list[Post] = []
    for line in stderr.splitlines():
        match = POST_LINE.match(line)
        if match is None:
            continue
        headers = ast.literal_eval(match.group(2))
        assert isinstance(headers, dict), line
        posts.append(Post(match.group(1), headers, json.loads(match.group(3))))
    assert posts, f"no '> POST' lines in the -v log:\n{stderr}"
    return posts


def assert_modern_wire(posts: list[Post], url: str) -> None:
    """Every POST is a stateless 2026-07-28 request with the routing headers and `_meta`."""
    for post in posts:
        headers = {name.lower(): value for name, value in post.headers.items()}
        assert post.url == url
        assert headers.get("mcp-protocol-version") == PROTOCOL_VERSION, post
        assert headers.get("mcp-method") == post.method, post
        assert "mcp-session-id" not in headers, post
        accept = headers.get("accept", "")
        assert "application/json" in accept, post
        assert "text/event-stream" in accept, post
        if post.method == "tools/call" or post.method.startswith("tasks/"):
            name = post.params.get("name", post.params.get("taskId"))
            assert headers.get("mcp-name") == name, post
        meta: JSON = post.params.get("_meta", {})
        assert meta.get("io.modelcontextprotocol/protocolVersion") == PROTOCOL_VERSION, post
        capabilities: JSON = meta.get("io.modelcontextprotocol/clientCapabilities", {})
        assert EXTENSION in capabilities.get("extensions", {}), post
        assert meta.get("io.modelcontextprotocol/clientInfo", {}).get("name") == "mcptask", post
    assert "initialize" not in [post.method for post in posts]


class Watcher:
    """`mcptask watch` as a background process whose stdout lines can be awaited one by one."""

    def __init__(self, *args: str) -> None:
        environment = {k: v for k, v in os.environ.items() if not k.startswith("MCPTASK_")}
        environment.update({"NO_COLOR": "1", "COLUMNS": "200"})
        self.proc = subprocess.Popen(
            [*mcptask_argv(), "watch", *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=environment,
        )
        self.lines: queue.Queue[str | None] = queue.Queue()
        self.stderr_chunks: list[str] = []
        self.seen: list[str] = []
        threading.Thread(target=self._read_stdout, daemon=True).start()
        threading.Thread(target=self._read_stderr, daemon=True).start()

    def _read_stdout(self) -> None:
        assert self.proc.stdout is not None
        with self.proc.stdout:
            for line in self.proc.stdout:
                self.lines.put(line)
        self.lines.put(None)

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        with self.proc.stderr:
            for chunk in self.proc.stderr:
                self.stderr_chunks.append(chunk)

    def next_line(self) -> JSON:
        try:
            line = self.lines.get(timeout=DEADLINE)
        except queue.Empty:
            raise AssertionError(
                f"watch printed nothing in {DEADLINE}s; so far: {self.seen}"
            ) from None
        if line is None:
            raise AssertionError(
                f"watch ended (exit {self.proc.wait(timeout=DEADLINE)}) after {self.seen}; "
                f"stderr: {''.join(self.stderr_chunks)}"
            )
        self.seen.append(line)
        return parse_watch_lines(line)[0]

    def finish(self) -> tuple[int, list[JSON]]:
        """Wait for the watch to end; return its exit code and the lines it printed since."""
        code = self.proc.wait(timeout=DEADLINE)
        rest: list[JSON] = []
        while (line := self.lines.get(timeout=DEADLINE)) is not None:
            self.seen.append(line)
            rest.extend(parse_watch_lines(line))
        return code, rest

    @property
    def stderr(self) -> str:
        return "".join(self.stderr_chunks)

    def stop(self) -> None:
        stop(self.proc)


# --------------------------------------------------------------------------------------------
# connect
# --------------------------------------------------------------------------------------------


def assert_modern_connect(document: JSON, url: str) -> None:
    assert document["server"]["name"] == SERVER_NAME
    assert document["server"]["version"] == SERVER_VERSION
    assert document["protocolVersion"] == PROTOCOL_VERSION
    assert document["era"] == "modern"
    assert document["supportedVersions"] == [PROTOCOL_VERSION]
    assert EXTENSION in document["extensions"]
    assert document["transport"] == "http"
    assert document["target"] == url
    assert document["sessionId"] is None
    assert document["tasks"] == {
        "supported": True,
        "list": False,
        "cancel": True,
        "toolCalls": True,
    }


def test_connect_auto_discovers_2026_07_28_without_initialize(server: str) -> None:
    result = mcptask("connect", server, "-o", "json", "-v")
    assert result.code == 0, result.stderr
    assert_modern_connect(result.json(), server)
    posts = wire_posts(result.stderr)
    assert [post.method for post in posts] == ["server/discover"]
    assert_modern_wire(posts, server)


def test_connect_pinned_to_2026_07_28(server: str) -> None:
    result = mcptask("connect", server, "-o", "json", "--protocol", "2026-07-28")
    assert result.code == 0, result.stderr
    assert_modern_connect(result.json(), server)


# --------------------------------------------------------------------------------------------
# get
# --------------------------------------------------------------------------------------------


def test_get_running_task_shows_it_as_sent(server: str, tasks: Tasks) -> None:
    task_id = tasks.start(LONG)
    result = mcptask("get", "--url", server, "-o", "json", "--", task_id)
    assert result.code == 0, result.stderr
    shown: JSON = result.json()
    assert shown["taskId"] == task_id
    assert shown["status"] == "working"
    assert isinstance(shown["ttlMs"], int)
    assert shown["ttlMs"] > 0
    assert isinstance(shown["pollIntervalMs"], int)
    assert shown["pollIntervalMs"] > 0
    assert shown["resultType"] == "complete"
    assert "result" not in shown
    assert without_volatile(shown) == without_volatile(get_task(server, task_id))


@pytest.mark.parametrize("protocol", ["auto", "2026-07-28"])
def test_get_completed_task_inlines_the_result(server: str, tasks: Tasks, protocol: str) -> None:
    task_id = tasks.finished(SHORT)
    result = mcptask("get", "--url", server, "-o", "json", "--protocol", protocol, "--", task_id)
    assert result.code == 0, result.stderr
    shown: JSON = result.json()
    assert shown["taskId"] == task_id
    assert shown["status"] == "completed"
    assert shown["ttlMs"] > 0
    assert shown["pollIntervalMs"] > 0
    assert shown["result"]["isError"] is False
    assert shown["result"]["content"] == [
        {"type": "text", "text": f"long_job completed after {SHORT:g} s"}
    ]
    assert without_volatile(shown) == without_volatile(get_task(server, task_id))


def test_get_unknown_task_is_exit_6(server: str) -> None:
    result = mcptask("get", "--url", server, "-o", "json", "--", UNKNOWN_ID)
    result.assert_one_line_error(6, UNKNOWN_ID, "not found")


@pytest.mark.parametrize(
    "task_id",
    ["tâche-ü", " padded ", "=?base64?eQ==?="],
    ids=["non-ascii", "padded", "encoded-lookalike"],
)
def test_get_odd_id_reaches_the_server_intact(server: str, task_id: str) -> None:
    """The server checks Mcp-Name against params.taskId (-32020 on a mismatch) and decodes
    SEP-2243's ``=?base64?...?=`` form: an id that cannot go in a header as it is must be
    encoded so the server sees the same id, and answers "not found" rather than -32020."""
    result = mcptask("get", "--url", server, "-o", "json", "--", task_id)
    result.assert_one_line_error(6, "not found")
    assert "-32020" not in result.stderr
    assert "mcp-name" not in result.stderr.lower()


# --------------------------------------------------------------------------------------------
# cancel
# --------------------------------------------------------------------------------------------


def test_cancel_running_task_is_confirmed_by_polling(server: str, tasks: Tasks) -> None:
    task_id = tasks.start(LONG)
    result = mcptask("cancel", "--url", server, "-o", "json", "-v", "--", task_id)
    document = cancel_json(result)
    assert result.code == 0
    assert document["results"] == [
        {"taskId": task_id, "outcome": "cancelled", "status": "cancelled", "message": None}
    ]
    assert document["summary"] == summary(cancelled=1)
    assert document["interrupted"] is False
    assert document["error"] is None
    assert get_task(server, task_id)["status"] == "cancelled"

    # The wire: discover, one tasks/cancel (an ack only), then tasks/get until it says so.
    posts = wire_posts(result.stderr)
    assert_modern_wire(posts, server)
    methods = [post.method for post in posts]
    assert methods[0] == "server/discover"
    assert methods.count("tasks/cancel") == 1
    after_cancel = methods[methods.index("tasks/cancel") + 1 :]
    assert after_cancel, methods
    assert set(after_cancel) == {"tasks/get"}, methods
    for post in posts[1:]:
        assert post.params["taskId"] == task_id
        assert post.headers["Mcp-Name"] == task_id


def test_cancel_no_wait_reports_the_cancel_as_requested(server: str, tasks: Tasks) -> None:
    """The 2026-07-28 cancel answer is only an ack: without polling, the outcome is unknown,
    which the user asked for, so it is `requested` and not a failure."""
    task_id = tasks.start(LONG)
    result = mcptask("cancel", "--url", server, "-o", "json", "--no-wait", "-v", "--", task_id)
    document = cancel_json(result)
    assert result.code == 0
    assert [(r["taskId"], r["outcome"]) for r in document["results"]] == [(task_id, "requested")]
    assert document["summary"] == summary(requested=1)
    methods = [post.method for post in wire_posts(result.stderr)]
    assert methods.count("tasks/cancel") == 1
    assert "tasks/get" not in methods[methods.index("tasks/cancel") :], methods
    # The cancel did reach the server.
    assert wait_for_status(server, task_id, timeout=DEADLINE)["status"] == "cancelled"


def test_cancel_finished_tasks_is_already_finished(server: str, tasks: Tasks) -> None:
    # In 2026-07-28 a tool error ends the task `completed` (with isError), not `failed`.
    done = tasks.finished(SHORT)
    tool_error = tasks.finished(SHORT, outcome="failed")
    result = mcptask("cancel", "--url", server, "-o", "json", "--", done, tool_error)
    document = cancel_json(result)
    assert result.code == 0
    assert [(r["taskId"], r["outcome"], r["status"]) for r in document["results"]] == [
        (done, "already-finished", "completed"),
        (tool_error, "already-finished", "completed"),
    ]
    assert document["summary"] == summary(already_finished=2)
    assert get_task(server, done)["status"] == "completed"
    assert get_task(server, tool_error)["status"] == "completed"


def test_cancel_unknown_task_is_not_found_exit_6(server: str) -> None:
    result = mcptask("cancel", "--url", server, "-o", "json", "--", UNKNOWN_ID)
    document = cancel_json(result)
    assert result.code == 6
    assert len(document["results"]) == 1
    row = document["results"][0]
    assert (row["taskId"], row["outcome"], row["status"]) == (UNKNOWN_ID, "not-found", None)
    assert document["summary"] == summary(not_found=1)
    assert document["error"] is None


def test_cancel_mix_of_running_finished_and_unknown(server: str, tasks: Tasks) -> None:
    done = tasks.finished(SHORT)
    running = tasks.start(LONG)
    result = mcptask("cancel", "--url", server, "-o", "json", "--", running, done, UNKNOWN_ID)
    document = cancel_json(result)
    assert result.code == 6  # not-found wins over the others
    assert [(r["taskId"], r["outcome"], r["status"]) for r in document["results"]] == [
        (running, "cancelled", "cancelled"),
        (done, "already-finished", "completed"),
        (UNKNOWN_ID, "not-found", None),
    ]
    assert document["summary"] == summary(cancelled=1, already_finished=1, not_found=1)
    assert get_task(server, running)["status"] == "cancelled"
    assert get_task(server, done)["status"] == "completed"


def test_cancel_ids_from_stdin(server: str, tasks: Tasks) -> None:
    running = tasks.start(LONG)
    done = tasks.finished(SHORT)
    stdin = f"{running}\n\n{done}\n"
    result = mcptask("cancel", "-", "--url", server, "-o", "json", stdin=stdin)
    document = cancel_json(result)
    assert result.code == 0
    assert [(r["taskId"], r["outcome"], r["status"]) for r in document["results"]] == [
        (running, "cancelled", "cancelled"),
        (done, "already-finished", "completed"),
    ]
    assert get_task(server, running)["status"] == "cancelled"


# --------------------------------------------------------------------------------------------
# No tasks/list in 2026-07-28
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("output", ["table", "json"])
def test_list_is_refused_with_exit_5(server: str, output: str) -> None:
    result = mcptask("list", "--url", server, "-o", output)
    result.assert_one_line_error(5, *NO_LIST_FRAGMENTS)


def test_cancel_all_working_is_refused_and_cancels_nothing(server: str, tasks: Tasks) -> None:
    running = tasks.start(LONG)
    result = mcptask("cancel", "--all-working", "--yes", "--url", server, "-o", "json")
    result.assert_one_line_error(5, "--all-working", *NO_LIST_FRAGMENTS)
    assert get_task(server, running)["status"] == "working"


# --------------------------------------------------------------------------------------------
# watch
# --------------------------------------------------------------------------------------------


def test_watch_until_completed(server: str, tasks: Tasks) -> None:
    task_id = tasks.start(WATCHED)
    result = mcptask("watch", "--url", server, "-o", "jsonl", "--interval", "0.5", "--", task_id)
    assert result.code == 0, result.stderr
    lines = parse_watch_lines(result.stdout)
    assert transitions(lines, task_id) == [(None, "working"), ("working", "completed")]
    assert all(line["statusMessage"] is None for line in lines)
    assert get_task(server, task_id)["status"] == "completed"


def test_watch_tool_error_ends_completed_with_is_error(server: str, tasks: Tasks) -> None:
    # SEP-2663 keeps `failed` for protocol errors: the server ends a task whose tool raised
    # `completed` with result.isError, so even --exit-status exits 0 (it ended completed).
    task_id = tasks.start(WATCHED, outcome="failed")
    result = mcptask(
        "watch", "--url", server, "-o", "jsonl", "--exit-status", "--interval", "0.5",
        "--", task_id,
    )  # fmt: skip
    assert result.code == 0, result.stderr
    assert transitions(parse_watch_lines(result.stdout), task_id) == [
        (None, "working"),
        ("working", "completed"),
    ]
    shown = mcptask("get", "--url", server, "-o", "json", "--", task_id)
    assert shown.code == 0, shown.stderr
    task = shown.json()
    assert task["status"] == "completed"
    assert task["result"]["isError"] is True
    assert task["result"]["content"] == [
        {"type": "text", "text": f"long_job failed after {WATCHED:g} s"}
    ]


def test_watch_sees_a_cancel_from_another_process(server: str, tasks: Tasks) -> None:
    task_id = tasks.start(LONG)
    watcher = Watcher(
        "--url", server, "-o", "jsonl", "--exit-status", "--interval", "0.5", "--", task_id
    )
    try:
        first = watcher.next_line()
        assert (first["taskId"], first["previous"], first["status"]) == (task_id, None, "working")

        cancelled = mcptask("cancel", "--url", server, "-o", "json", "--", task_id)
        assert cancelled.code == 0, cancelled.stderr
        assert cancel_json(cancelled)["results"][0]["outcome"] == "cancelled"

        code, rest = watcher.finish()
        assert transitions(rest, task_id) == [("working", "cancelled")], watcher.seen
        assert code == 7, watcher.stderr
        assert "Traceback" not in watcher.stderr
    finally:
        watcher.stop()


def test_watch_several_tasks_until_all_settle(server: str, tasks: Tasks) -> None:
    quick = tasks.start(WATCHED)
    long = tasks.start(LONG)
    watcher = Watcher(
        "--url", server, "-o", "jsonl", "--exit-status", "--interval", "0.5", "--", quick, long
    )
    try:
        seen: list[JSON] = []
        while ("working", "completed") not in transitions(seen, quick):
            seen.append(watcher.next_line())
        assert watcher.proc.poll() is None, "watch ended while a task was still working"
        cancel_task(server, long)
        code, rest = watcher.finish()
        lines = seen + rest
        assert transitions(lines, quick) == [(None, "working"), ("working", "completed")]
        assert transitions(lines, long) == [(None, "working"), ("working", "cancelled")]
        assert code == 7, watcher.stderr  # one of them ended cancelled
    finally:
        watcher.stop()


def test_watch_of_a_finished_task_prints_one_line(server: str, tasks: Tasks) -> None:
    """Already completed: one line (nothing before it) and exit 0, although the server has no
    subscriptions/listen (-32601), so any push channel mcptask tries fails."""
    task_id = tasks.finished(SHORT)
    result = mcptask("watch", "--url", server, "-o", "jsonl", "-v", "--", task_id)
    assert result.code == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert transitions(parse_watch_lines(result.stdout), task_id) == [(None, "completed")]
    posts = wire_posts(result.stderr)
    assert_modern_wire(posts, server)
    assert "tasks/get" in [post.method for post in posts]


def test_answer_a_task_that_asks_through_fastmcps_guard_pattern(server: str) -> None:
    started = mcptask("start", "confirm_deploy", "target=prod", "--url", server, "-o", "ids")
    assert started.code == 0, started.stderr
    task_id = started.stdout.strip()
    parked_by = time.monotonic() + 60  # the worker parks the task after its first leg
    while True:
        asked = mcptask("get", task_id, "--url", server, "-o", "json")
        parked = asked.code == 0 and asked.json()["status"] == "input_required"
        if parked or time.monotonic() > parked_by:
            break
    assert asked.code == 0, asked.stderr
    (key,) = asked.json()["inputRequests"]
    misfit = mcptask("answer", task_id, "--url", server, 'confirm:="yes"')
    misfit.assert_one_line_error(2, "field 'confirm'", "not of type 'boolean'")
    answered = mcptask("answer", task_id, "--url", server, "confirm=yes", "--wait-timeout", "60")
    assert answered.code == 0, answered.stderr
    report = answered.json()
    assert report["sent"] == {key: {"action": "accept", "content": {"confirm": True}}}
    assert report["outcome"] in ("working", "completed")
    result = mcptask("result", task_id, "--url", server, "--wait-timeout", "60", "-o", "json")
    assert result.json()["result"]["content"][0]["text"] == "deployed prod"

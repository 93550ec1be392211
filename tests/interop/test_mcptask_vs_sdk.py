"""The real `mcptask` executable against the official MCP Python SDK's task server (mcp==1.30.0).

The server (tests/interop/sdk_server/server.py) runs in its own venv; see sdk_env.py. It is
started over Streamable HTTP in both answer modes (SSE and plain JSON) and over stdio.

What the SDK does that shapes these tests (pinned down in test_sdk_server_smoke.py):
- a task belongs to the session that created it: a fresh session lists nothing and gets
  "not found" for it, so mcptask joins the creating session with ``--session-id``;
- every mcptask run opens (and deletes again) a short session of its own, and in mcp 1.30.0
  ending any session stops task creation until the next initialize, so tasks are always created
  right after a fresh initialize (``Session.create``) and before mcptask runs against them;
- tasks/cancel of a finished task is -32602, of an unknown one too;
- answers are routed by JSON-RPC request id within a session, and mcptask numbers its requests
  1, 2, 3... in the session it joins: so no two mcptask runs join one session at the same time
  here, and the harness's own requests carry string ids (see the last test for why).

HTTP servers are module-scoped (one per mode) to keep the suite fast; every test makes its own
session, so tests never see each other's tasks. The "slow" servers delay every tasks/* request
(server.py --latency) so that a bulk cancel runs long enough to be interrupted or held.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import re
import shlex
import signal
import subprocess
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.cli_process import Result, mcptask_argv, run_mcptask

from .sdk_env import (
    PROTOCOL_VERSION,
    HttpMode,
    RpcReply,
    ensure_sdk_venv,
    initialize_session,
    post_rpc,
    sdk_stdio_command,
    start_sdk_server,
    stop,
)

JSON = dict[str, Any]

MODES: tuple[HttpMode, ...] = ("sse", "json")
SERVER_NAME = "mcptask-interop-sdk"
SERVER_VERSION = "1.30.0-interop"
SDK_CAPABILITIES: JSON = {
    "experimental": {},
    "tools": {"listChanged": False},
    "tasks": {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}},
}
TASK_KEYS = {"taskId", "status", "createdAt", "lastUpdatedAt", "ttl", "pollInterval"}
TERMINAL = frozenset({"completed", "failed", "cancelled"})
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
LONG = 600.0  # seconds a "long" task stays working: longer than any test
TTL_MS = 3_600_000  # above LONG: the SDK purges a task at its ttl even while it works
SHORT = 0.2  # seconds a "short" task works before it completes
BULK = 200
# Per tasks/* request on the slow servers: a 200-task cancel takes 200 x 2 x 25 ms = 10 s or more.
LATENCY_MS = 25
DEADLINE = 60.0  # only to avoid hangs; never asserted on
FIXED_STDIO_SCOPE = "5eed" + "0" * 28
UNKNOWN_ID = "no-such-task-4b1d"
FAILED_MESSAGE = "long_job failed after {seconds:g}s as requested"


# --------------------------------------------------------------------------------------------
# Servers and sessions
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SdkServer:
    mode: str
    url: str


_harness_ids = itertools.count(1)


class Session:
    """One MCP session on an SDK server, driven by hand with httpx (the tasks' owner).

    Its requests carry string ids ("harness-N"): the SDK routes answers by request id within
    a session, and mcptask, joining the session, numbers its own requests 1, 2, 3...
    """

    def __init__(self, client: httpx.Client, url: str) -> None:
        self.client = client
        self.url = url
        self.id, _ = initialize_session(client, url)

    def request(
        self, method: str, params: JSON, *, client: httpx.Client | None = None, rpc_id: Any = None
    ) -> RpcReply:
        message: JSON = {
            "jsonrpc": "2.0",
            "id": f"harness-{next(_harness_ids)}" if rpc_id is None else rpc_id,
            "method": method,
            "params": params,
        }
        return post_rpc(client or self.client, self.url, message, self.id)

    def call(self, method: str, params: JSON) -> JSON:
        return self.request(method, params).result

    def create(self, n: int = 1, seconds: float = LONG, outcome: str = "completed") -> list[str]:
        """Create ``n`` long_job tasks in this session (in parallel for big batches)."""
        # A throwaway initialize first: a session that mcptask deleted since our own
        # initialize has stopped task creation in every session (mcp 1.30.0).
        initialize_session(self.client, self.url)

        params: JSON = {
            "name": "long_job",
            "arguments": {"seconds": seconds, "outcome": outcome},
            "task": {"ttl": TTL_MS},
        }

        def create_batch(count: int) -> list[str]:
            with httpx.Client(timeout=DEADLINE) as client:
                return [
                    self.request("tools/call", params, client=client).result["task"]["taskId"]
                    for _ in range(count)
                ]

        if n < 20:
            return create_batch(n)
        workers = 8
        sizes = [n // workers + (1 if i < n % workers else 0) for i in range(workers)]
        with ThreadPoolExecutor(max_workers=workers) as pool:
            batches = list(pool.map(create_batch, sizes))
        ids = [task_id for batch in batches for task_id in batch]
        assert len(set(ids)) == n
        return ids

    def get(self, task_id: str) -> JSON:
        return self.call("tasks/get", {"taskId": task_id})

    def cancel(self, task_id: str) -> JSON:
        return self.call("tasks/cancel", {"taskId": task_id})

    def statuses(self) -> dict[str, str]:
        """Every task of this session, as tasks/list shows it: id -> status."""
        return {task["taskId"]: task["status"] for task in self.call("tasks/list", {})["tasks"]}

    def wait_until(
        self, check: Callable[[dict[str, str]], bool], what: str, timeout: float = DEADLINE
    ) -> dict[str, str]:
        """Poll tasks/list until ``check(statuses)`` holds; a deadline only against hangs."""
        deadline = time.monotonic() + timeout
        while True:
            statuses = self.statuses()
            if check(statuses):
                return statuses
            if time.monotonic() > deadline:
                raise AssertionError(f"gave up waiting for {what}; statuses: {statuses}")
            time.sleep(0.05)

    def wait_terminal(self, ids: list[str]) -> dict[str, str]:
        return self.wait_until(
            lambda statuses: all(statuses.get(task_id) in TERMINAL for task_id in ids),
            f"{len(ids)} task(s) to finish",
        )


@pytest.fixture(scope="module")
def sdk_python() -> Path:
    return ensure_sdk_venv()


@pytest.fixture(scope="module", params=MODES)
def server(request: pytest.FixtureRequest, sdk_python: Path) -> Iterator[SdkServer]:
    mode: HttpMode = request.param
    url, proc = start_sdk_server(mode)
    try:
        yield SdkServer(mode, url)
    finally:
        stop(proc)


@pytest.fixture(scope="module", params=MODES)
def slow_server(request: pytest.FixtureRequest, sdk_python: Path) -> Iterator[SdkServer]:
    """An SDK server that delays every tasks/* request by LATENCY_MS."""
    mode: HttpMode = request.param
    url, proc = start_sdk_server(mode, "--latency", str(LATENCY_MS))
    try:
        yield SdkServer(mode, url)
    finally:
        stop(proc)


@pytest.fixture
def http() -> Iterator[httpx.Client]:
    with httpx.Client(timeout=DEADLINE) as client:
        yield client


@pytest.fixture
def session(server: SdkServer, http: httpx.Client) -> Session:
    return Session(http, server.url)


@pytest.fixture
def slow_session(slow_server: SdkServer, http: httpx.Client) -> Session:
    return Session(http, slow_server.url)


def stdio_server(*args: str) -> str:
    """A ``--server`` value that runs the SDK server over stdio."""
    return shlex.join(sdk_stdio_command(*args))


def listable_id(n: int) -> str:
    return f"{FIXED_STDIO_SCOPE}:00000000-0000-4000-8000-{n:012d}"


# --------------------------------------------------------------------------------------------
# Running mcptask
# --------------------------------------------------------------------------------------------


def mcptask(*args: str, stdin: str | None = None) -> Result:
    return run_mcptask(*args, stdin=stdin, timeout=DEADLINE)


def mcptask_all(*commands: tuple[str, ...]) -> list[Result]:
    """Run independent mcptask commands at the same time (to keep the suite quick).

    Never two that join the same session: see test_joining_a_session_keeps_its_owners_answers.
    """
    with ThreadPoolExecutor(max_workers=len(commands)) as pool:
        return list(pool.map(lambda command: mcptask(*command), commands))


def in_session(session: Session) -> tuple[str, ...]:
    return ("--url", session.url, "--session-id", session.id)


def mcptask_env() -> dict[str, str]:
    """The environment run_mcptask gives mcptask, for processes started with Popen."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("MCPTASK_")}
    env.update({"NO_COLOR": "1", "COLUMNS": "200"})
    return env


class Running:
    """mcptask started with Popen; stdout read line by line on a thread, stderr to a file."""

    def __init__(self, *args: str, stderr_path: Path) -> None:
        self._stderr_file = stderr_path.open("w+b")
        self.proc: subprocess.Popen[bytes] = subprocess.Popen(
            [*mcptask_argv(), *args],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=self._stderr_file,
            env=mcptask_env(),
        )
        self._lines: queue.Queue[str | None] = queue.Queue()
        self._eof = False
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for raw in self.proc.stdout:
            self._lines.put(raw.decode())
        self._lines.put(None)

    def next_line(self, timeout: float = DEADLINE) -> str | None:
        """The next stdout line, or None at the end of stdout."""
        if self._eof:
            return None
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise AssertionError(f"mcptask wrote no line in {timeout}s: {self.stderr()}") from None
        self._eof = line is None
        return line

    def rest(self) -> list[str]:
        """Every remaining stdout line, up to the end of stdout."""
        lines: list[str] = []
        while (line := self.next_line()) is not None:
            lines.append(line)
        return lines

    def wait(self) -> int:
        return self.proc.wait(timeout=DEADLINE)

    def stderr(self) -> str:
        self._stderr_file.flush()
        self._stderr_file.seek(0)
        return self._stderr_file.read().decode(errors="replace")

    def signal(self, signum: int) -> None:
        self.proc.send_signal(signum)

    def close(self) -> None:
        if self.proc.poll() is None:
            # A stopped process would not react to SIGTERM.
            self.proc.send_signal(signal.SIGCONT)
        stop(self.proc)
        self._stderr_file.close()


@pytest.fixture
def start_mcptask(tmp_path: Path) -> Iterator[Callable[..., Running]]:
    """Start mcptask processes; each one is stopped by its PID when the test ends."""
    started: list[Running] = []

    def start(*args: str) -> Running:
        running = Running(*args, stderr_path=tmp_path / f"stderr-{len(started)}.txt")
        started.append(running)
        return running

    yield start
    for running in started:
        running.close()


# --------------------------------------------------------------------------------------------
# Checks on mcptask's documents
# --------------------------------------------------------------------------------------------


def cancel_document(result: Result, exit_code: int) -> JSON:
    """The ``cancel -o json`` document, checked for its fixed shape and consistency."""
    assert result.code == exit_code, f"exit {result.code}; stderr: {result.stderr}"
    assert "Traceback" not in result.stderr
    document: JSON = result.json()
    assert set(document) == {"results", "summary", "interrupted", "error", "exitCode"}
    assert document["exitCode"] == exit_code
    for entry in document["results"]:
        assert set(entry) == {"taskId", "outcome", "status", "message"}
        assert entry["outcome"] in OUTCOMES
    counted = Counter(entry["outcome"] for entry in document["results"])
    assert document["summary"] == {outcome: counted[outcome] for outcome in OUTCOMES}
    return document


def outcomes(results: list[JSON]) -> dict[str, tuple[str, str | None]]:
    """taskId -> (outcome, status); each task must be reported exactly once."""
    ids = [entry["taskId"] for entry in results]
    repeated = [task_id for task_id, n in Counter(ids).items() if n > 1]
    assert not repeated, f"reported more than once: {repeated}"
    return {entry["taskId"]: (entry["outcome"], entry["status"]) for entry in results}


def summary(**counts: int) -> dict[str, int]:
    return {outcome: counts.get(outcome.replace("-", "_"), 0) for outcome in OUTCOMES}


def jsonl(lines: list[str]) -> list[JSON]:
    parsed: list[JSON] = []
    for line in lines:
        assert line.endswith("\n"), f"incomplete line {line!r}"
        value = json.loads(line)
        assert isinstance(value, dict), line
        parsed.append(value)
    return parsed


def check_watch_lines(changes: list[JSON], task_id: str) -> list[tuple[str | None, str]]:
    """The (previous, status) pairs of ``watch -o jsonl`` lines about one task, checked to
    chain: the first has no previous, each next one starts where the last ended."""
    assert changes, "watch printed nothing"
    previous: str | None = None
    pairs: list[tuple[str | None, str]] = []
    for change in changes:
        assert set(change) == {"time", "taskId", "previous", "status", "statusMessage"}
        assert change["taskId"] == task_id
        assert change["previous"] == previous
        assert change["status"] != previous or change["statusMessage"] is not None
        datetime.fromisoformat(change["time"].replace("Z", "+00:00"))
        previous = change["status"]
        pairs.append((change["previous"], change["status"]))
    return pairs


# --------------------------------------------------------------------------------------------
# 1. connect
# --------------------------------------------------------------------------------------------


def test_connect_over_http(server: SdkServer) -> None:
    result = mcptask("connect", server.url, "-o", "json")
    assert result.code == 0, result.stderr
    document = result.json()
    assert document["server"] == {"name": SERVER_NAME, "version": SERVER_VERSION, "title": None}
    assert document["protocolVersion"] == PROTOCOL_VERSION
    assert document["era"] == "legacy"
    assert document["transport"] == "http"
    assert document["target"] == server.url
    assert isinstance(document["sessionId"], str)
    assert re.fullmatch(r"[0-9a-f]{32}", document["sessionId"])
    assert document["tasks"] == {"supported": True, "list": True, "cancel": True, "toolCalls": True}
    assert document["capabilities"] == SDK_CAPABILITIES


def test_connect_over_stdio(sdk_python: Path) -> None:
    result = mcptask("connect", "--server", stdio_server(), "-o", "json")
    assert result.code == 0, result.stderr
    document = result.json()
    assert document["server"]["name"] == SERVER_NAME
    assert document["protocolVersion"] == PROTOCOL_VERSION
    assert document["era"] == "legacy"
    assert document["transport"] == "stdio"
    assert document["sessionId"] is None
    assert document["tasks"] == {"supported": True, "list": True, "cancel": True, "toolCalls": True}
    assert document["capabilities"] == SDK_CAPABILITIES


# --------------------------------------------------------------------------------------------
# 2. list
# --------------------------------------------------------------------------------------------


def test_auto_mode_falls_back_to_initialize_over_http(server: SdkServer) -> None:
    """The SDK 1.x server is legacy only: the discover probe fails, initialize follows."""
    result = mcptask("connect", server.url, "-o", "json", "-v")
    assert result.code == 0, result.stderr
    assert result.json()["era"] == "legacy"
    assert result.stderr.index('"server/discover"') < result.stderr.index('"initialize"')
    pinned = mcptask("connect", server.url, "--protocol", "2026-07-28")
    pinned.assert_one_line_error(5, "does not speak 2026-07-28")


def test_auto_mode_falls_back_to_initialize_over_stdio(sdk_python: Path) -> None:
    result = mcptask("connect", "--server", stdio_server(), "-o", "json", "-v")
    assert result.code == 0, result.stderr
    assert result.json()["era"] == "legacy"
    assert result.stderr.index('"server/discover"') < result.stderr.index('"initialize"')


def test_list_sees_only_the_joined_sessions_tasks(session: Session) -> None:
    ids = session.create(3)
    fresh, joined = mcptask_all(
        ("list", "--url", session.url, "-o", "json"),
        ("list", *in_session(session), "-o", "json"),
    )

    assert fresh.code == 0, fresh.stderr
    assert fresh.json() == {"tasks": [], "count": 0}
    assert "--session-id" in fresh.stderr

    assert joined.code == 0, joined.stderr
    document = joined.json()
    assert document["count"] == 3
    assert sorted(task["taskId"] for task in document["tasks"]) == sorted(ids)
    for task in document["tasks"]:
        assert set(task) == TASK_KEYS
        assert task["status"] == "working"
        assert task["pollInterval"] == 500
        # As the server sends it.
        assert task == session.get(task["taskId"])


def test_list_status_filter_and_limit(session: Session) -> None:
    working = session.create(2)
    done = session.create(1, seconds=SHORT)
    failed = session.create(1, seconds=SHORT, outcome="failed")
    cancelled = working[0]
    session.cancel(cancelled)
    session.wait_terminal(done + failed)

    def listed(*options: str) -> list[str]:
        result = mcptask("list", *in_session(session), *options, "-o", "ids")
        assert result.code == 0, result.stderr
        return sorted(result.stdout.splitlines())

    assert listed("--status", "working") == [working[1]]
    assert listed("--status", "failed,cancelled,input_required") == sorted([*failed, cancelled])
    limited = listed("--status", "working,completed,cancelled", "--limit", "2")
    assert len(limited) == 2
    assert set(limited) <= {*working, *done}


def test_list_over_stdio(sdk_python: Path) -> None:
    # Seeded sdk-working-* and terminal tasks have no session scope: the SDK never lists them.
    command = stdio_server("--seed", "2", "--seed-listable", "3", "--seed-terminal")
    result = mcptask("list", "--server", command, "-o", "json")
    assert result.code == 0, result.stderr
    document = result.json()
    assert document["count"] == 3
    assert sorted(task["taskId"] for task in document["tasks"]) == [
        listable_id(n) for n in (1, 2, 3)
    ]
    assert {task["status"] for task in document["tasks"]} == {"working"}
    for task in document["tasks"]:
        assert set(task) == TASK_KEYS


# --------------------------------------------------------------------------------------------
# 3. get
# --------------------------------------------------------------------------------------------


def test_get_a_task_of_the_joined_session(session: Session) -> None:
    [task_id] = session.create(1)
    result, elsewhere = mcptask_all(
        ("get", task_id, *in_session(session), "-o", "json"),
        ("get", task_id, "--url", session.url, "-o", "json"),
    )
    unknown = mcptask("get", UNKNOWN_ID, *in_session(session), "-o", "json")
    assert result.code == 0, result.stderr
    task = result.json()
    assert task == session.get(task_id)
    assert set(task) == TASK_KEYS
    assert (task["taskId"], task["status"], task["ttl"]) == (task_id, "working", 3_600_000)

    # The same id from a session of mcptask's own: the SDK does not show it there.
    elsewhere.assert_one_line_error(6, task_id)
    unknown.assert_one_line_error(6, UNKNOWN_ID)


def test_get_over_stdio(sdk_python: Path) -> None:
    # (An unknown id over stdio goes the same way as over HTTP: see test_cancel_over_stdio.)
    failed = mcptask("get", "sdk-failed-001", "--server", stdio_server("--seed-terminal"))
    assert failed.code == 0, failed.stderr
    task = failed.json()
    assert set(task) == TASK_KEYS | {"statusMessage"}
    assert (task["taskId"], task["status"], task["statusMessage"]) == (
        "sdk-failed-001",
        "failed",
        "seeded failure",
    )


# --------------------------------------------------------------------------------------------
# 4. cancel one task
# --------------------------------------------------------------------------------------------


def test_cancel_one_working_task(session: Session) -> None:
    target, bystander = session.create(2)
    result = mcptask("cancel", target, *in_session(session), "-o", "json")
    document = cancel_document(result, 0)
    assert outcomes(document["results"]) == {target: ("cancelled", "cancelled")}
    assert document["summary"] == summary(cancelled=1)
    assert (document["interrupted"], document["error"]) == (False, None)

    after = mcptask("get", target, *in_session(session), "-o", "json")
    assert after.code == 0, after.stderr
    assert after.json()["status"] == "cancelled"
    assert session.statuses() == {target: "cancelled", bystander: "working"}


def test_cancel_over_stdio(sdk_python: Path) -> None:
    command = stdio_server("--seed", "2", "--seed-terminal", "--seed-listable", "2")
    result = mcptask(
        "cancel", "sdk-working-001", "sdk-completed-001", UNKNOWN_ID, "--all-working", "--yes",
        "--server", command, "-o", "json",
    )  # fmt: skip
    document = cancel_document(result, 6)
    # Named ids first, then the listed working ones: only the listable seeds are listed, so
    # sdk-working-002 is left alone.
    order = [entry["taskId"] for entry in document["results"]]
    assert order[:3] == ["sdk-working-001", "sdk-completed-001", UNKNOWN_ID]
    assert outcomes(document["results"]) == {
        "sdk-working-001": ("cancelled", "cancelled"),
        "sdk-completed-001": ("already-finished", "completed"),
        UNKNOWN_ID: ("not-found", None),
        listable_id(1): ("cancelled", "cancelled"),
        listable_id(2): ("cancelled", "cancelled"),
    }


# --------------------------------------------------------------------------------------------
# 5. cancel --all-working over many tasks
# --------------------------------------------------------------------------------------------


def test_cancel_all_working_over_200_tasks(session: Session) -> None:
    long_ids = session.create(BULK)
    done = session.create(2, seconds=SHORT)
    failed = session.create(1, seconds=SHORT, outcome="failed")
    cancelled_before = long_ids[:2]
    for task_id in cancelled_before:
        session.cancel(task_id)
    before = session.wait_terminal(done + failed)
    working = [task_id for task_id in long_ids if before[task_id] == "working"]
    assert len(working) == BULK - 2

    result = mcptask("cancel", "--all-working", "--yes", *in_session(session), "-o", "json")
    document = cancel_document(result, 0)
    assert outcomes(document["results"]) == {
        task_id: ("cancelled", "cancelled") for task_id in working
    }
    assert document["summary"] == summary(cancelled=BULK - 2)
    assert (document["interrupted"], document["error"]) == (False, None)

    after = session.statuses()
    assert after == {
        **{task_id: "cancelled" for task_id in long_ids},
        **{task_id: "completed" for task_id in done},
        **{task_id: "failed" for task_id in failed},
    }


# --------------------------------------------------------------------------------------------
# 6.-8. named ids: finished, unknown, finishing during the run, from stdin
# --------------------------------------------------------------------------------------------


def test_cancel_finished_tasks_by_name(session: Session) -> None:
    done = session.create(1, seconds=SHORT)
    failed = session.create(1, seconds=SHORT, outcome="failed")
    [cancelled] = session.create(1)
    session.cancel(cancelled)
    session.wait_terminal(done + failed)

    result = mcptask("cancel", *done, *failed, cancelled, *in_session(session), "-o", "json")
    document = cancel_document(result, 0)
    assert outcomes(document["results"]) == {
        done[0]: ("already-finished", "completed"),
        failed[0]: ("already-finished", "failed"),
        # Cancelled before this run: the server refused this cancel (-32602). The README's
        # outcomes: "cancelled" = accepted, and tasks/get shows cancelled; "already-finished"
        # = it was already completed, failed or cancelled.
        cancelled: ("already-finished", "cancelled"),
    }
    assert [entry["taskId"] for entry in document["results"]] == [*done, *failed, cancelled]
    assert document["summary"] == summary(already_finished=3)


def test_cancel_unknown_id_fails_but_the_others_are_processed(session: Session) -> None:
    first, last = session.create(2)
    result = mcptask("cancel", first, UNKNOWN_ID, last, *in_session(session), "-o", "json")
    document = cancel_document(result, 6)
    assert outcomes(document["results"]) == {
        first: ("cancelled", "cancelled"),
        UNKNOWN_ID: ("not-found", None),
        last: ("cancelled", "cancelled"),
    }
    assert document["summary"] == summary(cancelled=2, not_found=1)
    assert document["interrupted"] is False
    assert session.statuses() == {first: "cancelled", last: "cancelled"}


def test_task_that_finishes_during_the_run_is_already_finished(
    slow_session: Session, tmp_path: Path, start_mcptask: Callable[..., Running]
) -> None:
    """The short task is working when the run starts and completed when its turn comes: the
    run is held (SIGSTOP) after its first result until the task has completed."""
    session = slow_session
    long_ids = session.create(20)
    [short] = session.create(1, seconds=1.0)
    ids_file = tmp_path / "ids.txt"
    ids_file.write_text("\n".join([*long_ids, short]) + "\n")
    assert session.get(short)["status"] == "working"

    run = start_mcptask("cancel", "--from-file", str(ids_file), *in_session(session), "-o", "jsonl")
    first = run.next_line()
    assert first is not None, run.stderr()
    run.signal(signal.SIGSTOP)
    try:
        session.wait_terminal([short])
    finally:
        run.signal(signal.SIGCONT)
    lines = [first, *run.rest()]
    assert run.wait() == 0, run.stderr()

    results = outcomes(jsonl(lines))
    assert results == {
        **{task_id: ("cancelled", "cancelled") for task_id in long_ids},
        short: ("already-finished", "completed"),
    }
    assert session.get(short)["status"] == "completed"


def test_cancel_ids_from_stdin(session: Session) -> None:
    a, b, c, d, e = session.create(5)
    done = session.create(1, seconds=SHORT)
    session.wait_terminal(done)
    # Blank lines, comments, stray spaces and a repeated id.
    first = f"# tasks to cancel\n{a}\n\n{b}\n   \n{a}\n# {e} is only mentioned\n  {c}  \n"
    second = f"{done[0]}\n{d}\n{d}\n"
    dash = mcptask("cancel", "-", *in_session(session), "-o", "json", stdin=first)
    from_file = mcptask(
        "cancel", "--from-file", "-", *in_session(session), "-o", "ids", stdin=second
    )

    document = cancel_document(dash, 0)
    assert [entry["taskId"] for entry in document["results"]] == [a, b, c]
    assert outcomes(document["results"]) == {
        task_id: ("cancelled", "cancelled") for task_id in (a, b, c)
    }
    assert from_file.code == 0, from_file.stderr
    assert from_file.stdout.splitlines() == [d]  # the ids this run cancelled, once each
    assert session.statuses() == {
        **dict.fromkeys((a, b, c, d), "cancelled"),
        e: "working",
        done[0]: "completed",
    }


# --------------------------------------------------------------------------------------------
# 9. dry run
# --------------------------------------------------------------------------------------------


def test_dry_run_sends_no_cancel(session: Session) -> None:
    working = session.create(3)
    done = session.create(1, seconds=SHORT)
    session.wait_terminal(done)

    every = mcptask(
        "cancel", "--all-working", "--dry-run", "--yes", *in_session(session), "-o", "json"
    )
    assert every.code == 0, every.stderr
    document = every.json()
    assert document["dryRun"] is True
    assert sorted(task["taskId"] for task in document["tasks"]) == sorted(working)
    assert {task["status"] for task in document["tasks"]} == {"working"}

    still = mcptask("list", *in_session(session), "--status", "working", "-o", "ids")
    assert still.code == 0, still.stderr
    assert sorted(still.stdout.splitlines()) == sorted(working)
    assert session.statuses() == {**dict.fromkeys(working, "working"), done[0]: "completed"}


# --------------------------------------------------------------------------------------------
# 10. interruption
# --------------------------------------------------------------------------------------------


def check_interrupted_results(session: Session, ids: list[str], results: list[JSON]) -> None:
    """All ids once, each cancelled or skipped, some of both, and the server agrees."""
    reported = outcomes(results)
    assert sorted(reported) == sorted(ids)
    kinds = Counter(outcome for outcome, _ in reported.values())
    assert set(kinds) == {"cancelled", "skipped"}, kinds
    server = session.statuses()
    for task_id, (outcome, status) in reported.items():
        if outcome == "cancelled":
            assert (status, server[task_id]) == ("cancelled", "cancelled"), task_id
        else:
            # Not attempted: still working on the server.
            assert (status, server[task_id]) == (None, "working"), task_id


def test_sigint_stops_a_bulk_cancel_json(
    slow_session: Session, start_mcptask: Callable[..., Running]
) -> None:
    session = slow_session
    ids = session.create(BULK)
    run = start_mcptask("cancel", "--all-working", "--yes", *in_session(session), "-o", "json")
    # Interrupt once the run is visibly under way (a few cancels seen by the server).
    session.wait_until(
        lambda statuses: Counter(statuses.values())["cancelled"] >= 5, "the first cancels"
    )
    run.signal(signal.SIGINT)
    stdout = "".join(run.rest())
    code = run.wait()
    assert code == 130, run.stderr()
    document: JSON = json.loads(stdout)
    assert document["interrupted"] is True
    assert document["exitCode"] == 130
    assert document["error"] is None
    check_interrupted_results(session, ids, document["results"])
    counted = Counter(entry["outcome"] for entry in document["results"])
    assert document["summary"] == {outcome: counted[outcome] for outcome in OUTCOMES}
    # Results keep the order of the targets: the cancelled ones first, then the skipped.
    order = [entry["outcome"] for entry in document["results"]]
    assert order == sorted(order, key=lambda outcome: outcome == "skipped")


def test_sigint_stops_a_bulk_cancel_jsonl(
    slow_session: Session, start_mcptask: Callable[..., Running]
) -> None:
    session = slow_session
    ids = session.create(BULK)
    run = start_mcptask("cancel", "--all-working", "--yes", *in_session(session), "-o", "jsonl")
    lines: list[str] = []
    while len(lines) < 3:
        line = run.next_line()
        assert line is not None, f"stdout ended after {len(lines)} lines: {run.stderr()}"
        lines.append(line)
    run.signal(signal.SIGINT)
    lines.extend(run.rest())
    assert run.wait() == 130, run.stderr()
    results = jsonl(lines)
    check_interrupted_results(session, ids, results)
    order = [entry["outcome"] for entry in results]
    assert order == sorted(order, key=lambda outcome: outcome == "skipped")


# --------------------------------------------------------------------------------------------
# 11. watch
# --------------------------------------------------------------------------------------------


def test_watch_follows_tasks_until_they_end(session: Session) -> None:
    """Two watches at once, each in its own session: a task that completes (exit 0) and,
    with --exit-status, one that fails (exit 7)."""
    [done] = session.create(1, seconds=2)
    other = Session(session.client, session.url)
    seconds = 1.5
    [failed] = other.create(1, seconds=seconds, outcome="failed")
    message = FAILED_MESSAGE.format(seconds=seconds)

    completes, fails = mcptask_all(
        ("watch", done, *in_session(session), "-o", "jsonl"),
        ("watch", failed, *in_session(other), "--exit-status", "-o", "jsonl"),
    )

    assert completes.code == 0, completes.stderr
    changes = jsonl(completes.stdout.splitlines(keepends=True))
    pairs = check_watch_lines(changes, done)
    assert pairs[-1][1] == "completed"
    assert {status for _, status in pairs} <= {"working", "completed"}
    assert changes[-1]["statusMessage"] is None

    assert fails.code == 7, fails.stderr
    changes = jsonl(fails.stdout.splitlines(keepends=True))
    pairs = check_watch_lines(changes, failed)
    assert pairs[-1][1] == "failed"
    assert {status for _, status in pairs} <= {"working", "failed"}
    assert changes[-1]["statusMessage"] == message

    # Piped without -o: one text line per change; without --exit-status a failure is exit 0.
    text = mcptask("watch", failed, *in_session(other))
    assert text.code == 0, text.stderr
    [line] = text.stdout.splitlines()
    assert re.fullmatch(rf"\S+  {re.escape(failed)}  failed  {re.escape(message)}", line), line


def test_watch_sees_a_cancel_from_another_process(
    session: Session, start_mcptask: Callable[..., Running]
) -> None:
    [task_id] = session.create(1)
    # Polling fast moves the watch's request ids (1, 2, 3... like every mcptask run) past the
    # few the cancel run will use in the same session; see
    # test_joining_a_session_keeps_its_owners_answers for why that matters with this server.
    watch = start_mcptask(
        "watch", task_id, *in_session(session), "--interval", "0.1", "--exit-status",
        "-o", "jsonl",
    )  # fmt: skip
    first = watch.next_line()
    assert first is not None, watch.stderr()
    assert json.loads(first)["status"] == "working"

    cancel = mcptask("cancel", task_id, *in_session(session), "-o", "json")
    assert outcomes(cancel_document(cancel, 0)["results"]) == {task_id: ("cancelled", "cancelled")}

    lines = [first, *watch.rest()]
    assert watch.wait() == 7, watch.stderr()
    pairs = check_watch_lines(jsonl(lines), task_id)
    assert pairs == [(None, "working"), ("working", "cancelled")]


def test_watch_over_stdio(sdk_python: Path) -> None:
    command = stdio_server("--seed-terminal")
    result = mcptask(
        "watch", "sdk-completed-001", "sdk-failed-001", "--server", command, "--exit-status",
        "-o", "jsonl",
    )  # fmt: skip
    assert result.code == 7, result.stderr
    changes = jsonl(result.stdout.splitlines(keepends=True))
    assert sorted((c["taskId"], c["previous"], c["status"]) for c in changes) == [
        ("sdk-completed-001", None, "completed"),
        ("sdk-failed-001", None, "failed"),
    ]


# --------------------------------------------------------------------------------------------
# Sharing a session with its owner
# --------------------------------------------------------------------------------------------

OWNER_REQUESTS = 20


def test_joining_a_session_keeps_its_owners_answers(session: Session) -> None:
    """``--session-id`` sends mcptask's requests into a session another client (the owner) is
    using. The owner numbers its requests 1, 2, 3... like most clients (the SDK's own client
    does); the SDK server routes each answer by request id within the session. So mcptask must
    not send an id the owner has in flight, or one of the two answers goes astray.

    The owner here waits on tasks/result for 20 working tasks with ids 1..20 (tasks/result
    blocks until a task ends) while ``mcptask list --session-id`` runs; then the tasks are
    cancelled and every owner request must get its own answer.
    """
    ids = session.create(OWNER_REQUESTS)
    answers: dict[int, RpcReply | BaseException] = {}
    sent = threading.Semaphore(0)

    def owner(number: int) -> None:
        hooks = {"request": [lambda _request: sent.release()]}
        with httpx.Client(timeout=DEADLINE, event_hooks=hooks) as client:
            try:
                answers[number] = session.request(
                    "tasks/result", {"taskId": ids[number - 1]}, client=client, rpc_id=number
                )
            except BaseException as exc:  # reported by the test thread
                answers[number] = exc

    threads = [
        threading.Thread(target=owner, args=(number,), daemon=True)
        for number in range(1, OWNER_REQUESTS + 1)
    ]
    for thread in threads:
        thread.start()
    for _ in threads:
        assert sent.acquire(timeout=DEADLINE)
    session.statuses()  # one round trip: the owner's requests have reached the server

    listed = mcptask("list", *in_session(session), "-o", "ids")
    assert listed.code == 0, listed.stderr
    assert sorted(listed.stdout.splitlines()) == sorted(ids)

    for task_id in ids:
        session.cancel(task_id)
    deadline = time.monotonic() + 5  # the answers come at once after the cancels
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    lost = sorted(number for number, thread in enumerate(threads, 1) if thread.is_alive())
    assert not lost, f"the owner's requests with these ids got no answer: {lost}"
    related = "io.modelcontextprotocol/related-task"
    for number, answer in sorted(answers.items()):
        assert isinstance(answer, RpcReply), f"request {number}: {answer!r}"
        assert answer.message is not None
        assert answer.message["id"] == number
        assert answer.message["result"]["_meta"][related] == {"taskId": ids[number - 1]}

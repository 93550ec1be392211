"""What the fault tests share: reading a cancel report, asking the server for its final state,
reading the server's fault log, counting the client's retries, and choosing a --fault-seed
that puts the first fault where a test wants it (with the server's own FaultPlan)."""

from __future__ import annotations

import itertools
import re
import time
from collections import Counter
from dataclasses import replace

from mcptask.reference_server.config import FaultKind, FaultSwitches
from mcptask.reference_server.faults import FaultPlan
from tests.cli_process import Result, run_mcptask
from tests.conftest import StartServer

LEGACY = ("--protocol", "2025-11-25")
# Large enough for any oversized answer the tests make: the final state is read whole.
NO_BOUND = {"MCPTASK_MAX_ANSWER_BYTES": str(1 << 30)}
_FAULT_LINE = re.compile(r"fault (\S+) on task request \d+: (\S+)(?: (\S+))? \(id")


def working(count: int) -> set[str]:
    """The ids `--seed working=COUNT` gives."""
    return {f"working-{n:03d}" for n in range(1, count + 1)}


def outcomes(result: Result, expected: set[str]) -> dict[str, tuple[str, str | None, str]]:
    """taskId -> (outcome, status, message) of a cancel report that holds every expected task
    exactly once (and nothing else)."""
    entries = result.json()["results"]
    ids = Counter(entry["taskId"] for entry in entries)
    assert ids == Counter(expected), "every task exactly once"
    return {e["taskId"]: (e["outcome"], e["status"], e.get("message") or "") for e in entries}


def final_statuses(url: str) -> dict[str, str]:
    """Every task as the server lists it after the run, asked through whatever faults it
    injects (retried for long enough; no bound on the answers)."""
    listed = run_mcptask(
        "list", "--url", url, "-o", "json", *LEGACY, "--retries", "30", env=NO_BOUND
    )
    assert listed.code == 0, listed.stderr[-2000:]
    return {task["taskId"]: task["status"] for task in listed.json()["tasks"]}


def server_log(reference_server: StartServer, url: str) -> str:
    """What the server at `url` logged so far (with --log: its faults, resumed streams,
    oversized writes), once its stderr reader has caught up (no growth for 0.1 s)."""
    process = reference_server.processes[url]
    text: str = process.stderr_text()  # type: ignore[attr-defined]
    while True:
        time.sleep(0.1)
        later: str = process.stderr_text()  # type: ignore[attr-defined]
        if later == text:
            return text
        text = later


def injected(server_log: str) -> list[tuple[str, str, str | None]]:
    """(kind, method, taskId or None) of every fault the server logged (--log)."""
    return [(kind, method, task) for kind, method, task in _FAULT_LINE.findall(server_log)]


def injected_kinds(server_log: str) -> Counter[str]:
    """How many faults of each kind the server logged."""
    return Counter(kind for kind, _, _ in injected(server_log))


def retries(result: Result) -> list[str]:
    """The client's `-v` retry lines (`retry 1/4 of tasks/get in 0.25s: ...`)."""
    return [line for line in result.stderr.splitlines() if line.startswith("retry ")]


def cancels_sent(result: Result) -> int:
    """How many tasks/cancel requests the client wrote (its `-v` wire log)."""
    return result.stderr.count('"method":"tasks/cancel"')


def seed_for(pattern: str, switches: FaultSwitches) -> int:
    """A --fault-seed whose first task requests get faults as `pattern` says, one character
    per request: `F` a fault, `.` none (found by drawing as the server will)."""
    probe = {"jsonrpc": "2.0", "id": 1, "method": "tasks/get", "params": {"taskId": "x"}}
    wanted = [char == "F" for char in pattern]
    for seed in itertools.count():
        plan = FaultPlan(replace(switches, seed=seed))
        if [plan.draw(probe) is not None for _ in wanted] == wanted:
            return seed
    raise AssertionError("unreachable")


def only(kind: FaultKind, rate: float) -> FaultSwitches:
    """Switches that inject one kind at `rate`."""
    return FaultSwitches(rate=rate, kinds=(kind,))

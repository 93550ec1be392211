"""The issue's proof: `cancel --all-working` over 500 tasks while 10% of the task requests
fail transiently (every kind a client can recover from) and the session expires once ends
with all 500 `cancelled` and exit 0, as the server itself confirms afterwards."""

from __future__ import annotations

import re

from tests.cli_process import run_mcptask
from tests.conftest import StartServer
from tests.faults.support import (
    LEGACY,
    cancels_sent,
    final_statuses,
    injected,
    outcomes,
    retries,
    server_log,
    working,
)

RECOVERABLE = "busy,rate-limited,reset,lost,sse-cut"


def test_500_tasks_through_ten_percent_faults_and_a_session_expiry(
    reference_server: StartServer,
) -> None:
    tasks = 500
    # About 1,010 requests in all (initialize, 10 pages, a cancel and a tasks/get per task,
    # plus what faults add): the first session ends after 700 of them, the next one lives on.
    url = reference_server(
        "--seed", f"working={tasks}", "--fault-rate", "0.1", "--fault-kind", RECOVERABLE,
        "--fault-seed", "11", "--drop-session-after", "700", "--log",
    )  # fmt: skip
    result = run_mcptask(
        "cancel", "--all-working", "--yes", "--url", url, "-o", "json", "-v", *LEGACY,
        "--retries", "6",
    )  # fmt: skip
    assert result.code == 0, result.stderr[-3000:]
    report = outcomes(result, working(tasks))
    assert {(outcome, status) for outcome, status, _ in report.values()} == {
        ("cancelled", "cancelled")
    }
    log = server_log(reference_server, url)  # before the final list adds faults of its own
    final = final_statuses(url)
    assert len(final) == tasks
    assert set(final.values()) == {"cancelled"}

    faults = injected(log)
    kinds = {kind for kind, _, _ in faults}
    assert kinds == set(RECOVERABLE.split(",")), kinds
    assert 80 < len(faults) < 140, len(faults)
    # One session expiry: one more initialize. Each request in flight when the session ends
    # hears its 404: one, or two where a confirmation was overlapped with the next cancel
    # (the server's round trips decide that, operations/confirmations.py).
    assert len(re.findall(r"^< 404", result.stderr, re.MULTILINE)) in (1, 2)
    assert result.stderr.count('"method":"initialize"') == 2
    # Every cut stream was resumed, and the server saw each GET with its Last-Event-ID.
    cuts = [fault for fault in faults if fault[0] == "sse-cut"]
    assert log.count("resumes a closed POST stream") == len(cuts)
    # Lost cancels were resolved with tasks/get, never reported as anything but cancelled.
    lost_cancels = {
        task for kind, method, task in faults if (kind, method) == ("lost", "tasks/cancel")
    }
    resolved = {task for task, (_, _, message) in report.items() if "cancel was lost" in message}
    assert resolved == lost_cancels
    assert retries(result)
    assert cancels_sent(result) > tasks

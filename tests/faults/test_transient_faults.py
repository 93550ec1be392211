"""A bulk cancel holds under transient faults: the real mcptask against the reference server
behind a fault-injecting proxy (tests/network.py), with every report checked against what
the server itself says afterwards."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.cli_process import run_mcptask
from tests.conftest import StartServer
from tests.faults.support import final_statuses, outcomes, working
from tests.network import FaultProxy


@pytest.mark.parametrize("answer", ["json", "sse"])
def test_bulk_cancel_through_ten_percent_faults_cancels_every_task(
    reference_server: StartServer, answer: str
) -> None:
    tasks = 200
    upstream = reference_server("--seed", f"working={tasks}", "--answer", answer)
    with FaultProxy(upstream, rate=0.1, seed=7) as proxy:
        result = run_mcptask(
            "cancel",
            "--all-working",
            "--yes",
            "--url",
            proxy.url,
            "-o",
            "json",
            "-v",
            "--retries",
            "6",
        )
    assert result.code == 0, result.stderr[-2000:]
    reported = outcomes(result, working(tasks))
    assert {(outcome, status) for outcome, status, _ in reported.values()} == {
        ("cancelled", "cancelled")
    }
    assert set(final_statuses(upstream).values()) == {"cancelled"}
    kinds = Counter(kind for _, kind in proxy.faults)
    assert set(kinds) == {"busy", "rate-limited", "gateway", "reset", "lost"}, kinds
    # Transient faults were retried (and logged), and lost cancel answers resolved with
    # tasks/get: nothing was reported skipped or unknown.
    assert result.stderr.count("retry ") > 0
    if ("tasks/cancel", "lost") in proxy.faults:
        assert "the answer to the cancel was lost" in result.stdout


def test_500_tasks_through_faults_and_a_session_expiry(reference_server: StartServer) -> None:
    tasks = 500
    upstream = reference_server(
        "--seed", f"working={tasks}", "--drop-session-after", "400", "--page-size", "100"
    )
    with FaultProxy(upstream, rate=0.1, seed=11) as proxy:
        result = run_mcptask(
            "cancel",
            "--all-working",
            "--yes",
            "--url",
            proxy.url,
            "-o",
            "json",
            "--protocol",
            "2025-11-25",
            "--retries",
            "6",
        )
    assert result.code == 0, result.stderr[-2000:]
    reported = outcomes(result, working(tasks))
    assert Counter(outcome for outcome, _, _ in reported.values()) == {"cancelled": tasks}
    assert set(final_statuses(upstream).values()) == {"cancelled"}
    assert len(proxy.faults) > 50

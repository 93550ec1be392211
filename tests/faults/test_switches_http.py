"""The real mcptask against the reference server's fault switches over Streamable HTTP: each
kind, what the client does about it, and every bulk report checked against the server's
final state (tests/faults/README.md has the figures)."""

from __future__ import annotations

import re
import time

import pytest

from mcptask.reference_server.config import FaultKind
from tests.cli_process import run_mcptask
from tests.conftest import StartServer
from tests.faults.support import (
    LEGACY,
    cancels_sent,
    final_statuses,
    injected,
    injected_kinds,
    only,
    outcomes,
    retries,
    seed_for,
    server_log,
    working,
)

RECOVERABLE_REASONS = {
    "busy": "answered HTTP 503 Service Unavailable",
    "rate-limited": "answered HTTP 429 Too Many Requests",
    "reset": "Connection reset by peer",
    "lost": "closed the connection without an answer",
}


@pytest.mark.parametrize(
    ("kind", "answer"),
    [
        ("busy", "sse"),
        ("rate-limited", "json"),
        ("reset", "sse"),
        ("lost", "json"),
        ("sse-cut", "sse"),
        ("sse-cut", "json"),
    ],
)
def test_a_bulk_cancel_recovers_from_each_transient_kind(
    reference_server: StartServer, kind: str, answer: str
) -> None:
    tasks = 20
    url = reference_server(
        "--seed",
        f"working={tasks}",
        "--answer",
        answer,
        "--fault-rate",
        "0.25",
        "--fault-kind",
        kind,
        "--fault-seed",
        "4",
        "--log",
    )
    result = run_mcptask(
        "cancel", "--all-working", "--yes", "--url", url, "-o", "json", "-v", *LEGACY,
        "--retries", "6",
    )  # fmt: skip
    assert result.code == 0, result.stderr[-2000:]
    report = outcomes(result, working(tasks))
    assert {outcome for outcome, _, _ in report.values()} == {"cancelled"}
    log = server_log(reference_server, url)  # before the final list adds faults of its own
    assert set(final_statuses(url).values()) == {"cancelled"}
    faults = injected(log)
    assert faults, "the switch injected faults"
    assert {fault_kind for fault_kind, _, _ in faults} == {kind}
    on_cancel = [task for _, method, task in faults if method == "tasks/cancel"]
    on_others = [method for _, method, _ in faults if method != "tasks/cancel"]
    if kind == "sse-cut":
        # Every cut answer came on the resumed stream: no retry, no resend.
        assert retries(result) == []
        assert cancels_sent(result) == tasks
        assert log.count("resumes a closed POST stream") == len(faults)
        assert result.stderr.count("(resume)") == 2 * len(faults)  # > GET and < 200
        return
    reason = RECOVERABLE_REASONS[kind]
    lines = retries(result)
    assert lines, "transient failures were retried"
    assert all(reason in line for line in lines), lines
    if kind in ("busy", "rate-limited"):
        # Refused and not handled: every failed request, cancels too, simply sent again.
        assert len(lines) == len(faults)
        assert cancels_sent(result) == tasks + len(on_cancel)
    else:
        # Sent, and maybe acted on: only idempotent requests are retried; a cancel is
        # resolved with tasks/get (lost: it took effect; reset: it did not, and is resent).
        assert len(lines) == len(on_others)
        assert on_cancel, "a cancel was hit (seed 4)"
        resolved = {
            task for task, (_, _, m) in report.items() if "answer to the cancel was lost" in m
        }
        if kind == "lost":
            assert resolved == set(on_cancel)
            assert cancels_sent(result) == tasks
        else:
            assert resolved == set()
            assert cancels_sent(result) == tasks + len(on_cancel)


def test_a_slow_cancel_is_resolved_with_tasks_get(
    reference_server: StartServer,
) -> None:
    tasks = 8
    # The first task request (tasks/list) is answered, the second (the first tasks/cancel,
    # whatever the timing of the confirmations that follow) is slow, and no other is: a slow
    # tasks/get or tasks/list is not sent again (see the hung server below), and would end
    # the run.
    seed = seed_for(".F" + "." * 30, only(FaultKind.SLOW, 0.05))
    url = reference_server(
        "--seed", f"working={tasks}", "--fault-rate", "0.05", "--fault-kind", "slow",
        "--fault-seed", str(seed), "--fault-delay", "3000", "--log",
    )  # fmt: skip
    # --timeout far below the delay, yet long enough for every other answer on a busy
    # machine: an answer late for another reason is not sent again either.
    result = run_mcptask(
        "cancel", "--all-working", "--yes", "--url", url, "-o", "json", "-v", *LEGACY,
        "--timeout", "1", "--retries", "6",
    )  # fmt: skip
    assert result.code == 0, result.stderr[-2000:]
    report = outcomes(result, working(tasks))
    faults = injected(server_log(reference_server, url))
    slow_cancels = {task for _, method, task in faults if method == "tasks/cancel"}
    assert slow_cancels, "the first cancel was slow"
    for task, (outcome, status, message) in report.items():
        assert (outcome, status) == ("cancelled", "cancelled")
        if task in slow_cancels:
            # The server acted, the answer came too late: tasks/get shows the effect.
            assert "the answer to the cancel was lost" in message
            assert "did not answer in time (read timeout)); tasks/get shows it" in message
    lines = retries(result)
    assert len(lines) == len([f for f in faults if f[1] != "tasks/cancel"])
    assert all("did not answer in time (read timeout)" in line for line in lines)
    assert cancels_sent(result) == tasks, "a slow cancel is never sent twice"
    assert set(final_statuses(url).values()) == {"cancelled"}


def test_a_hung_server_fails_in_one_timeout_and_is_not_asked_again(
    reference_server: StartServer,
) -> None:
    # Every task request is answered long after --timeout: a hung server, in effect. The
    # wait the user allowed is spent once, not once per retry (it was five attempts).
    url = reference_server(
        "--seed", "working=1", "--fault-rate", "1", "--fault-kind", "slow",
        "--fault-delay", "5000", "--log",
    )  # fmt: skip
    args = ("get", "working-001", "--url", url, "-v", *LEGACY, "--timeout", "1.5")
    result = run_mcptask(*args)
    assert result.code == 3, result.stderr
    assert (
        result.stderr.strip().splitlines()[-1].endswith("did not answer in time (read timeout)")
    ), result.stderr
    assert retries(result) == []
    assert injected(server_log(reference_server, url)) == [("slow", "tasks/get", "working-001")]


def test_busy_honours_retry_after_and_gives_up_with_its_status(
    reference_server: StartServer,
) -> None:
    url = reference_server(
        "--seed", "working=1", "--fault-rate", "1", "--fault-kind", "busy",
        "--fault-retry-after", "1",
    )  # fmt: skip
    began = time.monotonic()
    result = run_mcptask("get", "working-001", "--url", url, *LEGACY, "-v", "--retries", "2")
    elapsed = time.monotonic() - began
    assert result.code == 3
    assert (
        result.stderr.strip().splitlines()[-1].endswith("answered HTTP 503 Service Unavailable")
    ), result.stderr
    assert [line.split(":")[0] for line in retries(result)] == [
        "retry 1/2 of tasks/get in 1.00s",
        "retry 2/2 of tasks/get in 1.00s",
    ]
    assert elapsed >= 2.0, "Retry-After: 1 was waited twice"


@pytest.mark.parametrize("answer", ["json", "sse"])
def test_an_oversized_answer_exits_8_naming_the_bound_unread(
    reference_server: StartServer, answer: str
) -> None:
    size = 256 * 1024 * 1024  # far more than any buffer between the two processes
    url = reference_server(
        "--seed", "working=1", "--answer", answer, "--fault-rate", "1", "--fault-kind",
        "oversized", "--fault-oversize", str(size), "--log",
    )  # fmt: skip
    result = run_mcptask(
        "get", "working-001", "--url", url, *LEGACY, env={"MCPTASK_MAX_ANSWER_BYTES": "65536"}
    )
    result.assert_one_line_error(
        8,
        "the server's answer is larger than 65536 bytes (MCPTASK_MAX_ANSWER_BYTES sets the bound)",
    )
    deadline = time.monotonic() + 10
    while "oversized answer:" not in (log := server_log(reference_server, url)):
        assert time.monotonic() < deadline, log
        time.sleep(0.05)
    written, total = (int(n) for n in re.findall(r"after (\d+) of its (\d+) bytes", log)[0])
    assert total > size
    # The client stopped reading at its bound: the server could write no more than the
    # socket buffers hold (a JSON answer is refused by its Content-Length, unread).
    assert written < 32 * 1024 * 1024


def test_the_default_oversize_exceeds_the_default_bound(reference_server: StartServer) -> None:
    url = reference_server(
        "--seed", "working=1", "--answer", "json", "--fault-rate", "1", "--fault-kind",
        "oversized",
    )  # fmt: skip
    result = run_mcptask("get", "working-001", "--url", url, *LEGACY)
    result.assert_one_line_error(8, "larger than 33554432 bytes")
    # Honest padding: a client with a larger bound reads a valid answer.
    lenient = run_mcptask(
        "get", "working-001", "--url", url, *LEGACY, "-o", "json",
        env={"MCPTASK_MAX_ANSWER_BYTES": str(64 * 1024 * 1024)},
    )  # fmt: skip
    assert lenient.code == 0, lenient.stderr
    assert lenient.json()["status"] == "working"


def test_an_sse_cut_answer_arrives_by_resumption(reference_server: StartServer) -> None:
    url = reference_server(
        "--seed", "working=1", "--fault-rate", "1", "--fault-kind", "sse-cut", "--log"
    )
    result = run_mcptask("cancel", "working-001", "--url", url, *LEGACY, "-o", "json", "-v")
    assert result.code == 0, result.stderr
    assert outcomes(result, {"working-001"})["working-001"][:2] == ("cancelled", "cancelled")
    resumed = re.findall(r"stream ended early; resuming after (\S+) in 0s", result.stderr)
    assert len(resumed) == 2, "the cancel, and the tasks/get that confirms it"
    assert "> GET " in result.stderr
    log = server_log(reference_server, url)
    for event_id in resumed:
        assert f"GET with Last-Event-ID {event_id} resumes a closed POST stream" in log
    assert retries(result) == []


def test_an_sse_cut_answer_in_2026_07_28_is_lost(reference_server: StartServer) -> None:
    url = reference_server("--seed", "working=1", "--fault-rate", "1", "--fault-kind", "sse-cut")
    result = run_mcptask(
        "get", "working-001", "--url", url, "--protocol", "2026-07-28", "-v", "--retries", "2"
    )
    assert result.code == 3
    assert (
        result.stderr.strip()
        .splitlines()[-1]
        .endswith("the server closed its event stream before answering")
    )
    assert len(retries(result)) == 2
    assert "(resume)" not in result.stderr, "no event id: nothing to resume"


def test_http_die_after_leaves_the_request_in_flight_unknown(
    reference_server: StartServer,
) -> None:
    tasks = 6
    # initialize 1, tasks/list 2, then one cancel per task: 7 is the cancel of the fifth.
    # --no-wait: with confirmations, a cancel run overlaps them once the server's round trips
    # pass a few milliseconds, and which request is the seventh would depend on the machine's
    # pace. A lost cancel answer is still asked about with tasks/get.
    url = reference_server("--seed", f"working={tasks}", "--die-after", "7")
    result = run_mcptask(
        "cancel", "--all-working", "--yes", "--no-wait", "--url", url, "-o", "json", *LEGACY,
        "--retries", "1",
    )  # fmt: skip
    assert result.code == 3, result.stderr
    report = outcomes(result, working(tasks))
    ordered = [report[f"working-{n:03d}"][0] for n in range(tasks, 0, -1)]
    assert ordered == ["cancelled", "cancelled", "cancelled", "cancelled", "unknown", "skipped"]
    unknown = report["working-002"][2]
    assert "the answer to the cancel was lost" in unknown
    assert "tasks/get failed: cannot connect to" in unknown
    process = reference_server.processes[url]
    assert process.wait(5) == 70
    last = process.stderr_text(wait=2).strip().splitlines()[-1]  # type: ignore[attr-defined]
    assert "--die-after 7: handled request 7, tasks/cancel working-002" in last


def test_the_switches_are_deterministic(reference_server: StartServer) -> None:
    # --no-wait: the same requests in the same order each run. With confirmations, a bulk
    # cancel overlaps them once the server's round trips pass a few milliseconds, and which
    # request meets the seeded fault then depends on the machine's pace, not on the switches.
    runs = []
    for _ in range(2):
        url = reference_server(
            "--seed", "working=15", "--fault-rate", "0.3", "--fault-seed", "8",
            "--fault-kind", "busy,rate-limited,reset,lost,sse-cut", "--log",
        )  # fmt: skip
        result = run_mcptask(
            "cancel", "--all-working", "--yes", "--no-wait", "--url", url, "-o", "json",
            *LEGACY, "--retries", "6",
        )  # fmt: skip
        assert result.code == 0, result.stderr[-2000:]
        runs.append(injected(server_log(reference_server, url)))
    assert runs[0] == runs[1]
    assert len(injected_kinds(server_log(reference_server, url))) >= 3

"""The real mcptask against the reference server's fault switches over stdio: a server that
dies mid-run (--die-after), answers that never come or come late, an oversized line, and a
kind stdio does not have. The server's state dies with it: its own last words, and its --log
lines (shown by mcptask -v as `server: ...`), say what it did."""

from __future__ import annotations

import re

import pytest

from mcptask.reference_server.config import FaultKind
from tests.cli_process import reference_stdio_command, run_mcptask
from tests.faults.support import (
    LEGACY,
    cancels_sent,
    injected,
    only,
    outcomes,
    retries,
    seed_for,
    working,
)


def newest_first(report: dict[str, tuple[str, str | None, str]], tasks: int) -> list[str]:
    """The outcomes in the order the run met the tasks (the list is newest first)."""
    return [report[f"working-{n:03d}"][0] for n in range(tasks, 0, -1)]


def test_a_server_that_dies_mid_run_ends_it_with_exit_3_and_every_task_reported() -> None:
    tasks = 10
    # initialize is answer 1, the tasks/list page 2; then a cancel and its tasks/get per
    # task: answer 9 is the cancel of the fourth task the run meets (working-007).
    server = reference_stdio_command("--seed", f"working={tasks}", "--die-after", "9")
    result = run_mcptask(
        "cancel", "--all-working", "--yes", "--server", server, "-o", "json", *LEGACY
    )
    assert result.code == 3, result.stderr
    error = result.stderr.strip().splitlines()[-1]
    assert error.startswith(
        "mcptask: error: the server process exited with code 70; its last output:"
    )
    # The tail of its stderr: the switch it ran with, and its last line.
    assert "fault switches on: the process dies at answer 9 (--die-after)" in error
    assert "--die-after 9: handled request 9, tasks/cancel working-007 (id 9)" in error
    report = outcomes(result, working(tasks))
    assert newest_first(report, tasks) == ["cancelled"] * 3 + ["unknown"] + ["skipped"] * 6
    _, status, message = report["working-007"]
    assert status is None
    assert "the answer to the cancel was lost (the server process exited with code 70" in message
    # The dead server's last words once, not again for the tasks/get that followed.
    assert message.endswith("; tasks/get failed the same way")
    assert message.count("its last output") == 1
    assert all(
        report[f"working-{n:03d}"][2] == "not attempted: the run stopped on an error"
        for n in range(1, 7)
    )
    assert all(report[f"working-{n:03d}"][1] == "cancelled" for n in range(8, 11))
    document = result.json()
    assert document["exitCode"] == 3
    assert document["summary"]["unknown"] == 1


def test_a_server_that_dies_before_answering_the_handshake() -> None:
    server = reference_stdio_command("--seed", "working=1", "--die-after", "1")
    result = run_mcptask("list", "--server", server, *LEGACY)
    result.assert_one_line_error(
        3, "the server process exited with code 70", "handled request 1, initialize (id 1)"
    )


@pytest.mark.parametrize(
    ("kind", "cancels"),
    [
        # Dropped unhandled: tasks/get shows the task still working, so the cancel is sent
        # again (a fresh id), and that one is answered.
        ("reset", 6),
        # Handled, never answered: tasks/get shows the cancel took effect; no resend.
        ("lost", 5),
        # Handled, answered too late: the same (the late answer to the old id is set aside).
        ("slow", 5),
    ],
)
def test_an_answer_that_never_comes_on_stdio_is_resolved_and_the_run_goes_on(
    kind: str, cancels: int
) -> None:
    tasks = 5
    # Task requests: the list page, then a cancel and a tasks/get per task: the 6th is the
    # cancel of the third task the run meets (working-003); the tasks/get that follows it
    # (the client's question about its effect) gets no fault.
    seed = seed_for(".....F.", only(FaultKind(kind), 0.2))
    server = reference_stdio_command(
        "--seed", f"working={tasks}", "--fault-rate", "0.2", "--fault-kind", kind,
        "--fault-seed", str(seed), "--fault-delay", "3000", "--log",
    )  # fmt: skip
    result = run_mcptask(
        "cancel", "--all-working", "--yes", "--server", server, "-o", "json", "-v", *LEGACY,
        "--timeout", "1.5",
    )  # fmt: skip
    assert result.code == 0, result.stderr[-2000:]
    assert injected(result.stderr)[0] == (kind, "tasks/cancel", "working-003")
    report = outcomes(result, working(tasks))
    assert newest_first(report, tasks) == ["cancelled"] * tasks
    assert all(status == "cancelled" for _, status, _ in report.values())
    if kind == "reset":
        # Resent: its outcome is the answer to the second cancel.
        assert cancels_sent(result) == cancels
    else:
        assert "the answer to the cancel was lost" in report["working-003"][2]
        assert "the server did not answer tasks/cancel within 1.5s" in report["working-003"][2]
        assert cancels_sent(result) == cancels
    # A cancel is never retried blindly: its effect is asked with tasks/get.
    assert retries(result) == []


def test_a_get_whose_answer_is_lost_on_stdio_is_asked_again() -> None:
    # The first task request (the tasks/get) gets no answer; the second does.
    seed = seed_for("F.", only(FaultKind.LOST, 0.5))
    server = reference_stdio_command(
        "--seed", "working=1", "--fault-rate", "0.5", "--fault-kind", "lost",
        "--fault-seed", str(seed), "--log",
    )  # fmt: skip
    result = run_mcptask(
        "get", "working-001", "--server", server, "-o", "json", "-v", *LEGACY,
        "--timeout", "1.5",
    )  # fmt: skip
    assert result.code == 0, result.stderr[-2000:]
    assert result.json()["taskId"] == "working-001"
    assert injected(result.stderr) == [("lost", "tasks/get", "working-001")]
    [retry] = retries(result)
    assert "of tasks/get" in retry
    assert "the server did not answer tasks/get within 1.5s" in retry


def test_a_server_that_stays_silent_on_stdio_exits_3_after_the_retries() -> None:
    server = reference_stdio_command(
        "--seed", "working=1", "--fault-rate", "1", "--fault-kind", "lost"
    )
    result = run_mcptask(
        "get", "working-001", "--server", server, *LEGACY, "--timeout", "0.3", "--retries", "2"
    )
    result.assert_one_line_error(3, "the server did not answer tasks/get within 0.3s")


def test_an_oversized_line_exits_8_naming_the_bound() -> None:
    server = reference_stdio_command(
        "--seed", "working=1", "--fault-rate", "1", "--fault-kind", "oversized",
        "--fault-oversize", "1000000",
    )  # fmt: skip
    result = run_mcptask(
        "get", "working-001", "--server", server, *LEGACY,
        env={"MCPTASK_MAX_ANSWER_BYTES": "65536"},
    )  # fmt: skip
    result.assert_one_line_error(8, "the server's answer is larger than 65536 bytes")


def test_a_kind_stdio_does_not_have_stops_the_server_at_start() -> None:
    server = reference_stdio_command("--fault-rate", "0.5", "--fault-kind", "busy")
    result = run_mcptask("list", "--server", server, *LEGACY)
    result.assert_one_line_error(3, "the server process exited with code 2")
    assert re.search(
        r"--fault-kind busy: HTTP-only \(stdio has reset, lost, slow, oversized\)", result.stderr
    )

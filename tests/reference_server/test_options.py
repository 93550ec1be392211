"""The command line of `mcptask reference-server`: options, --seed, --tasks-file, main()."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcptask.reference_server import main
from mcptask.reference_server.cli_options import UsageError, parse_config
from mcptask.reference_server.config import CancelMode, ProtocolEras, Scope
from mcptask.reference_server.scripting import OnCancel, Step, parse_seed, parse_tasks_file


def test_parse_seed_and_errors() -> None:
    assert parse_seed("working=2, completed=1") == (("working", 2), ("completed", 1))
    assert parse_seed("") == ()
    for bad, message in (
        ("working", "expected STATUS=COUNT, got 'working'"),
        ("working=x", "count for 'working' must be an integer, got 'x'"),
        ("sleeping=1", "status must be one of working, input_required, .*; got 'sleeping'"),
        ("working=1,working=2", "status 'working' given twice"),
        ("working=-1", "count for 'working' must be between 0 and 100000"),
    ):
        with pytest.raises(ValueError, match=f"^{message}$"):
            parse_seed(bad)


def test_parse_tasks_file() -> None:
    tasks = parse_tasks_file(
        '[{"taskId": "a", "steps": [[0.5, "completed", "ok"]], "onCancel": "delay:250"},'
        ' {"status": "input_required", "ttl": null}]'
    )
    assert tasks[0].task_id == "a"
    assert tasks[0].steps == (Step(0.5, "completed", "ok"),)
    assert tasks[0].on_cancel == OnCancel(kind="delay", delay_ms=250)
    assert tasks[0].has_ttl is False
    assert tasks[1].task_id is None
    assert tasks[1].status == "input_required"
    assert tasks[1].has_ttl is True
    assert tasks[1].ttl_ms is None
    for bad, message in (
        ("{}", r"must be a JSON list of task objects"),
        ("[1]", r"task #1 must be an object"),
        ('[{"steps": 3}]', r"task #1: steps must be a list of \[delaySeconds, status, message\]"),
        ('[{"taskId": "x"}, {"taskId": "x"}]', r"duplicate taskId 'x'"),
        ("nope", r"not valid JSON \(Expecting value at line 1\)"),
    ):
        with pytest.raises(ValueError, match=f"^{message}$"):
            parse_tasks_file(bad)


def test_parse_config_options(tmp_path: Path) -> None:
    tasks_file = tmp_path / "tasks.json"
    tasks_file.write_text('[{"taskId": "t1"}]', encoding="utf-8")
    config = parse_config(
        [
            "--http",
            "[::1]:0",
            "--seed",
            "working=3",
            "--tasks-file",
            str(tasks_file),
            "--complete-on-cancel",
            "working-001,working-002",
            "--complete-on-cancel",
            "t1",
            "--cancel-mode",
            "cooperative",
            "--cancel-delay",
            "-1",
            "--fault",
            "wrong-id",
            "--no-notify",
            "--scope",
            "session",
        ]
    )
    assert (config.host, config.port) == ("::1", 0)
    assert config.seed == (("working", 3),)
    assert config.scripted_tasks[0].task_id == "t1"
    assert config.complete_on_cancel == {"working-001", "working-002", "t1"}
    assert config.cancel_mode is CancelMode.COOPERATIVE
    assert config.cancel_delay_ms == -1
    assert config.fault is not None
    assert config.fault.value == "wrong-id"
    assert config.notify is False
    assert config.scope is Scope.SESSION
    defaults = parse_config([])
    assert (defaults.host, defaults.port, defaults.stdio) == ("127.0.0.1", 8765, False)
    with pytest.raises(UsageError, match=r"^--http expects HOST:PORT .*, got 'nohostport'$"):
        parse_config(["--http", "nohostport"])
    with pytest.raises(UsageError, match=r"^argument --stdio: not allowed with argument --http"):
        parse_config(["--http", "h:1", "--stdio"])


def test_main_reports_bad_seed_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--seed", "working=many"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("mcptask reference-server: error: bad --seed")


def test_main_help_returns_zero(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    assert "--cancel-mode" in capsys.readouterr().out


def test_protocol_era_and_cancel_delay_options() -> None:
    defaults = parse_config([])
    assert defaults.protocol_eras is ProtocolEras.BOTH
    assert (defaults.cancel_delay_ms, defaults.modern_cancel_delay_ms) == (1000, 300)
    both = parse_config(["--protocol-eras", "both", "--cancel-delay", "50"])
    assert both.protocol_eras is ProtocolEras.BOTH
    assert both.protocol_eras.legacy
    assert both.protocol_eras.modern
    assert (both.cancel_delay_ms, both.modern_cancel_delay_ms) == (50, 50)
    modern = parse_config(["--protocol-eras", "modern", "--modern-cancel-delay", "-1"])
    assert not modern.protocol_eras.legacy
    assert (modern.cancel_delay_ms, modern.modern_cancel_delay_ms) == (1000, -1)
    task = parse_tasks_file('[{"taskId": "a", "awaitInput": true}]')[0]
    assert task.await_input is True
    with pytest.raises(ValueError, match="awaitInput"):
        parse_tasks_file('[{"awaitInput": 1}]')
    visit = parse_tasks_file('[{"awaitInput": true, "askUrl": "https://x.example/a"}]')[0]
    assert visit.ask_url == "https://x.example/a"
    with pytest.raises(ValueError, match=r"^task #1: askUrl must be a non-empty string$"):
        parse_tasks_file('[{"awaitInput": true, "askUrl": ""}]')

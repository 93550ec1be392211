"""Several servers in one run: which profiles `-P` and `--all-profiles` name, and how the
servers' exit codes combine into the run's (docs/fleet.md)."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from mcptask.cli.fleet import fleet_exit_code, fleet_names
from mcptask.cli.options import Common
from mcptask.cli.settings import names_several
from mcptask.errors import ExitCode, UsageError

NAMES = ["prod-eu", "prod-us", "staging", "prod.old", "dev_1"]


@pytest.fixture(autouse=True)
def book(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    directory = tmp_path / "config"
    directory.mkdir()
    monkeypatch.setenv("MCPTASK_CONFIG_DIR", str(directory))
    monkeypatch.delenv("MCPTASK_CONFIG", raising=False)
    text = "".join(f'[profiles."{name}"]\nurl = "http://127.0.0.1:9/{name}"\n' for name in NAMES)
    (directory / "profiles.toml").write_text(text, encoding="utf-8")


@pytest.mark.parametrize(
    ("profile", "all_profiles", "chosen"),
    [
        ("staging", False, None),  # one name: the run of old
        (None, False, None),
        ("prod-*", False, ["prod-eu", "prod-us"]),
        ("prod*", False, ["prod-eu", "prod-us", "prod.old"]),
        ("prod-??", False, ["prod-eu", "prod-us"]),
        ("prod-[u]*", False, ["prod-us"]),
        ("staging,prod-eu", False, ["staging", "prod-eu"]),  # the order named
        ("staging, prod-*,prod-eu", False, ["staging", "prod-eu", "prod-us"]),  # each once
        (None, True, ["dev_1", "prod-eu", "prod-us", "prod.old", "staging"]),
    ],
)
def test_profiles_named(profile: str | None, all_profiles: bool, chosen: list[str] | None) -> None:
    assert fleet_names(Common(profile=profile), all_profiles) == chosen


def test_an_empty_pattern_names_nothing() -> None:
    with pytest.raises(UsageError, match="names no profile"):
        fleet_names(Common(profile="staging,"), False)


def test_a_pattern_that_matches_nothing_names_the_profiles() -> None:
    with pytest.raises(UsageError, match=r"'qa-\*' names no profile .*prod-eu"):
        fleet_names(Common(profile="qa-*"), False)


def test_patterns_are_case_sensitive_as_profile_names_are() -> None:
    with pytest.raises(UsageError, match="names no profile"):
        fleet_names(Common(profile="PROD-*"), False)


@pytest.mark.parametrize("value", ["a,b", "prod-*", "x?", "[ab]", "a,"])
def test_lists_and_patterns_name_several(value: str) -> None:
    assert names_several(value)


@pytest.mark.parametrize("value", [None, "prod", "prod-eu.1", "dev_1"])
def test_plain_names_name_one(value: str | None) -> None:
    assert not names_several(value)


OK, FAILED, PENDING = ExitCode.OK, ExitCode.TASK_FAILED, ExitCode.PENDING


@pytest.mark.parametrize(
    ("codes", "interrupted", "combined"),
    [
        ([OK, OK], False, OK),
        ([], False, OK),
        ([OK, PENDING], False, PENDING),
        ([PENDING, FAILED, OK], False, FAILED),  # a failed task outranks a pending one
        ([OK, ExitCode.UNREACHABLE], False, ExitCode.SERVERS_FAILED),
        ([FAILED, ExitCode.AUTH], False, ExitCode.SERVERS_FAILED),  # a server outranks a task
        ([ExitCode.UNSUPPORTED, ExitCode.PROTOCOL], False, ExitCode.SERVERS_FAILED),
        ([ExitCode.USAGE], False, ExitCode.SERVERS_FAILED),  # a profile that cannot be used
        ([ExitCode.UNREACHABLE, OK], True, ExitCode.INTERRUPTED),  # interrupted outranks all
    ],
)
def test_how_the_servers_codes_combine(
    codes: list[ExitCode], interrupted: bool, combined: ExitCode
) -> None:
    assert fleet_exit_code(codes, interrupted=interrupted) is combined


def test_a_bug_in_one_servers_run_fails_that_server_alone() -> None:
    import io

    from mcptask.cli.fleet import Slots, start_servers
    from mcptask.cli.invocation import Invocation, StopSignal
    from mcptask.output.screen import Screen
    from mcptask.output.views.fleet import ServerRun

    def work(run: ServerRun[None], invocation: Invocation) -> None:
        if run.server == "prod-eu":
            raise RuntimeError("boom")

    screen = Screen("json", stdout=io.StringIO(), stderr=io.StringIO())
    runs, join = start_servers(
        Common(), ["prod-eu", "staging"], screen, work, Slots(2), stop=StopSignal()
    )
    join()
    broken, fine = runs
    assert broken.outcome == "failed"
    assert broken.exit_code == ExitCode.UNEXPECTED
    assert broken.error is not None
    assert "internal error (RuntimeError: boom)" in broken.error
    assert (fine.outcome, fine.exit_code) == ("ok", 0)


def test_a_server_still_waiting_for_its_slot_when_stopped_is_skipped() -> None:
    import io

    from mcptask.cli.fleet import Slots, start_servers
    from mcptask.cli.invocation import Invocation, StopSignal
    from mcptask.output.screen import Screen
    from mcptask.output.views.fleet import ServerRun

    stop = StopSignal()
    worked: list[str] = []

    def work(run: ServerRun[None], invocation: Invocation) -> None:
        worked.append(run.server)
        stop.event.set()  # Ctrl-C while the one slot is taken

    screen = Screen("json", stdout=io.StringIO(), stderr=io.StringIO())
    runs, join = start_servers(
        Common(), ["prod-eu", "prod-us", "staging"], screen, work, Slots(1), stop=stop
    )
    join()
    assert len(worked) == 1
    assert sorted(run.outcome for run in runs) == ["ok", "skipped", "skipped"]
    assert all(run.exit_code == ExitCode.INTERRUPTED for run in runs if run.outcome == "skipped")


def test_mcptask_profile_names_one_server_and_says_so_of_a_pattern() -> None:
    from mcptask.cli.settings import profile_book, profile_in_use

    env = {"MCPTASK_PROFILE": "prod-*"}
    with pytest.raises(UsageError, match=r"MCPTASK_PROFILE names one profile.* -P 'prod-\*'"):
        profile_in_use(Common(), profile_book(Common(), env), env)


FLEET_RUNS = {
    "connect": (["connect"], "servers", "connect_fleet"),
    "list": (["list"], "list_tasks", "list_fleet"),
    "get": (["get", "t1"], "one_task", "get_fleet"),
    "cancel": (["cancel", "t1"], "cancel", "cancel_fleet"),
    "watch": (["watch", "t1"], "watch", "watch_fleet"),
}


@pytest.mark.parametrize("command", sorted(FLEET_RUNS))
def test_a_repeated_profile_names_several_as_a_list_does(
    command: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from mcptask.cli.app import run

    words, module, runner = FLEET_RUNS[command]
    named: list[list[str]] = []

    def fake_run(common: Common, names: list[str], *args: object, **kwargs: object) -> None:
        named.append(names)
        raise UsageError("stop here")

    monkeypatch.setattr(importlib.import_module(f"mcptask.cli.commands.{module}"), runner, fake_run)
    monkeypatch.delenv("MCPTASK_PROFILE", raising=False)
    assert run([*words, "-P", "staging", "-P", "prod-eu"]) == 2
    assert run([*words, "-P", "staging,prod-eu"]) == 2
    assert run(["-P", "staging", *words, "-P", "prod-*", "-P", "staging"]) == 2
    assert named == [
        ["staging", "prod-eu"],
        ["staging", "prod-eu"],
        ["staging", "prod-eu", "prod-us"],
    ]
    # One -P NAME, given once or twice, is the one server's run of old (here: unreachable).
    assert run([*words, "-P", "staging", "--timeout", "0.5", "--retries", "0"]) == 3
    assert (
        run(["-P", "staging", *words, "-P", "staging", "--timeout", "0.5", "--retries", "0"]) == 3
    )
    assert len(named) == 3

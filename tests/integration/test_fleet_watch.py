"""`watch` over several servers, end to end: the real `mcptask watch -P ...` against reference
servers in the test process whose manual clocks move on only once mcptask has seen each
state (tests/clocked_reference_server.py), beside real server processes that are stopped,
refuse the token or lack tasks; one merged report, each server's outcome in its section,
the exit codes combined as for the other commands over several servers (docs/fleet.md)."""

from __future__ import annotations

import collections
import contextlib
import json
import os
import re
import select
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pexpect
import pytest

from tests.cli_process import (
    Result,
    Running,
    mcptask_argv,
    run_mcptask,
    run_mcptask_during,
    spawn_mcptask,
)
from tests.clocked_reference_server import ClockedServer, clocked_http_server
from tests.conftest import StartServer
from tests.integration.test_fleet import dead_server_url, save_profiles
from tests.reference_server_process import FIXTURES_ARG

EU_TASKS = [
    {"taskId": "build", "steps": [[2.0, "completed", "built"]]},
    {"taskId": "deploy", "steps": [[1.0, "working", "rolling out"], [1.0, "completed", "done"]]},
]
US_TASKS = [{"taskId": "backfill", "steps": [[2.0, "failed", "disk full"]]}]


@dataclass
class Watched:
    """Two clocked servers (profiles eu and us), and the environment that finds them."""

    eu: ClockedServer
    us: ClockedServer
    env: dict[str, str]
    config: Path

    def add(self, **urls: str) -> None:
        save_profiles(self.config, {"eu": self.eu.url, "us": self.us.url, **urls})

    def watch(self, *args: str, during: Any) -> Result:
        return run_mcptask_during(during, "watch", *args, env=self.env)


@contextlib.contextmanager
def two_clocked_servers(tmp_path: Path, eu: list[Any], us: list[Any]) -> Iterator[Watched]:
    scripts = []
    for name, tasks in (("eu", eu), ("us", us)):
        script = tmp_path / f"{name}.json"
        script.write_text(json.dumps(tasks), encoding="utf-8")
        scripts.append(str(script))
    env = {"MCPTASK_CONFIG_DIR": str(tmp_path / "config"), "MCPTASK_STATE_DIR": str(tmp_path)}
    with (
        clocked_http_server("--tasks-file", scripts[0], "--poll-interval", "200") as eu_server,
        clocked_http_server("--tasks-file", scripts[1], "--poll-interval", "200") as us_server,
    ):
        watched = Watched(eu_server, us_server, env, tmp_path / "config")
        watched.add()
        yield watched


@pytest.fixture
def watched(tmp_path: Path) -> Iterator[Watched]:
    with two_clocked_servers(tmp_path, EU_TASKS, US_TASKS) as servers:
        yield servers


def lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def test_every_server_is_watched_and_the_ones_that_fail_are_named(
    watched: Watched, reference_server: StartServer
) -> None:
    watched.add(
        dead=dead_server_url(),
        locked=reference_server("--seed", "working=1", "--require-token", "s3cret"),
        notasks=reference_server("--no-tasks"),
    )

    def play(watch: Running) -> None:
        watched.eu.play(1.0, 1.0, watch=watch, reported=True)
        watched.us.play(2.0, watch=watch, reported=True)

    result = watched.watch("--all-profiles", "-o", "jsonl", "--retry-for", "1", during=play)
    assert result.code == 12, result.stderr
    seen = [
        (line["server"], line["taskId"], line["previous"], line["status"])
        for line in lines(result.stdout)
    ]
    assert seen.count(("eu", "build", "working", "completed")) == 1
    assert ("eu", "deploy", "working", "completed") in seen
    assert seen.count(("us", "backfill", "working", "failed")) == 1
    assert {server for server, *_ in seen} == {"eu", "us"}
    for name in ("dead", "locked", "notasks"):
        assert f"mcptask: error: {name}: " in result.stderr
    assert "Traceback" not in result.stderr


def test_json_holds_a_section_per_server_and_exit_status_counts_each(
    watched: Watched,
) -> None:
    def play(watch: Running) -> None:
        watched.eu.play(1.0, 1.0, watch=watch)
        watched.us.play(2.0, watch=watch)

    result = watched.watch("-P", "eu", "-P", "us", "-o", "json", "--exit-status", during=play)
    assert result.code == 7, result.stderr  # us's task failed; eu's completed
    document = result.json()
    assert document["interrupted"] is False
    assert document["exitCode"] == 7
    found = {section["server"]: section for section in document["servers"]}
    assert [found[name]["exitCode"] for name in ("eu", "us")] == [0, 7]
    assert found["eu"]["era"] == "2025-11-25"
    statuses = {
        (name, task["taskId"]): task["status"]
        for name, section in found.items()
        for task in section["report"]["tasks"]
    }
    assert statuses == {
        ("eu", "build"): "completed",
        ("eu", "deploy"): "completed",
        ("us", "backfill"): "failed",
    }


def test_ctrl_c_stops_every_watch_and_reports_each_task_once(tmp_path: Path) -> None:
    with two_clocked_servers(tmp_path, EU_TASKS, US_TASKS) as servers:
        servers.add(dead=dead_server_url())  # retried (as long as --retry-for) until Ctrl-C

        def interrupt(watch: Running) -> None:
            servers.eu.play(0.0, watch=watch)
            servers.us.play(0.0, watch=watch)
            watch.process.send_signal(signal.SIGINT)

        result = servers.watch("--all-profiles", "-o", "json", during=interrupt)
    assert result.code == 130, result.stderr
    document = result.json()
    assert document["interrupted"] is True
    found = {section["server"]: section for section in document["servers"]}
    assert found["dead"]["outcome"] == "failed"
    watched_tasks = collections.Counter(
        (name, task["taskId"], task["status"])
        for name, section in found.items()
        for task in (section["report"] or {"tasks": []})["tasks"]
    )
    assert watched_tasks == {
        ("eu", "build", "working"): 1,
        ("eu", "deploy", "working"): 1,
        ("us", "backfill", "working"): 1,
    }


def test_a_terminal_shows_one_live_table_with_a_server_column(
    tmp_path: Path, reference_server: StartServer
) -> None:
    urls = {
        "alpha": reference_server("--seed", "working=2", "--poll-interval", "200"),
        "beta": reference_server("--seed", "working=1,input_required=1", "--poll-interval", "200"),
        "dead": dead_server_url(),
    }
    save_profiles(tmp_path / "config", urls)
    child = spawn_mcptask(
        *("watch", "-P", "alpha,beta,dead", "--retry-for", "1"),
        env={"MCPTASK_CONFIG_DIR": str(tmp_path / "config"), "MCPTASK_STATE_DIR": str(tmp_path)},
        dimensions=(30, 120),
    )
    try:
        child.expect(r"1 input_required · 3 working(\x1b\[[0-9;]*m)*\s+failed: dead")
        screen = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", child.before or "")
        child.sendintr()
        child.expect(pexpect.EOF)
        after = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", child.before or "")
    finally:
        child.close()
    assert child.exitstatus == 130
    assert re.search(r"SERVER\s+TASK ID\s+STATUS", screen)
    assert re.search(r"alpha\s+working-002\s+working", screen)
    assert re.search(r"beta\s+input_required-001\s+input_required", screen)
    assert "mcptask: error: dead: cannot connect" in after
    assert "Traceback" not in after


def test_one_plain_profile_watches_exactly_as_before(
    reference_server: StartServer, tmp_path: Path
) -> None:
    url = reference_server("--seed", "completed=1,failed=1")
    save_profiles(tmp_path / "config", {"alpha": url})
    env = {"MCPTASK_CONFIG_DIR": str(tmp_path / "config"), "MCPTASK_STATE_DIR": str(tmp_path)}
    ids = ("completed-001", "failed-001", "--exit-status")
    by_profile = run_mcptask("watch", *ids, "-P", "alpha", "-o", "json", env=env)
    by_url = run_mcptask("watch", *ids, "--url", url, "-o", "json", env=env)
    assert by_profile.code == by_url.code == 7
    assert by_profile.stdout == by_url.stdout
    assert by_profile.stderr == by_url.stderr
    assert "servers" not in by_profile.json()


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("--answer",), "--answer asks on the terminal for one server"),
        (("-o", "ids"), "several servers have no ids output"),
    ],
)
def test_watch_misuse_over_several_servers_is_one_line(
    watched: Watched, args: tuple[str, ...], fragment: str
) -> None:
    result = run_mcptask("watch", "-P", "eu,us", *args, env=watched.env)
    result.assert_one_line_error(2, fragment)


def test_stdout_lines_and_exit_without_a_terminal(watched: Watched) -> None:
    def play(watch: Running) -> None:
        watched.eu.play(1.0, 1.0, watch=watch)
        watched.us.play(2.0, watch=watch)

    result = watched.watch("-P", "*", "-o", "table", during=play)
    assert result.code == 0, result.stderr
    assert re.search(r"Z  us  backfill  working -> failed  disk full", result.stdout)
    assert re.search(r"Z  eu  build  working -> completed  built", result.stdout)
    assert result.stderr_lines == []


def test_a_question_is_named_with_the_server_that_answers_it(
    tmp_path: Path, reference_server: StartServer
) -> None:
    asks = reference_server("--protocol-eras", "modern", FIXTURES_ARG)
    save_profiles(tmp_path / "config", {"asks": asks, "quiet": reference_server("--seed", "")})
    env = {"MCPTASK_CONFIG_DIR": str(tmp_path / "config"), "MCPTASK_STATE_DIR": str(tmp_path)}
    started = run_mcptask(
        "start", "confirm_delete", "filename=d.txt", "-P", "asks", "-o", "ids", env=env
    )
    assert started.code == 0, started.stderr
    task_id = started.stdout.strip()
    watched = run_mcptask("watch", task_id, "-P", "asks,quiet", "--wait-timeout", "1", env=env)
    assert watched.code == 7, watched.stderr  # asks: still waiting; quiet: the task is gone
    assert f"asks: task {task_id} " in watched.stderr
    assert f"(answer with: mcptask answer -P asks {task_id})" in watched.stderr
    assert watched.stderr.count("answer with:") == 1
    # One server named by its profile: the hint names it too.
    alone = run_mcptask("watch", task_id, "-P", "asks", "--wait-timeout", "1", env=env)
    assert alone.code == 7, alone.stderr
    assert f"(answer with: mcptask answer -P asks {task_id})" in alone.stderr


def test_a_reader_that_leaves_ends_every_watch(
    tmp_path: Path, reference_server: StartServer
) -> None:
    # `watch -P ... | head -1`: the tasks stay working for minutes, yet the watch ends at once,
    # as one server's does (not as a Ctrl-C).
    urls = {name: reference_server("--seed", "working=2") for name in ("alpha", "beta")}
    save_profiles(tmp_path / "config", urls)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("MCPTASK_")},
        "MCPTASK_CONFIG_DIR": str(tmp_path / "config"),
        "MCPTASK_STATE_DIR": str(tmp_path),
    }
    argv = [*mcptask_argv(), "watch", "-P", "alpha,beta", "-o", "jsonl", "--interval", "0.2"]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert process.stdout is not None
    try:
        ready, _, _ = select.select([process.stdout], [], [], 20)
        assert ready, "watch printed nothing within 20 s"
        assert b'"server":' in process.stdout.readline()
        process.stdout.close()  # the reader is gone
        assert process.wait(timeout=20) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert process.stderr is not None
    assert process.stderr.read() == b""


def test_parallel_one_watches_the_servers_one_after_the_other(
    tmp_path: Path, reference_server: StartServer
) -> None:
    urls = {name: reference_server("--seed", "completed=1") for name in ("alpha", "beta")}
    save_profiles(tmp_path / "config", urls)
    env = {"MCPTASK_CONFIG_DIR": str(tmp_path / "config"), "MCPTASK_STATE_DIR": str(tmp_path)}
    result = run_mcptask(
        "watch", "completed-001", "-P", "alpha,beta", "--parallel", "1", "-o", "json", env=env
    )
    assert result.code == 0, result.stderr
    found = {section["server"]: section for section in result.json()["servers"]}
    for name in ("alpha", "beta"):
        assert found[name]["outcome"] == "ok"
        assert [task["status"] for task in found[name]["report"]["tasks"]] == ["completed"]

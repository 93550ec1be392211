"""Several servers in one run, end to end: the real `mcptask` against several real reference
server processes at once (one per profile), among them one that is stopped, one without tasks
and one that refuses the sign-in; each server's outcome in its own section, the others going
on, and the exit codes that combine them (docs/fleet.md)."""

from __future__ import annotations

import collections
import contextlib
import json
import os
import signal
import socket
import subprocess
import threading
import time
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
    reference_stdio_command,
    run_mcptask,
    run_mcptask_during,
    spawn_mcptask,
    unused_port,
)
from tests.conftest import StartServer
from tests.reference_server_process import ReferenceServerProcess, stop_process
from tests.security.hostile_mcp import HostileMcp
from tests.security.hostile_mcp import task as hostile_task


@dataclass
class Fleet:
    """Saved profiles, one per reference server, and the environment that finds them."""

    urls: dict[str, str]
    env: dict[str, str]

    def run(self, *args: str, stdin: str | None = None) -> Result:
        return run_mcptask(*args, env=self.env, stdin=stdin)


def save_profiles(config: Path, urls: dict[str, str]) -> None:
    config.mkdir(parents=True, exist_ok=True)
    text = "".join(f'[profiles.{name}]\nurl = "{url}"\n\n' for name, url in urls.items())
    (config / "profiles.toml").write_text(text, encoding="utf-8")


def dead_server_url() -> str:
    """A URL on 127.0.0.1 where nothing listens (a port bound briefly, then released)."""
    return f"http://127.0.0.1:{unused_port()}/mcp"


def start_fleet(start: StartServer) -> dict[str, str]:
    """The fleet's live servers (the dead one is made per test: see make_fleet)."""
    return {
        "alpha": start("--seed", "working=3,completed=1"),
        "beta": start("--seed", "working=2,input_required=1"),
        "locked": start("--seed", "working=1", "--require-token", "s3cret"),
        "notasks": start("--no-tasks"),
    }


def make_fleet(tmp_path: Path, live: dict[str, str]) -> Fleet:
    urls = {"alpha": live["alpha"], "beta": live["beta"], "dead": dead_server_url()}
    urls.update(locked=live["locked"], notasks=live["notasks"])
    save_profiles(tmp_path / "config", urls)
    env = {"MCPTASK_CONFIG_DIR": str(tmp_path / "config"), "MCPTASK_STATE_DIR": str(tmp_path)}
    return Fleet(urls, env)


@pytest.fixture
def fleet(tmp_path: Path, reference_server: StartServer) -> Fleet:
    """A fleet of its own, for a test that changes its servers' tasks."""
    return make_fleet(tmp_path, start_fleet(reference_server))


@pytest.fixture(scope="module")
def fleet_servers() -> Iterator[dict[str, str]]:
    """The live servers of shared_fleet, started once for this module (per xdist worker)."""
    starter = StartServer()
    try:
        yield start_fleet(starter)
    finally:
        starter.stop_all()


@pytest.fixture
def shared_fleet(tmp_path: Path, fleet_servers: dict[str, str]) -> Fleet:
    """The fleet for a test that changes nothing on its servers (it lists, gets, connects,
    answers no or does a dry run, and checks the tasks are still there): its own profiles
    and state, the module's servers."""
    return make_fleet(tmp_path, fleet_servers)


def sections(result: Result) -> dict[str, dict[str, Any]]:
    return {section["server"]: section for section in result.json()["servers"]}


def test_list_goes_on_past_the_servers_that_fail(shared_fleet: Fleet) -> None:
    result = shared_fleet.run("list", "--all-profiles", "-o", "json")
    assert result.code == 12, result.stderr
    found = sections(result)
    assert list(found) == ["alpha", "beta", "dead", "locked", "notasks"]
    assert [found[name]["outcome"] for name in found] == ["ok", "ok", "failed", "failed", "failed"]
    assert [found[name]["exitCode"] for name in found] == [0, 0, 3, 4, 5]
    report = found["alpha"]["report"]
    assert isinstance(report, dict)
    assert report["count"] == 4
    assert found["alpha"]["target"] == shared_fleet.urls["alpha"]
    assert found["alpha"]["era"] == "2025-11-25"
    assert found["dead"]["report"] is None
    assert found["dead"]["era"] is None
    for name in ("dead", "locked", "notasks"):
        assert f"mcptask: error: {name}: " in result.stderr
    assert "Traceback" not in result.stderr


def test_a_table_gains_a_server_column(shared_fleet: Fleet) -> None:
    result = shared_fleet.run("list", "-P", "alpha,beta", "-o", "table")
    assert result.code == 0, result.stderr
    header, *rows = result.stdout.splitlines()
    assert header.split()[:3] == ["SERVER", "TASK", "ID"]
    assert collections.Counter(row.split()[0] for row in rows) == {"alpha": 4, "beta": 3}


def test_one_plain_profile_prints_exactly_what_it_did(shared_fleet: Fleet) -> None:
    by_profile = shared_fleet.run("list", "-P", "alpha", "-o", "json")
    by_url = shared_fleet.run("list", "--url", shared_fleet.urls["alpha"], "-o", "json")
    assert by_profile.code == by_url.code == 0
    assert by_profile.stdout == by_url.stdout


def test_a_repeated_profile_is_a_list(shared_fleet: Fleet) -> None:
    repeated = shared_fleet.run("list", "-P", "alpha", "-P", "beta", "-o", "json")
    listed = shared_fleet.run("list", "-P", "alpha,beta", "-o", "json")
    assert repeated.code == listed.code == 0, repeated.stderr
    assert [section["server"] for section in repeated.json()["servers"]] == ["alpha", "beta"]
    assert [s["report"]["count"] for s in repeated.json()["servers"]] == [4, 3]
    before = shared_fleet.run("-P", "alpha", "list", "-P", "alpha", "-o", "json")
    assert before.stdout == shared_fleet.run("list", "-P", "alpha", "-o", "json").stdout


def test_cancel_all_working_on_every_matching_server(fleet: Fleet) -> None:
    result = fleet.run("cancel", "--all-working", "--yes", "-P", "al*,beta", "-o", "json")
    assert result.code == 0, result.stderr
    document = result.json()
    assert [section["server"] for section in document["servers"]] == ["alpha", "beta"]
    touched = [
        (section["server"], line["taskId"], line["outcome"])
        for section in document["servers"]
        for line in section["report"]["results"]
    ]
    assert len(touched) == len(set(touched)) == 6
    assert {outcome for _, _, outcome in touched} == {"cancelled"}
    assert document["summary"]["cancelled"] == 6
    assert document["interrupted"] is False
    after = fleet.run("list", "-P", "alpha,beta", "--status", "working", "-o", "json")
    assert [section["report"]["count"] for section in after.json()["servers"]] == [0, 0]


def test_cancel_lines_carry_their_server_and_failures_set_12(fleet: Fleet) -> None:
    result = fleet.run("cancel", "--all-working", "--yes", "--all-profiles", "-o", "jsonl")
    assert result.code == 12, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    per_server = collections.Counter(line["server"] for line in lines)
    assert per_server == {"alpha": 3, "beta": 3}
    assert len({(line["server"], line["taskId"]) for line in lines}) == 6
    for name in ("dead", "locked", "notasks"):
        assert f"{name}: failed" in result.stderr


def test_a_dry_run_sends_nothing_anywhere(shared_fleet: Fleet) -> None:
    result = shared_fleet.run(
        "cancel", "--all-working", "--dry-run", "-P", "alpha,beta", "-o", "json"
    )
    assert result.code == 0, result.stderr
    document = result.json()
    assert document["dryRun"] is True
    counts = [len(section["report"]["tasks"]) for section in document["servers"]]
    assert counts == [3, 3]
    assert "dry run: 6 task(s) would be cancelled" in result.stderr
    still = shared_fleet.run("list", "-P", "alpha,beta", "--status", "working,input_required")
    assert sum(section["report"]["count"] for section in still.json()["servers"]) == 6


def test_get_finds_the_task_where_it_is(shared_fleet: Fleet, reference_server: StartServer) -> None:
    shared_fleet.urls["gamma"] = reference_server("--seed", "failed=1")
    save_profiles(Path(shared_fleet.env["MCPTASK_CONFIG_DIR"]), shared_fleet.urls)
    found = shared_fleet.run("get", "failed-001", "-P", "alpha,gamma", "-o", "json")
    assert found.code == 0, found.stderr
    reports = [section["report"] for section in found.json()["servers"]]
    assert reports[0] is None
    assert reports[1]["status"] == "failed"
    nowhere = shared_fleet.run("get", "failed-001", "-P", "alpha,beta", "-o", "json")
    assert nowhere.code == 6


def test_connect_shows_each_server(shared_fleet: Fleet) -> None:
    result = shared_fleet.run("connect", "-P", "alpha,notasks,dead", "-o", "json")
    assert result.code == 12, result.stderr
    found = sections(result)
    assert found["alpha"]["report"]["tasks"]["supported"] is True
    assert found["notasks"]["report"]["tasks"]["supported"] is False
    assert found["dead"]["outcome"] == "failed"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (("list", "-P", "nothing-*"), "--profile 'nothing-*' names no profile"),
        (("start", "echo", "-P", "a*"), "only connect, list, get and cancel"),
        (("list", "--all-profiles", "-P", "alpha"), "either --all-profiles or --profile"),
        (("list", "-P", "alpha,beta", "-o", "ids"), "several servers have no ids output"),
        (("list", "-P", "alpha,beta", "--url", "http://127.0.0.1:1/mcp"), "give no --url"),
        (("list", "-P", "alpha,beta", "--session-id", "s-1"), "give no --session-id"),
        (("cancel", "--all-working", "--all-profiles", "--session-id", "s-1"), "--session-id"),
        (("watch", "-P", "a*,beta", "--session-id", "s-1"), "a session id belongs to one"),
    ],
)
def test_misuse_is_one_line(shared_fleet: Fleet, args: tuple[str, ...], fragment: str) -> None:
    shared_fleet.run(*args).assert_one_line_error(2, fragment)


def test_rate_paces_the_cancels_and_changes_no_outcome(fleet: Fleet) -> None:
    result = fleet.run(
        "cancel", "--all-working", "--yes", "--rate", "20", "-P", "alpha", "-o", "json"
    )
    assert result.code == 0, result.stderr
    assert result.json()["summary"]["cancelled"] == 3


def test_sigint_stops_every_server_and_reports_each_task_once(
    tmp_path: Path, reference_server: StartServer
) -> None:
    urls = {
        f"slow-{n}": reference_server("--seed", "working=100", "--latency", "25") for n in range(3)
    }
    save_profiles(tmp_path / "config", urls)
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("MCPTASK_")},
        "MCPTASK_CONFIG_DIR": str(tmp_path / "config"),
        "MCPTASK_STATE_DIR": str(tmp_path),
        "NO_COLOR": "1",
    }
    process = subprocess.Popen(
        [*mcptask_argv(), "cancel", "--all-working", "--yes", "-P", "slow-*", "-o", "jsonl"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert process.stdout is not None
        first = [process.stdout.readline() for _ in range(6)]
        process.send_signal(signal.SIGINT)
        rest = process.stdout.read()
        _, stderr = process.communicate(timeout=60)
    finally:
        stop_process(process)
    assert process.returncode == 130, stderr
    lines = [json.loads(line) for line in first + rest.splitlines() if line.strip()]
    keys = [(line["server"], line["taskId"]) for line in lines]
    assert len(keys) == len(set(keys)) == 300
    seen = collections.Counter(line["outcome"] for line in lines)
    assert set(seen) == {"cancelled", "skipped"}
    assert seen["skipped"] >= 1


def test_the_prompt_says_how_many_tasks_where(shared_fleet: Fleet) -> None:
    child = spawn_mcptask("cancel", "--all-working", "-P", "alpha,beta,dead", env=shared_fleet.env)
    try:
        child.expect(r"Cancel these 6 tasks on 2 servers\?")
        summary = child.before
        child.sendline("n")
        child.expect(pexpect.EOF)
    finally:
        child.close()
    assert child.exitstatus == 130
    assert "alpha" in summary
    assert "3 working" in summary
    assert "beta" in summary
    assert "1 input_required, 2 working" in summary
    assert "dead" in summary
    assert "cannot connect" in summary
    still = shared_fleet.run("list", "-P", "alpha,beta", "--status", "working,input_required")
    assert sum(section["report"]["count"] for section in still.json()["servers"]) == 6


def test_sigint_while_servers_select_reports_their_tasks_skipped(
    tmp_path: Path, reference_server: StartServer
) -> None:
    listing, release = threading.Event(), threading.Event()

    def stuck_pages(cursor: str | None) -> tuple[list[dict[str, Any]], None]:
        listing.set()
        release.wait(30)
        return [hostile_task("stuck-1")], None

    with HostileMcp(pages=stuck_pages) as stuck:
        alpha = reference_server("--seed", "working=3")
        config = tmp_path / "config"
        config.mkdir()
        (config / "profiles.toml").write_text(
            f'[profiles.alpha]\nurl = "{alpha}"\n\n'
            f'[profiles.stuck]\nurl = "{stuck.url}"\nprotocol = "2025-11-25"\n',
            encoding="utf-8",
        )
        env = {"MCPTASK_CONFIG_DIR": str(config), "MCPTASK_STATE_DIR": str(tmp_path)}
        process = subprocess.Popen(
            [
                *mcptask_argv(),
                "cancel",
                "--all-working",
                "--yes",
                "-P",
                "alpha,stuck",
                "-o",
                "json",
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env={**{k: v for k, v in os.environ.items() if not k.startswith("MCPTASK_")}, **env},
        )
        try:
            assert listing.wait(30), "mcptask never asked the stuck server for its tasks"
            process.send_signal(signal.SIGINT)
            release.set()
            stdout, stderr = process.communicate(timeout=60)
        finally:
            release.set()
            stop_process(process)
        assert "tasks/cancel" not in stuck.calls
    assert process.returncode == 130, stderr
    document = json.loads(stdout)
    assert document["interrupted"] is True
    touched = {
        (section["server"], line["taskId"]): line["outcome"]
        for section in document["servers"]
        for line in (section["report"] or {"results": []})["results"]
    }
    assert touched == {
        ("alpha", "working-001"): "skipped",
        ("alpha", "working-002"): "skipped",
        ("alpha", "working-003"): "skipped",
        ("stuck", "stuck-1"): "skipped",
    }
    after = run_mcptask("list", "--url", alpha, "--status", "working", "-o", "json")
    assert after.json()["count"] == 3


def test_a_config_files_hostile_server_name_reaches_no_terminal_raw(
    fleet: Fleet, tmp_path: Path
) -> None:
    hostile = "evil\x1b]0;PWNED\x07\x1b[5mblink"
    servers = {"ok": {"url": fleet.urls["alpha"]}, hostile: {"url": fleet.urls["beta"]}}
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    child = spawn_mcptask(
        "cancel", "--all-working", "--config", str(config), "--all-profiles", env=fleet.env
    )
    try:
        child.expect(r"Cancel these \d+ tasks on \d+ servers\?")
        prompt = child.before
        child.sendline("y")
        child.expect(pexpect.EOF)
        report = child.before
    finally:
        child.close()
    assert "evil" in prompt
    assert "evil" in report
    for shown in (prompt, report):
        assert "\x1b]0;PWNED" not in shown
        assert "\x1b[5m" not in shown


def test_a_config_files_server_named_like_a_pattern_is_that_server(
    shared_fleet: Fleet, tmp_path: Path
) -> None:
    servers = {
        "ok": {"url": shared_fleet.urls["alpha"]},
        "team[a],b": {"url": shared_fleet.urls["beta"]},
    }
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    every = shared_fleet.run("list", "--config", str(config), "--all-profiles", "-o", "json")
    assert every.code == 0, every.stderr
    assert [section["outcome"] for section in every.json()["servers"]] == ["ok", "ok"]
    alone = shared_fleet.run("list", "--config", str(config), "-P", "team[a],b", "-o", "json")
    assert alone.code == 0, alone.stderr
    assert alone.json()["count"] == 3


@pytest.mark.parametrize("output", ["table", "json", "jsonl"])
def test_get_of_a_task_on_no_server_says_so(shared_fleet: Fleet, output: str) -> None:
    result = shared_fleet.run("get", "no-such-task", "-P", "alpha,beta", "-o", output)
    assert result.code == 6
    assert "task no-such-task not found on alpha, beta" in result.stderr


class SilentServer:
    """Takes connections and requests on 127.0.0.1 and never answers; counts the requests."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}/mcp"
        self.requests = 0
        self.asked = threading.Event()
        self._open: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        with contextlib.suppress(OSError):
            while True:
                connection, _ = self._listener.accept()
                self._open.append(connection)
                threading.Thread(target=self._read, args=(connection,), daemon=True).start()

    def _read(self, connection: socket.socket) -> None:
        with contextlib.suppress(OSError):
            while data := connection.recv(65536):
                self.requests += data.count(b"POST ")
                self.asked.set()

    def close(self) -> None:
        for connection in [self._listener, *self._open]:
            connection.close()


@pytest.mark.parametrize("protocol", ["2025-11-25", "auto"])
def test_sigint_sends_no_retry_to_a_server_that_does_not_answer(
    tmp_path: Path, reference_server: StartServer, protocol: str
) -> None:
    silent = SilentServer()
    config = tmp_path / "config"
    save_profiles(config, {"alpha": reference_server("--seed", "working=1")})
    with (config / "profiles.toml").open("a", encoding="utf-8") as profiles:
        profiles.write(f'[profiles.pinned]\nurl = "{silent.url}"\nprotocol = "{protocol}"\n')
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("MCPTASK_")},
        "MCPTASK_CONFIG_DIR": str(config),
        "MCPTASK_STATE_DIR": str(tmp_path),
    }
    argv = [*mcptask_argv(), "list", "-P", "alpha,pinned", "--timeout", "2", "-o", "json"]
    process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    try:
        assert silent.asked.wait(30), "mcptask never asked the silent server"
        process.send_signal(signal.SIGINT)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        stop_process(process)
        silent.close()
    assert process.returncode == 130, stderr
    assert silent.requests == 1  # the request in flight; no retry, no other handshake after
    found = {section["server"]: section for section in json.loads(stdout)["servers"]}
    assert found["alpha"]["outcome"] == "ok"
    assert found["pinned"]["outcome"] == "failed"


def test_nothing_to_cancel_anywhere_asks_nothing(
    tmp_path: Path, reference_server: StartServer
) -> None:
    urls = {f"done-{n}": reference_server("--seed", "completed=1") for n in range(2)}
    save_profiles(tmp_path / "config", urls)
    state = {"MCPTASK_CONFIG_DIR": str(tmp_path / "config"), "MCPTASK_STATE_DIR": str(tmp_path)}
    child = spawn_mcptask("cancel", "--all-working", "-P", "done-*", env=state)
    try:
        child.expect(pexpect.EOF)
        shown = child.before
    finally:
        child.close()
    assert "Cancel these" not in shown
    assert child.exitstatus == 0, shown
    assert shown.count("0 tasks: nothing to do") == 3  # each server, then all


def test_a_stdio_profile_runs_beside_the_http_ones(shared_fleet: Fleet) -> None:
    config = Path(shared_fleet.env["MCPTASK_CONFIG_DIR"]) / "profiles.toml"
    command = reference_stdio_command("--seed", "working=2")
    with config.open("a", encoding="utf-8") as profiles:
        profiles.write(f"[profiles.local]\nserver = {json.dumps(command)}\n")
    result = shared_fleet.run("list", "-P", "alpha,local", "-o", "json")
    assert result.code == 0, result.stderr
    found = sections(result)
    assert found["local"]["report"]["count"] == 2
    assert found["local"]["target"].endswith("reference-server --stdio --seed working=2")


def test_a_server_killed_mid_cancel_is_reported_truthfully(
    tmp_path: Path, reference_server: StartServer
) -> None:
    """`victim` is killed (SIGKILL) once its log shows some cancels answered: the others
    cancel everything; the victim's section fails with its error, each of its tasks reported
    once, as cancelled if its cancel was answered, else unknown (sent, no answer) or
    skipped (never sent); the run exits 12."""
    urls = {
        name: reference_server("--seed", "working=40", "--latency", "20", "--log")
        for name in ("steady-1", "victim", "steady-2")
    }
    victim = reference_server.processes[urls["victim"]]
    assert isinstance(victim, ReferenceServerProcess)
    save_profiles(tmp_path / "config", urls)
    env = {"MCPTASK_CONFIG_DIR": str(tmp_path / "config"), "MCPTASK_STATE_DIR": str(tmp_path)}
    answered_before = victim.stderr_text().count('"POST /mcp')

    def kill_after_some_cancels(running: Running) -> None:
        # The handshake and the list take 4 answered POSTs; 10 more are cancels and gets.
        deadline = time.monotonic() + 60
        while victim.stderr_text().count('"POST /mcp') < answered_before + 14:
            assert running.process.poll() is None, "mcptask ended before the kill"
            assert time.monotonic() < deadline, "the victim never answered a cancel"
            time.sleep(0.01)
        os.kill(victim.pid, signal.SIGKILL)

    result = run_mcptask_during(
        kill_after_some_cancels,
        "cancel",
        "--all-working",
        "--yes",
        "-P",
        "steady-1,victim,steady-2",
        "-o",
        "json",
        env=env,
    )
    assert result.code == 12, result.stderr
    assert "Traceback" not in result.stderr
    document = result.json()
    found = sections(result)
    assert [found[name]["outcome"] for name in urls] == ["ok", "failed", "ok"]
    assert found["victim"]["exitCode"] == 3
    assert found["victim"]["error"]
    assert "mcptask: error: victim: " in result.stderr
    touched = [
        (section["server"], line["taskId"], line["outcome"])
        for section in document["servers"]
        for line in section["report"]["results"]
    ]
    assert len({(server, task) for server, task, _ in touched}) == len(touched) == 120
    by_server: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for server, _, outcome in touched:
        by_server[server][outcome] += 1
    assert by_server["steady-1"] == by_server["steady-2"] == {"cancelled": 40}
    lost = by_server["victim"]
    assert set(lost) <= {"cancelled", "unknown", "skipped"}, lost
    assert lost["cancelled"] >= 1
    assert lost["unknown"] + lost["skipped"] >= 1
    assert lost["unknown"] <= 1  # only the request in flight can have gone unanswered
    assert document["summary"]["cancelled"] == 80 + lost["cancelled"]
    after = run_mcptask(
        "list", "-P", "steady-1,steady-2", "--status", "working", "-o", "json", env=env
    )
    assert [section["report"]["count"] for section in after.json()["servers"]] == [0, 0]


def test_a_header_on_the_line_goes_to_every_server(shared_fleet: Fleet) -> None:
    result = shared_fleet.run(
        "list", "-P", "alpha,locked", "-H", "Authorization: Bearer s3cret", "-o", "json"
    )
    assert result.code == 0, result.stderr
    assert [section["outcome"] for section in result.json()["servers"]] == ["ok", "ok"]
    assert sections(result)["locked"]["report"]["count"] == 1

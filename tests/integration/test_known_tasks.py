"""The record of known tasks end to end: `--known` on list, cancel and watch in both eras over
HTTP and stdio, sessions rejoined by themselves, concurrent writers, forget, completion, and
a record that cannot be used."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from mcptask.store.identity import ServerIdentity
from tests.cli_process import mcptask_argv, run_mcptask, run_mcptask_during, unused_port
from tests.clocked_reference_server import clocked_http_server
from tests.conftest import StartServer
from tests.reference_server_process import stop_process

from .known_helpers import MakeTarget, Target, make_target_factory, recorded, task_id_of

ALL = ["legacy-http", "legacy-stdio", "modern-http", "modern-stdio"]


@pytest.fixture
def target(
    request: pytest.FixtureRequest, reference_server: StartServer, tmp_path: Path
) -> MakeTarget:
    return make_target_factory(request, reference_server, tmp_path)


@pytest.mark.parametrize("target", ["legacy-http", "modern-http"], indirect=True)
def test_start_list_known_cancel_all_working_known(target: MakeTarget) -> None:
    server = target()
    ids = {task_id_of(server.run("start", "long_job", "seconds:=60", "-o", "json")) for _ in "ab"}
    done = task_id_of(server.run("start", "long_job", "seconds:=0", "-o", "json"))
    listed = server.run("list", "--known", "-o", "json")
    assert listed.code == 0, listed.stderr
    statuses = {task["taskId"]: task["status"] for task in listed.json()["tasks"]}
    assert statuses == {**dict.fromkeys(ids, "working"), done: "completed"}
    assert listed.json()["gone"] == []
    working = server.run("list", "--known", "--status", "working", "-o", "ids")
    assert set(working.stdout.split()) == ids
    cancelled = server.run("cancel", "--all-working", "--known", "-o", "json")
    assert cancelled.code == 0, cancelled.stderr
    outcomes = {r["taskId"]: (r["outcome"], r["status"]) for r in cancelled.json()["results"]}
    assert outcomes == dict.fromkeys(ids, ("cancelled", "cancelled"))
    # the server confirms it
    for task_id in ids:
        assert server.run("get", task_id, "-o", "json").json()["status"] == "cancelled"
    assert {task.status for task in server.recorded().values()} == {"cancelled", "completed"}
    # nothing left to cancel or watch
    again = server.run("cancel", "--all-working", "--known", "-o", "json")
    assert again.code == 0
    assert again.json()["results"] == []
    watched = server.run("watch", "--known")
    assert watched.code == 0
    assert "no tasks to watch" in watched.stderr


@pytest.mark.parametrize("era", ["legacy", "modern"], ids=["legacy-http", "modern-http"])
def test_watch_known_follows_the_recorded_running_tasks(era: str, tmp_path: Path) -> None:
    # The server in process: its clock moves on once the watch has written the task working.
    with clocked_http_server("--protocol-eras", era) as clocked:
        server = Target(era, "http", list(clocked.target), tmp_path / "state")
        task_id = task_id_of(server.run("start", "long_job", "seconds:=4", "-o", "json"))
        watched = run_mcptask_during(
            lambda watch: clocked.play(4.0, watch=watch, reported=True),
            "watch", "--known", "-o", "jsonl", "--wait-timeout", "30", *server.options,
            env=server.env,
        )  # fmt: skip
    assert watched.code == 0, watched.stderr
    changes = [json.loads(line) for line in watched.stdout.splitlines()]
    assert changes[-1]["taskId"] == task_id
    assert changes[-1]["status"] == "completed"
    assert [(c["previous"], c["status"]) for c in changes] == [
        (None, "working"),
        ("working", "completed"),
    ]


@pytest.mark.parametrize("target", ALL, indirect=True)
def test_known_over_stdio_means_what_this_spawn_of_the_server_knows(target: MakeTarget) -> None:
    # Seeded tasks have the same ids in every spawn of the server: they are found again.
    server = target("--seed", "working=2")
    assert server.run("get", "working-001").code == 0
    started = task_id_of(server.run("start", "long_job", "seconds:=60", "-o", "json"))
    assert set(server.recorded()) == {"working-001", started}
    listed = server.run("list", "--known", "-o", "json")
    assert listed.code == 0, listed.stderr
    shown = [task["taskId"] for task in listed.json()["tasks"]]
    if server.transport == "stdio":
        # A task started in an earlier spawn died with it: reported gone, and forgotten.
        assert shown == ["working-001"]
        assert listed.json()["gone"] == [started]
        assert "no longer known" in listed.stderr
        assert set(server.recorded()) == {"working-001"}
    else:
        assert set(shown) == {"working-001", started}
    cancelled = server.run("cancel", "--all-working", "--known", "--dry-run", "-o", "json")
    assert "working-001" in [task["taskId"] for task in cancelled.json()["tasks"]]
    real = server.run("cancel", "--all-working", "--known", "-o", "json")
    assert real.code == 0, real.stderr
    assert "working-001" in [r["taskId"] for r in real.json()["results"]]


@pytest.mark.parametrize("target", ["modern-http", "modern-stdio"], indirect=True)
def test_no_list_refusal_counts_the_recorded_tasks(target: MakeTarget) -> None:
    server = target("--seed", "working=1")
    before = server.run("list")
    before.assert_one_line_error(5, "no tasks/list", "no task of this server is recorded here")
    assert server.run("get", "working-001").code == 0
    for command in (["list"], ["cancel", "--all-working"], ["watch"]):
        refused = server.run(*command)
        refused.assert_one_line_error(5, "1 task of this server recorded here: add --known")


def test_session_scoped_server_rejoins_the_recorded_session_by_itself(
    reference_server: StartServer, tmp_path: Path
) -> None:
    port = unused_port()
    server_args = ("--http", f"127.0.0.1:{port}", "--protocol-eras", "legacy", "--scope", "session")
    url = reference_server(*server_args)
    server = Target("legacy", "http", ["--url", url], tmp_path / "state")
    first = server.run("start", "long_job", "seconds:=60", "-o", "json")
    second = server.run("start", "long_job", "seconds:=60", "-o", "json")
    ids = [task_id_of(first), task_id_of(second)]
    sessions = {first.json()["sessionId"], second.json()["sessionId"]}
    assert len(sessions) == 2  # each start kept its own session
    # A new session sees none of them...
    listed = server.run("list", "-o", "json")
    assert listed.json()["count"] == 0
    assert "--known" in listed.stderr
    # ...but a recorded task is asked about in its own session, with no --session-id.
    got = server.run("get", ids[0], "-o", "json")
    assert got.code == 0, got.stderr
    assert got.json()["status"] == "working"
    known = server.run("list", "--known", "-o", "ids")
    assert sorted(known.stdout.split()) == sorted(ids)
    cancelled = server.run("cancel", "--all-working", "--known", "-o", "json")
    assert cancelled.code == 0, cancelled.stderr
    assert {r["outcome"] for r in cancelled.json()["results"]} == {"cancelled"}
    # When the sessions end (here: the server restarts), their tasks are reported gone.
    third = task_id_of(server.run("start", "long_job", "seconds:=60", "-o", "json"))
    stop_process(reference_server.processes.pop(url))
    assert reference_server(*server_args) == url
    gone = server.run("get", third)
    gone.assert_one_line_error(6, f"task {third} is gone: the session that owned it")
    after = server.run("list", "--known", "-o", "json")
    assert after.code == 0, after.stderr
    assert after.json()["tasks"] == []
    assert sorted(after.json()["gone"]) == sorted(ids)
    assert server.recorded() == {}


def test_four_concurrent_processes_record_all_twelve_tasks(
    reference_server: StartServer, tmp_path: Path
) -> None:
    url = reference_server()
    state = tmp_path / "fresh-state"  # not created yet: the processes race to create it

    def lane(_: int) -> list[str]:
        ids = []
        for _ in range(3):
            result = run_mcptask(
                "start", "long_job", "seconds:=60", "--url", url, "-o", "ids",
                env={"MCPTASK_STATE_DIR": str(state)},
            )  # fmt: skip
            assert result.code == 0, result.stderr
            assert "not being recorded" not in result.stderr
            ids.append(result.stdout.strip())
        return ids

    with ThreadPoolExecutor(max_workers=4) as pool:
        started = [task_id for ids in pool.map(lane, range(4)) for task_id in ids]
    assert len(set(started)) == 12
    assert set(recorded(state, ServerIdentity.for_url(url))) == set(started)
    listed = run_mcptask(
        "list", "--known", "--url", url, "-o", "json", env={"MCPTASK_STATE_DIR": str(state)}
    )
    assert listed.json()["count"] == 12


def test_forget(reference_server: StartServer, tmp_path: Path) -> None:
    url_a, url_b = reference_server(), reference_server()
    env = {"MCPTASK_STATE_DIR": str(tmp_path)}
    a = [
        task_id_of(
            run_mcptask("start", "long_job", "seconds:=60", "--url", url_a, "-o", "json", env=env)
        )
        for _ in "12"
    ]
    b = task_id_of(
        run_mcptask("start", "long_job", "seconds:=60", "--url", url_b, "-o", "json", env=env)
    )
    one = run_mcptask("forget", a[0], "nope", "--url", url_a, "-o", "json", env=env)
    assert one.code == 0, one.stderr
    assert one.json() == {"forgotten": [a[0]], "notRecorded": ["nope"], "server": url_a}
    assert "not recorded here: nope" in one.stderr
    assert set(recorded(tmp_path, ServerIdentity.for_url(url_a))) == {a[1]}
    # with a server: only its tasks; without one: every server's
    this = run_mcptask("forget", "--all", "--url", url_a, "-o", "ids", env=env)
    assert this.stdout.split() == [a[1]]
    assert set(recorded(tmp_path, ServerIdentity.for_url(url_b))) == {b}
    everything = run_mcptask("forget", "--all", "-o", "json", env=env)
    assert everything.json()["forgotten"] == [b]
    assert everything.json()["server"] is None
    run_mcptask("forget", env=env).assert_one_line_error(2, "give task ids to forget, or --all")


def test_forgetting_an_id_that_is_not_utf8_says_it_was_not_recorded(tmp_path: Path) -> None:
    # The shell passes bytes; Python decodes \xff to a lone surrogate, which SQLite cannot
    # bind: it was never recorded, so it is named as such, with no internal error.
    env = {"MCPTASK_STATE_DIR": str(tmp_path)}
    result = run_mcptask("forget", "\udcff", "-o", "json", env=env)
    assert result.code == 0, result.stderr
    assert result.json() == {"forgotten": [], "notRecorded": ["\udcff"], "server": None}
    assert "internal error" not in result.stderr


def test_a_record_that_cannot_be_used(reference_server: StartServer, tmp_path: Path) -> None:
    url = reference_server("--seed", "working=1")
    blocked = tmp_path / "a-file"
    blocked.write_text("not a directory")
    env = {"MCPTASK_STATE_DIR": str(blocked)}
    # recording is a side benefit: one warning, the command still works
    got = run_mcptask("get", "working-001", "--url", url, "-o", "json", env=env)
    assert got.code == 0
    assert got.json()["taskId"] == "working-001"
    assert [line for line in got.stderr_lines if "not being recorded" in line] == got.stderr_lines
    assert len(got.stderr_lines) == 1
    started = run_mcptask("start", "long_job", "seconds:=60", "--url", url, "-o", "ids", env=env)
    assert started.code == 0
    assert started.stdout.strip()
    # commands that need the record fail, naming it
    run_mcptask("list", "--known", "--url", url, env=env).assert_one_line_error(
        2, "cannot use the record of known tasks"
    )
    run_mcptask("forget", "--all", env=env).assert_one_line_error(2, "cannot use the record")


# -- shell completion ---------------------------------------------------------------------------


def complete(words: str, env: dict[str, str]) -> list[str]:
    environment = {k: v for k, v in os.environ.items() if not k.startswith("MCPTASK_")}
    environment |= env | {
        "_MCPTASK_COMPLETE": "complete_bash",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1)),
    }
    result = subprocess.run(
        mcptask_argv(), capture_output=True, text=True, env=environment, check=True, timeout=30
    )
    return result.stdout.split()


def test_completion_of_recorded_task_ids_without_the_network(
    shared_reference_server: StartServer, tmp_path: Path
) -> None:
    url = shared_reference_server("--seed", "working=3")
    env = {"MCPTASK_STATE_DIR": str(tmp_path)}
    for task_id in ("working-001", "working-002"):
        assert run_mcptask("get", task_id, "--url", url, env=env).code == 0
    elsewhere = f"http://127.0.0.1:{unused_port()}/mcp"  # nothing listens there
    both = ["working-001", "working-002"]
    assert sorted(complete(f"mcptask get --url {url} work", env)) == both
    assert sorted(complete(f"mcptask cancel --url {url} working-002 work", env)) == both
    assert complete(f"mcptask get --url {elsewhere} work", env) == []
    # without a server on the command line: MCPTASK_URL, else every server's ids
    assert sorted(complete("mcptask result work", env | {"MCPTASK_URL": url})) == both
    assert sorted(complete("mcptask forget working-00", env)) == both
    assert complete("mcptask get work", {"MCPTASK_STATE_DIR": str(tmp_path / "none")}) == []


def test_completion_imports_neither_httpx_nor_rich_nor_the_wire_models(tmp_path: Path) -> None:
    """What mcptask itself loads to complete an id: the command line, the store, sqlite3.

    (Typer 0.29 imports pydantic on its own while it parses the words being completed, for
    its parameter coercion; mcptask's code path adds neither pydantic models nor anything
    that talks to a server.)"""
    script = (
        "import atexit, os, sys\n"
        "def report():\n"
        "    loaded = {m.split('.')[0] for m in sys.modules} & {'httpx', 'rich', 'sqlite3'}\n"
        "    ours = [m for m in sys.modules if m.startswith('mcptask.')]\n"
        "    open(os.environ['OUT'], 'w').write(' '.join(sorted(loaded | set(ours))))\n"
        "atexit.register(report)\n"
        "from mcptask.entry import main\n"
        "sys.argv = ['mcptask']\n"
        "main()\n"
    )
    out = tmp_path / "modules.txt"
    state = tmp_path / "state"
    assert run_mcptask("forget", "--all", env={"MCPTASK_STATE_DIR": str(state)}).code == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPTASK_")} | {
        "MCPTASK_STATE_DIR": str(state),
        "MCPTASK_URL": "http://127.0.0.1:9/mcp",  # nothing there: a network call would fail
        "OUT": str(out),
        "_MCPTASK_COMPLETE": "complete_bash",
        "COMP_WORDS": "mcptask get ab",
        "COMP_CWORD": "2",
    }
    began = time.monotonic()
    subprocess.run([sys.executable, "-c", script], env=env, check=True, timeout=30)
    assert time.monotonic() - began < 10
    loaded = set(out.read_text().split())
    assert "httpx" not in loaded
    assert "rich" not in loaded
    assert "sqlite3" in loaded  # the record was read
    assert "mcptask.store.database" in loaded
    for heavy in (
        "mcptask.protocol",
        "mcptask.client",
        "mcptask.transport",
        "mcptask.output.screen",
    ):
        assert heavy not in loaded


def test_recorded_sessions_only_steer_the_commands_on_those_tasks(
    reference_server: StartServer, tmp_path: Path
) -> None:
    # A dual-era server: a task started in 2025-11-25 is recorded with its session...
    url = reference_server("--scope", "session")
    server = Target("legacy", "http", ["--url", url], tmp_path / "state")
    legacy = server.run(
        "start", "long_job", "seconds:=60", "--protocol", "2025-11-25", "-o", "json"
    )
    legacy_id = task_id_of(legacy)
    # ...which does not make connect or a new start speak 2025-11-25 (auto picks 2026-07-28)
    assert server.run("connect", "-o", "json").json()["era"] == "modern"
    modern = server.run("start", "long_job", "seconds:=60", "-o", "json")
    assert modern.json()["sessionId"] is None
    assert "ttlMs" in modern.json()["task"]
    # while a command on the recorded task rejoins its session (in 2025-11-25, by itself)
    got = server.run("get", legacy_id, "-o", "json")
    assert got.code == 0, got.stderr
    assert "ttl" in got.json()
    both = server.run("list", "--known", "-o", "ids")
    assert set(both.stdout.split()) == {legacy_id, task_id_of(modern)}


def test_forget_through_a_profile_forgets_only_that_profiles_tasks(
    reference_server: StartServer, tmp_path: Path
) -> None:
    url = reference_server()
    env = {"MCPTASK_STATE_DIR": str(tmp_path / "state"), "MCPTASK_CONFIG_DIR": str(tmp_path)}
    saved = run_mcptask("connect", url, "--save", "ref", env=env)
    assert saved.code == 0, saved.stderr
    mine = task_id_of(
        run_mcptask("-P", "ref", "start", "long_job", "seconds:=60", "-o", "json", env=env)
    )
    other = task_id_of(
        run_mcptask("start", "long_job", "seconds:=60", "--url", url, "-o", "json", env=env)
    )
    forgot = run_mcptask("-P", "ref", "forget", "--all", "-o", "json", env=env)
    assert forgot.code == 0, forgot.stderr
    assert forgot.json()["forgotten"] == [mine]  # not the tasks recorded without the profile
    assert set(recorded(tmp_path / "state", ServerIdentity.for_url(url))) == {other}

"""mcptask's task handles against the official tasks library, `@modelcontextprotocol/ext-tasks`
0.2.2 (pinned in tests/conformance/npm, run by the pinned Node 22): the library resumes a
task from a handle `mcptask handles` wrote, and `mcptask handles --import` takes in a handle
the library saved, then cancels its task. Both over real sockets to the reference server
(2025-11-25: the library's plain session form; its 2026-07-28 form needs an adapter of the
host's own)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.cli_process import run_mcptask
from tests.conformance import run
from tests.reference_server_process import running_reference_server

CONNECT = """
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client";
import {
  createTaskSessionEndpointId, createTaskSessionFromClient,
} from "@modelcontextprotocol/ext-tasks/client";
const [url, namespace] = process.argv.slice(2);
const client = new Client({ name: "ext-tasks-check", version: "1" });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const descriptor = namespace === "mcptask" ? { transport: "streamable-http", url } : { url };
const endpointId = await createTaskSessionEndpointId(namespace, descriptor);
const session = createTaskSessionFromClient(client, { endpointId });
"""
RESUME = (
    CONNECT
    + """
const [reference] = JSON.parse(await new Response(process.stdin).text());
const execution = await session.resumeTask(reference);
console.log(JSON.stringify(await execution.result()));
await session.close();
await client.close();
"""
)
SAVE = (
    CONNECT
    + """
const execution = await session.callTool(
  "long_job", { seconds: 60 }, { task: { preference: "require" } });
await execution.handoff((reference) => console.log(JSON.stringify(reference)));
await session.close();
await client.close();
"""
)


@pytest.fixture(scope="module")
def node() -> tuple[run.Tools, Path]:
    try:
        tools = run.ensure_tools()
    except run.HarnessError as error:
        pytest.fail(f"cannot install Node 22 and ext-tasks: {error}")
    # ES modules find packages from their own folder up: the scripts live beside node_modules.
    scripts = Path(tools.root)
    (scripts / "ext-tasks-resume.mjs").write_text(RESUME)
    (scripts / "ext-tasks-save.mjs").write_text(SAVE)
    return tools, scripts


def node_script(node: tuple[run.Tools, Path], name: str, *args: str, stdin: str = "") -> str:
    tools, scripts = node
    done = subprocess.run(
        [str(tools.node), str(scripts / name), *args],
        input=stdin,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_library_resumes_a_task_from_a_handle_mcptask_wrote(
    node: tuple[run.Tools, Path], tmp_path: Path
) -> None:
    env = {"MCPTASK_STATE_DIR": str(tmp_path)}
    with running_reference_server("--protocol-eras", "legacy") as url:
        started = run_mcptask(
            "start", "long_job", "seconds:=0.5", "--url", url, "-o", "ids", env=env
        )
        task_id = started.stdout.strip()
        written = run_mcptask("handles", "--url", url, env=env)
        assert written.code == 0, written.stderr
        (handle,) = written.json()
        assert handle["taskId"] == task_id
        assert handle["generation"] == "v1"
        outcome = json.loads(
            node_script(node, "ext-tasks-resume.mjs", url, "mcptask", stdin=written.stdout)
        )
    assert outcome["status"] == "completed"
    assert outcome["task"]["taskId"] == task_id
    assert outcome["result"]["content"][0]["text"].startswith("long_job completed")


def test_mcptask_takes_in_a_handle_the_library_saved(
    node: tuple[run.Tools, Path], tmp_path: Path
) -> None:
    env = {"MCPTASK_STATE_DIR": str(tmp_path)}
    with running_reference_server("--protocol-eras", "legacy") as url:
        saved = node_script(node, "ext-tasks-save.mjs", url, "some-agent")
        reference = json.loads(saved)
        assert reference["endpointId"].startswith("some-agent:v1:sha256:")
        taken = run_mcptask(
            "handles", "--url", url, "--import", "-", "-o", "json", stdin=saved, env=env
        )
        assert taken.code == 0, taken.stderr
        assert taken.json()["handles"] == [
            {
                "taskId": reference["taskId"],
                "outcome": "recorded",
                "status": "working",
                "message": None,
            }
        ]
        known = run_mcptask("list", "--known", "--url", url, "-o", "ids", env=env)
        cancelled = run_mcptask(
            "cancel", "--all-working", "--known", "--yes", "--url", url, "-o", "json", env=env
        )
    assert known.stdout.split() == [reference["taskId"]]
    assert cancelled.code == 0, cancelled.stderr
    (outcome,) = cancelled.json()["results"]
    assert (outcome["taskId"], outcome["outcome"]) == (reference["taskId"], "cancelled")

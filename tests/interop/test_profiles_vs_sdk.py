"""Profiles with a kept session against the official MCP Python SDK 1.x server, whose tasks
are visible only to the session that created them (see test_mcptask_vs_sdk.py)."""

from __future__ import annotations

import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.cli_process import run_mcptask

from .sdk_env import ensure_sdk_venv, initialize_session, post_rpc, start_sdk_server, stop

LONG_TASK = {
    "name": "long_job",
    "arguments": {"seconds": 600.0, "outcome": "completed"},
    "task": {"ttl": 3_600_000},
}


@pytest.fixture(scope="module")
def url() -> Iterator[str]:
    ensure_sdk_venv()
    address, proc = start_sdk_server("sse")
    try:
        yield address
    finally:
        stop(proc)


def create_task(client: httpx.Client, url: str, session_id: str) -> str:
    """A long task in `session_id`, made by hand the way the session's owner would."""
    # mcp 1.30.0 stops task creation in every session once any session was deleted, until
    # the next initialize (mcptask deletes its short handshake sessions): initialize first.
    initialize_session(client, url)
    message = {"jsonrpc": "2.0", "id": "harness-1", "method": "tools/call", "params": LONG_TASK}
    task_id: str = post_rpc(client, url, message, session_id).result["task"]["taskId"]
    return task_id


def saved_profile(config: Path) -> dict[str, Any]:
    document = tomllib.loads((config / "profiles.toml").read_text(encoding="utf-8"))
    profile: dict[str, Any] = document["profiles"]["sdk"]
    return profile


def test_a_kept_session_profile_round_trip(url: str, tmp_path: Path) -> None:
    env = {"MCPTASK_CONFIG_DIR": str(tmp_path)}
    connected = run_mcptask(
        "connect", url, "--save", "sdk", "--keep-session", "-o", "json", env=env
    )
    assert connected.code == 0, connected.stderr
    session = connected.json()["sessionId"]
    assert saved_profile(tmp_path)["session_id"] == session
    with httpx.Client(timeout=30) as client:
        tasks = [create_task(client, url, session) for _ in range(3)]
        listed = run_mcptask("--profile", "sdk", "list", "-o", "ids", env=env)
        assert listed.code == 0, listed.stderr
        assert sorted(listed.stdout.split()) == sorted(tasks)
        got = run_mcptask("get", tasks[0], "--profile", "sdk", "-o", "json", env=env)
        assert got.code == 0, got.stderr
        assert got.json()["status"] == "working"
        cancelled = run_mcptask("--profile", "sdk", "cancel", tasks[1], "-o", "json", env=env)
        assert cancelled.code == 0, cancelled.stderr
        assert cancelled.json()["results"][0]["outcome"] == "cancelled"

        # The session ends on the server: the next run opens and saves a new one, and says so.
        ended = client.delete(url, headers={"Mcp-Session-Id": session})
        assert ended.status_code in (200, 204)
        renewed = run_mcptask("--profile", "sdk", "list", "-o", "ids", env=env)
        assert renewed.code == 0, renewed.stderr
        assert renewed.stdout == ""
        new_session = saved_profile(tmp_path)["session_id"]
        assert new_session != session
        assert f"session {session} had ended on the server" in renewed.stderr
        fresh = create_task(client, url, new_session)
        again = run_mcptask("--profile", "sdk", "list", "-o", "ids", env=env)
        assert again.stdout.split() == [fresh]

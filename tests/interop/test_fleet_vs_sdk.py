"""Many servers in one run with the official MCP Python SDK 1.x server among them: a saved
profile that keeps its session on the SDK server (whose tasks only that session sees) beside
a reference server, listed and cancelled in one run, one section each."""

from __future__ import annotations

from pathlib import Path

import httpx

from tests.cli_process import run_mcptask
from tests.reference_server_process import start_reference_server, stop_process

from .test_profiles_vs_sdk import create_task, url

__all__ = ["url"]  # the SDK server fixture, shared with test_profiles_vs_sdk.py


def test_list_and_cancel_across_the_sdk_server_and_a_reference_server(
    url: str, tmp_path: Path
) -> None:
    env = {"MCPTASK_CONFIG_DIR": str(tmp_path)}
    ref_url, ref = start_reference_server("--protocol-eras", "legacy", "--seed", "working=2")
    try:
        saved = run_mcptask("connect", url, "--save", "sdk", "--keep-session", env=env)
        assert saved.code == 0, saved.stderr
        session = run_mcptask("profiles", "-o", "json", env=env).json()["profiles"][0]
        assert session["name"] == "sdk"
        assert session["sessionId"]
        assert run_mcptask("connect", ref_url, "--save", "ref", env=env).code == 0
        with httpx.Client(timeout=30) as client:
            sdk_tasks = [create_task(client, url, session["sessionId"]) for _ in range(2)]

        listed = run_mcptask("list", "-P", "sdk,ref", "--status", "working", "-o", "json", env=env)
        assert listed.code == 0, listed.stderr
        sections = {section["server"]: section for section in listed.json()["servers"]}
        assert {name: section["outcome"] for name, section in sections.items()} == {
            "sdk": "ok",
            "ref": "ok",
        }
        listed_sdk = {task["taskId"] for task in sections["sdk"]["report"]["tasks"]}
        assert listed_sdk == set(sdk_tasks)
        assert len(sections["ref"]["report"]["tasks"]) == 2

        cancelled = run_mcptask(
            "cancel", "--all-working", "--yes", "--all-profiles", "-o", "json", env=env
        )
        assert cancelled.code == 0, cancelled.stderr
        document = cancelled.json()
        assert document["summary"]["cancelled"] == 4
        by_server = {
            section["server"]: sorted(r["taskId"] for r in section["report"]["results"])
            for section in document["servers"]
        }
        assert by_server == {"ref": ["working-001", "working-002"], "sdk": sorted(sdk_tasks)}
    finally:
        stop_process(ref)

"""Profiles end to end: the real mcptask saving, using and renewing a profile against the
reference server over HTTP (a session-scoped server) and stdio (a server given --env)."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.cli_process import Result, mcptask_argv, run_mcptask
from tests.conftest import StartServer


@pytest.fixture
def config(tmp_path: Path) -> dict[str, str]:
    return {"MCPTASK_CONFIG_DIR": str(tmp_path / "config")}


def saved(config: dict[str, str]) -> dict[str, Any]:
    path = Path(config["MCPTASK_CONFIG_DIR"]) / "profiles.toml"
    document: dict[str, Any] = tomllib.loads(path.read_text(encoding="utf-8"))
    return document


def start_task_in_session(url: str, session_id: str) -> str:
    """A task made by a tools/call inside `session_id` (visible only there: --scope session)."""
    body = {
        "jsonrpc": "2.0",
        "id": "test-1",
        "method": "tools/call",
        "params": {"name": "long_job", "arguments": {"seconds": 60}, "task": {"ttl": 60000}},
    }
    headers = {
        "Accept": "application/json, text/event-stream",
        "Mcp-Session-Id": session_id,
        "MCP-Protocol-Version": "2025-11-25",
    }
    answer = httpx.post(url, json=body, headers=headers, timeout=10).json()
    task_id: str = answer["result"]["task"]["taskId"]
    return task_id


def ids(result: Result) -> list[str]:
    assert result.code == 0, result.stderr
    return result.stdout.split()


def test_a_kept_session_round_trip_and_its_renewal(
    reference_server: StartServer, config: dict[str, str]
) -> None:
    url = reference_server("--scope", "session", "--answer", "json")
    connected = run_mcptask(
        "connect", url, "--save", "ref", "--default", "--keep-session", "-o", "json", env=config
    )
    assert connected.code == 0, connected.stderr
    session = connected.json()["sessionId"]
    assert session
    assert "saved profile 'ref'" in connected.stderr
    profile = saved(config)["profiles"]["ref"]
    assert profile == {"url": url, "keep_session": True, "session_id": session}
    assert saved(config)["default"] == "ref"

    task = start_task_in_session(url, session)
    # The task lives in the kept session only: the profile rejoins it, before or after the
    # command name, and so does the default profile.
    assert ids(run_mcptask("--profile", "ref", "list", "-o", "ids", env=config)) == [task]
    assert ids(run_mcptask("list", "--profile", "ref", "-o", "ids", env=config)) == [task]
    assert ids(run_mcptask("list", "-o", "ids", env=config)) == [task]
    assert ids(run_mcptask("list", "--url", url, "-o", "ids", env=config)) == []
    # Never DELETEd: still there for a raw client.
    assert start_task_in_session(url, session)

    # The session ends on the server: the next command says so, opens a new one and saves it.
    ended = httpx.delete(url, headers={"Mcp-Session-Id": session}, timeout=10)
    assert ended.status_code == 200
    renewed = run_mcptask("--profile", "ref", "list", "-o", "ids", env=config)
    assert renewed.code == 0, renewed.stderr
    assert renewed.stdout == ""
    new_session = saved(config)["profiles"]["ref"]["session_id"]
    assert new_session != session
    assert f"session {session} had ended on the server" in renewed.stderr
    assert f"opened session {new_session} and saved it in profile 'ref'" in renewed.stderr
    again = start_task_in_session(url, new_session)
    assert ids(run_mcptask("--profile", "ref", "list", "-o", "ids", env=config)) == [again]


def test_a_stdio_profile_passes_its_environment(config: dict[str, str]) -> None:
    # The server command reads the variable; the command itself runs without a shell.
    server = " ".join(
        [
            "sh",
            "-c",
            "'exec",
            *mcptask_argv(),
            "reference-server",
            "--stdio",
            '--server-name "$SERVER_NAME"\'',
        ]
    )
    saved_run = run_mcptask(
        "connect",
        server,
        "--env",
        "SERVER_NAME=from-env",
        "--save",
        "local",
        "-o",
        "json",
        env=config,
    )
    assert saved_run.code == 0, saved_run.stderr
    assert saved_run.json()["server"]["name"] == "from-env"
    assert saved(config)["profiles"]["local"]["env"] == {"SERVER_NAME": "from-env"}
    reused = run_mcptask("connect", "--profile", "local", "-o", "json", env=config)
    assert reused.code == 0, reused.stderr
    assert reused.json()["server"]["name"] == "from-env"
    overridden = run_mcptask(
        "--profile", "local", "connect", "-e", "SERVER_NAME=from-line", "-o", "json", env=config
    )
    assert overridden.json()["server"]["name"] == "from-line"


def test_a_credential_is_not_saved_unless_asked(
    reference_server: StartServer, config: dict[str, str], tmp_path: Path
) -> None:
    url = reference_server("--require-token", "s3cret")
    refused = run_mcptask(
        "connect", url, "-H", "Authorization: Bearer s3cret", "--save", "p", env=config
    )
    refused.assert_one_line_error(2, "looks like a credential", "--save-secrets")
    assert not (Path(config["MCPTASK_CONFIG_DIR"]) / "profiles.toml").exists()

    token_file = tmp_path / "token"
    token_file.write_text("s3cret\n", encoding="utf-8")
    by_reference = run_mcptask(
        "connect", url, "--token-file", str(token_file), "--save", "p", "-o", "json", env=config
    )
    assert by_reference.code == 0, by_reference.stderr
    text = (Path(config["MCPTASK_CONFIG_DIR"]) / "profiles.toml").read_text(encoding="utf-8")
    assert "s3cret" not in text
    assert saved(config)["profiles"]["p"]["token"] == {"file": str(token_file)}
    used = run_mcptask("list", "--profile", "p", "-o", "json", env=config)
    assert used.code == 0, used.stderr

    asked = run_mcptask(
        "connect",
        url,
        "-H",
        "Authorization: Bearer s3cret",
        "--save",
        "q",
        "--save-secrets",
        "-o",
        "json",
        env=config,
    )
    assert asked.code == 0, asked.stderr
    assert saved(config)["profiles"]["q"]["headers"] == {"Authorization": "Bearer s3cret"}
    listing = run_mcptask("profiles", "-o", "json", env=config)
    assert "s3cret" not in listing.stdout
    assert json.loads(listing.stdout)["profiles"][1]["headers"] == {"Authorization": "saved"}


def test_profiles_say_where_each_target_came_from(
    reference_server: StartServer, config: dict[str, str], tmp_path: Path
) -> None:
    """A profile saved from the command line and one taken from an MCP client config file
    (`connect --config FILE -P NAME --save`) list side by side, each with its source."""
    url = reference_server()
    mcp_json = tmp_path / "project" / ".mcp.json"
    mcp_json.parent.mkdir()
    mcp_json.write_text(json.dumps({"mcpServers": {"jobs": {"url": url}}}), encoding="utf-8")
    typed = run_mcptask("connect", url, "--save", "typed", "-o", "json", env=config)
    assert typed.code == 0, typed.stderr
    taken = run_mcptask(
        "connect", "--config", str(mcp_json), "-P", "jobs", "--save", "taken", "-o", "json",
        env=config,
    )  # fmt: skip
    assert taken.code == 0, taken.stderr
    file = str(mcp_json.resolve())
    assert saved(config)["profiles"]["taken"]["source"] == {"file": file, "server": "jobs"}
    assert "source" not in saved(config)["profiles"]["typed"]

    listing = run_mcptask("profiles", "-o", "json", env=config)
    assert listing.code == 0, listing.stderr
    sources = {line["name"]: line["source"] for line in json.loads(listing.stdout)["profiles"]}
    assert sources == {"taken": {"file": file, "server": "jobs"}, "typed": None}
    table = run_mcptask("profiles", "-o", "table", env={**config, "COLUMNS": "200"})
    assert table.code == 0, table.stderr
    rows = {line.split()[0]: line for line in table.stdout.splitlines()}
    assert "SOURCE" in rows["NAME"]
    assert f"{file} (server jobs)" in rows["taken"]
    assert "command line" in rows["typed"]
    # The saved profile works on its own, the file aside.
    assert ids(run_mcptask("list", "-P", "taken", "-o", "ids", env=config)) == []

    # A config file's own listing: every server from that file.
    own = run_mcptask("profiles", "--config", str(mcp_json), "-o", "jsonl", env=config)
    assert own.code == 0, own.stderr
    (line,) = [json.loads(text) for text in own.stdout.splitlines()]
    assert line["source"] == {"file": file, "server": "jobs"}

"""A project's MCP client config file may be hostile: its placeholders must not send the
user's environment to the server it names, and a server it describes must not start, unless
the user says so (`--config-env`). The real mcptask against a recording server of the test's
own and a stdio command that would leave a mark."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.cli_process import reference_stdio_command, run_mcptask
from tests.security.hostile_mcp import HostileMcp

SECRET = "ghp_" + "s3cret" * 6


def write(path: Path, servers: dict[str, object]) -> Path:
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


def test_a_header_placeholder_sends_nothing_unless_allowed(tmp_path: Path) -> None:
    with HostileMcp() as server:
        entry = {"url": server.url, "headers": {"Authorization": "Bearer ${env:GITHUB_TOKEN}"}}
        config = write(tmp_path / ".mcp.json", {"evil": entry})
        env = {"GITHUB_TOKEN": SECRET}
        refused = run_mcptask("list", "--config", str(config), "-P", "evil", env=env)
        refused.assert_one_line_error(2, "GITHUB_TOKEN", "--config-env GITHUB_TOKEN", "'evil'")
        assert SECRET not in refused.stderr
        assert server.calls == []  # not even a handshake
        allowed = run_mcptask(
            "list", "--config", str(config), "-P", "evil", "--config-env", "GITHUB_TOKEN", env=env
        )
        assert allowed.code == 0, allowed.stderr
        assert server.authorizations[-1] == f"Bearer {SECRET}"


def test_a_stdio_server_whose_env_reads_a_secret_is_never_started(tmp_path: Path) -> None:
    mark = tmp_path / "started"
    command = [sys.executable, "-c", f"open({str(mark)!r}, 'w')"]
    entry = {"command": command[0], "args": command[1:], "env": {"KEY": "${AWS_SECRET_KEY}"}}
    config = write(tmp_path / "mcp.json", {"tool": entry})
    env = {"AWS_SECRET_KEY": SECRET, "MCPTASK_CONFIG": str(config)}
    refused = run_mcptask("list", env=env)
    refused.assert_one_line_error(2, "AWS_SECRET_KEY", "--config-env")
    assert not mark.exists()


def test_a_config_files_servers_are_used_by_name(tmp_path: Path) -> None:
    demo = reference_stdio_command("--seed", "working=2")
    command, *args = demo.split()
    servers = {
        "demo": {"command": command, "args": args},
        "other": {"url": "https://x.example/mcp"},
    }
    config = write(tmp_path / "claude_desktop_config.json", servers)
    listed = run_mcptask("list", "--config", str(config), "-P", "demo", "-o", "ids")
    assert listed.code == 0, listed.stderr
    assert listed.stdout.split() == ["working-002", "working-001"]
    unnamed = run_mcptask("list", "--config", str(config))
    unnamed.assert_one_line_error(2, "has 2 servers", "demo, other")
    unknown = run_mcptask("list", "--config", str(config), "-P", "nope")
    unknown.assert_one_line_error(2, "has no server 'nope'", "its servers: demo, other")
    assert "--save" not in unknown.stderr  # a saved profile's advice does not apply
    shown = run_mcptask("profiles", "--config", str(config), "-o", "json")
    assert shown.code == 0, shown.stderr
    assert shown.json()["path"] == str(config)
    assert [profile["name"] for profile in shown.json()["profiles"]] == ["demo", "other"]


def test_a_config_file_on_the_line_wins_over_the_environments_server(tmp_path: Path) -> None:
    command, *args = reference_stdio_command("--seed", "working=1").split()
    config = write(tmp_path / ".mcp.json", {"demo": {"command": command, "args": args}})
    env = {"MCPTASK_URL": "http://127.0.0.1:9/mcp"}
    listed = run_mcptask("list", "--config", str(config), "-o", "ids", env=env)
    assert listed.code == 0, listed.stderr
    assert listed.stdout.split() == ["working-001"]

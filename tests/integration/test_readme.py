"""The README's quick start works as written (the install step aside: the tests run installed)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from tests.cli_process import run_mcptask, unused_port
from tests.conftest import StartServer

README = Path(__file__).resolve().parents[2] / "README.md"


def quick_start_commands() -> list[list[str]]:
    """The mcptask commands of the Quick start section's code blocks, split like a shell."""
    section = README.read_text().split("## Quick start", 1)[1].split("\n## ", 1)[0]
    first_blocks = re.findall(r"```sh\n(.*?)```", section, flags=re.DOTALL)[:2]
    commands = []
    for block in first_blocks:
        for line in block.strip().splitlines():
            command = line.split("&&")[-1].strip()
            commands.append(shlex.split(command))
    return commands


def test_quick_start_runs_against_the_embedded_reference_server() -> None:
    listing, cancelling = quick_start_commands()
    assert listing[0] == "mcptask"
    listed = run_mcptask(*listing[1:], "-o", "json")
    assert listed.code == 0, listed.stderr
    assert listed.json()["count"] == 6
    cancelled = run_mcptask(*cancelling[1:], "-o", "json")
    assert cancelled.code == 0, cancelled.stderr
    assert cancelled.json()["summary"]["cancelled"] == 2


def test_quick_start_of_the_2026_07_28_era_with_known(
    reference_server: StartServer, tmp_path: Path
) -> None:
    section = README.read_text().split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```sh\n(.*?)```", section, flags=re.DOTALL)
    (block,) = [block for block in blocks if "--known" in block]
    serve, export, *commands = block.strip().splitlines()
    assert serve.endswith("&")
    argv = shlex.split(serve.rstrip("& "))
    assert argv[:2] == ["mcptask", "reference-server"]
    readme_address = argv[argv.index("--http") + 1]
    argv[argv.index("--http") + 1] = f"127.0.0.1:{unused_port()}"
    url = reference_server(*argv[2:])
    assert export == f"export MCPTASK_URL=http://{readme_address}/mcp"
    env = {"MCPTASK_URL": url, "MCPTASK_STATE_DIR": str(tmp_path)}
    results = []
    for command in commands:
        words = shlex.split(command)
        assert words[0] == "mcptask"
        result = run_mcptask(*words[1:], "-o", "json", env=env)
        assert result.code == 0, f"{command}: {result.stderr}"
        results.append((words[1], result.json()))
    started = [document["task"]["taskId"] for name, document in results if name == "start"]
    assert len(started) == 2
    ((_, listed),) = [(n, d) for n, d in results if n == "list"]
    assert {task["taskId"] for task in listed["tasks"]} == set(started)
    ((_, cancelled),) = [(n, d) for n, d in results if n == "cancel"]
    assert cancelled["summary"]["cancelled"] == 2

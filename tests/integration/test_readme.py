"""The README's quick start works as written (the install step aside: the tests run installed)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from tests.cli_process import run_mcptask

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

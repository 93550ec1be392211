"""The shell completion scripts in completions/ match what the installed CLI generates."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.cli_process import mcptask_argv

COMPLETIONS = Path(__file__).resolve().parents[2] / "completions"


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_script_is_current(shell: str) -> None:
    generated = subprocess.run(
        mcptask_argv(),
        capture_output=True,
        text=True,
        check=True,
        env=os.environ | {"_MCPTASK_COMPLETE": f"source_{shell}"},
    ).stdout
    assert "_MCPTASK_COMPLETE" in generated
    assert (COMPLETIONS / f"mcptask.{shell}").read_text() == generated, (
        f"regenerate: _MCPTASK_COMPLETE=source_{shell} mcptask > completions/mcptask.{shell}"
    )


def test_completion_suggests_commands_and_options() -> None:
    def complete(words: str) -> list[str]:
        env = os.environ | {
            "_MCPTASK_COMPLETE": "complete_bash",
            "COMP_WORDS": words,
            "COMP_CWORD": str(len(words.split()) - 1),
        }
        result = subprocess.run(mcptask_argv(), capture_output=True, text=True, env=env, check=True)
        return result.stdout.split()

    assert complete("mcptask can") == ["cancel"]
    assert "--all-working" in complete("mcptask cancel --all")

"""stdout that cannot be written (a full disk: /dev/full) is one line on stderr and exit 1,
on the fast paths (--version, --help) and in a command, never a traceback."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.cli_process import mcptask_argv
from tests.conftest import StartServer

FULL = Path("/dev/full")
pytestmark = pytest.mark.skipif(not FULL.exists(), reason="needs /dev/full (Linux)")


def run_into_full_disk(*args: str) -> subprocess.CompletedProcess[str]:
    with FULL.open("w") as stdout:
        return subprocess.run(
            [*mcptask_argv(), *args], stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=60
        )


@pytest.mark.parametrize("args", [("--version",), ("list", "--help"), ("list", "-o", "json")])
def test_a_full_disk_is_one_line_and_exit_1(
    reference_server: StartServer, args: tuple[str, ...]
) -> None:
    extra = ("--url", reference_server("--seed", "working=2")) if "-o" in args else ()
    done = run_into_full_disk(*args, *extra)
    assert done.returncode == 1
    assert done.stderr == "mcptask: error: cannot write the output: No space left on device\n"

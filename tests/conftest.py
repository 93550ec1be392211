"""Shared fixtures: reference server processes, started on 127.0.0.1 and stopped by PID."""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator

import pytest

from tests.reference_server_process import start_reference_server

StartServer = Callable[..., str]


def stop_process(process: subprocess.Popen[bytes] | subprocess.Popen[str]) -> None:
    """Terminate a server by PID, then kill it if it does not go."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


@pytest.fixture
def reference_server() -> Iterator[StartServer]:
    """Start reference servers with the given options; returns each one's URL."""
    processes: list[subprocess.Popen[bytes] | subprocess.Popen[str]] = []

    def start(*args: str) -> str:
        url, process = start_reference_server(*args)
        processes.append(process)
        return url

    yield start
    for process in processes:
        stop_process(process)

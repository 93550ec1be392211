"""Shared fixtures: reference server processes, started on 127.0.0.1 and stopped by PID."""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings

from tests.reference_server_process import start_reference_server, stop_process

# Property-based tests: a quick profile for every run (CI), a deep one to run by hand
# (HYPOTHESIS_PROFILE=deep: 10,000 examples per property).
settings.register_profile(
    "ci", max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "deep", max_examples=10_000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture(autouse=True, scope="session")
def private_state_dir() -> Iterator[None]:
    """Keep every mcptask the tests run (in process or not) away from the user's own record
    of known tasks: XDG_STATE_HOME points to a temporary directory (run_mcptask strips
    MCPTASK_* but keeps it); tests that look at the record set MCPTASK_STATE_DIR themselves."""
    saved = {name: os.environ.get(name) for name in ("XDG_STATE_HOME", "MCPTASK_STATE_DIR")}
    with tempfile.TemporaryDirectory(prefix="mcptask-test-state-") as state:
        os.environ["XDG_STATE_HOME"] = state
        os.environ.pop("MCPTASK_STATE_DIR", None)
        try:
            yield
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


class StartServer:
    """Starts reference servers (`start(*options) -> url`) and stops them all at the end."""

    def __init__(self) -> None:
        self.processes: dict[str, subprocess.Popen[bytes]] = {}

    def __call__(self, *args: str) -> str:
        url, process = start_reference_server(*args)
        self.processes[url] = process
        return url

    def stop_all(self) -> None:
        for process in self.processes.values():
            stop_process(process)


@pytest.fixture
def reference_server() -> Iterator[StartServer]:
    """Start reference servers with the given options; each call returns the server's URL."""
    starter = StartServer()
    yield starter
    starter.stop_all()

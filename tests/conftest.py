"""Shared fixtures (reference server processes, started on 127.0.0.1 and stopped by PID) and
the test tiers: plain `pytest` runs every tier that needs no network; the tiers that install
third-party servers or the conformance runner (NETWORK_TIERS) are collected only when the
marker expression selects them (`pytest -m network`) or when their path is named."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from tests.reference_server_process import start_reference_server, stop_process

# Property-based tests: a quick profile for plain `pytest` (dev), the full count in CI
# (.ci/run sets HYPOTHESIS_PROFILE=ci), a deep one to run by hand (10,000 examples per property).
CI_EXAMPLES = 150
for name, count in (("dev", 50), ("ci", CI_EXAMPLES), ("deep", 10_000)):
    settings.register_profile(
        name, max_examples=count, deadline=None, suppress_health_check=[HealthCheck.too_slow]
    )
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "dev"))


def examples(in_ci: int) -> int:
    """The example count of a property that needs `in_ci` in CI, scaled like the profile."""
    return max(1, in_ci * settings().max_examples // CI_EXAMPLES)


TESTS = Path(__file__).resolve().parent
# The tiers that pip- or npm-install what they test against; every test in them is marked
# `network` (and with the tier's own marker, to select one tier: -m "network and interop").
NETWORK_TIERS = frozenset({"interop", "thirdparty", "conformance"})
NETWORK_MARKERS = NETWORK_TIERS | {"network"}


def _selects_network(config: pytest.Config) -> bool:
    """True when the -m expression names a network marker other than after `not`."""
    words = str(config.getoption("markexpr") or "").replace("(", " ").replace(")", " ").split()
    return any(
        word in NETWORK_MARKERS and (index == 0 or words[index - 1] != "not")
        for index, word in enumerate(words)
    )


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Leave the network tiers out unless selected (pytest never asks about a named path)."""
    if collection_path.parent == TESTS and collection_path.name in NETWORK_TIERS:
        return True if not _selects_network(config) else None
    return None


XDIST = importlib.util.find_spec("xdist") is not None


def pytest_addoption(parser: pytest.Parser) -> None:
    if not XDIST:  # an environment installed before pytest-xdist joined the test extras
        parser.addoption("--numprocesses", help="ignored: pytest-xdist is not installed")


def pytest_report_header() -> str | None:
    return None if XDIST else "pytest-xdist is not installed: one process (pip install '.[test]')"


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    """`-n auto` (pyproject's addopts): no workers for the network tiers, which install
    their servers into shared directories on first use; otherwise one per core."""
    return 0 if _selects_network(config) else None


@pytest.hookimpl(tryfirst=True)  # before -m deselects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        relative = item.path.relative_to(TESTS) if item.path.is_relative_to(TESTS) else None
        if relative is not None and relative.parts[0] in NETWORK_TIERS:
            item.add_marker(pytest.mark.network)
            item.add_marker(relative.parts[0])


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


class SharedServers(StartServer):
    """One reference server per command line, started on first use: for tests that only read
    from it (its tasks, sessions and switches are as the command line made them)."""

    def __init__(self) -> None:
        super().__init__()
        self.urls: dict[tuple[str, ...], str] = {}

    def __call__(self, *args: str) -> str:
        if args not in self.urls:
            self.urls[args] = super().__call__(*args)
        return self.urls[args]


@pytest.fixture
def reference_server() -> Iterator[StartServer]:
    """Start reference servers with the given options; each call returns the server's URL."""
    starter = StartServer()
    yield starter
    starter.stop_all()


@pytest.fixture(scope="session")
def shared_reference_server() -> Iterator[StartServer]:
    """Like reference_server, but a call with the same options returns the same running
    server, for the whole session: only for tests that change nothing on the server."""
    starter = SharedServers()
    yield starter
    starter.stop_all()

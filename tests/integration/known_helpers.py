"""Helpers for the tests of `start`, `result` and the record of known tasks: targets in both
eras over both transports, and reading the record the way mcptask writes it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from mcptask.store.database import FILE_NAME
from mcptask.store.identity import ServerIdentity
from mcptask.store.known_tasks import KnownTasks
from tests.cli_process import Result, reference_stdio_command, run_mcptask
from tests.conftest import StartServer
from tests.unit.store.support import KnownTask, recorded_tasks

ERAS = {"legacy": "2025-11-25", "modern": "2026-07-28"}


@dataclass(frozen=True)
class Target:
    """A reference server in one era over one transport, and a private state directory."""

    era: str
    transport: str
    options: list[str]
    """`--url URL` or `--server COMMAND`."""
    state: Path

    @property
    def env(self) -> dict[str, str]:
        return {"MCPTASK_STATE_DIR": str(self.state)}

    def run(self, *args: str, stdin: str | None = None) -> Result:
        """`mcptask ARGS` against this server, with this state directory."""
        return run_mcptask(*args, *self.options, env=self.env, stdin=stdin)

    @property
    def identity(self) -> ServerIdentity:
        kind, value = self.options
        return (
            ServerIdentity.for_url(value) if kind == "--url" else ServerIdentity.for_command(value)
        )

    def recorded(self) -> dict[str, KnownTask]:
        """The record of this server, as the next mcptask would read it."""
        return recorded(self.state, self.identity)


def recorded(state: Path, identity: ServerIdentity) -> dict[str, KnownTask]:
    if not (state / FILE_NAME).exists():
        return {}
    record = KnownTasks(state / FILE_NAME, identity)
    try:
        return {task.task_id: task for task in recorded_tasks(record)}
    finally:
        record.close()


MakeTarget = Callable[..., Target]


def make_target_factory(
    request: pytest.FixtureRequest, reference_server: StartServer, tmp_path: Path
) -> MakeTarget:
    """`make(*server_args)`: a Target for the param `era-transport` of the test."""
    era, transport = str(request.param).split("-")

    def make(*args: str) -> Target:
        server_args = ["--protocol-eras", era, *args]
        if transport == "http":
            options = ["--url", reference_server(*server_args)]
        else:
            options = ["--server", reference_stdio_command(*server_args)]
        return Target(era, transport, options, tmp_path / "state")

    return make


def task_id_of(result: Result) -> str:
    """The task id `start -o json` printed."""
    assert result.code == 0, result.stderr
    task = result.json()["task"]
    assert task is not None, result.stdout
    return str(task["taskId"])

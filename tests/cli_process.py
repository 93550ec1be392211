"""Run the real `mcptask` executable as a subprocess, the way users and CI scripts do."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pexpect


def mcptask_argv() -> list[str]:
    """The installed `mcptask` console script beside this Python, else `python -m mcptask`."""
    script = Path(sys.executable).parent / "mcptask"
    if script.exists():
        return [str(script)]
    found = shutil.which("mcptask")
    return [found] if found else [sys.executable, "-m", "mcptask"]


def spawn_mcptask(
    *args: str,
    env: dict[str, str] | None = None,
    term: str = "xterm",
    color: bool = False,
    dimensions: tuple[int, int] = (24, 80),
    echo: bool = True,
) -> pexpect.spawn:
    """`mcptask ARGS` on a terminal of its own (pexpect), as a person runs it: a bare
    environment (a plain PATH, the test session's XDG_STATE_HOME, and NO_COLOR unless
    `color`), `env` over it, and the terminal type `term`."""
    terminal = {"PATH": "/usr/bin:/bin", "XDG_STATE_HOME": os.environ["XDG_STATE_HOME"]}
    if not color:
        terminal["NO_COLOR"] = "1"
    argv = mcptask_argv()
    return pexpect.spawn(
        argv[0],
        [*argv[1:], *args],
        env={**terminal, **(env or {}), "TERM": term},
        encoding="utf-8",
        timeout=30,
        dimensions=dimensions,
        echo=echo,
    )


def reference_stdio_command(*args: str) -> str:
    """A `--server` value that runs the reference server over stdio with `args`."""
    return " ".join([*mcptask_argv(), "reference-server", "--stdio", *args])


@dataclass(frozen=True)
class Result:
    """What one run of mcptask produced."""

    code: int
    stdout: str
    stderr: str

    def json(self) -> Any:
        return json.loads(self.stdout)

    @property
    def stderr_lines(self) -> list[str]:
        return [line for line in self.stderr.splitlines() if line.strip()]

    def assert_one_line_error(self, code: int, *fragments: str) -> None:
        """The error contract: the exit code, nothing on stdout, one line on stderr."""
        assert self.code == code, f"exit {self.code}, expected {code}; stderr: {self.stderr}"
        assert self.stdout == "", f"stdout should be empty, got: {self.stdout!r}"
        assert len(self.stderr_lines) == 1, f"expected one stderr line, got: {self.stderr!r}"
        assert "Traceback" not in self.stderr
        for fragment in fragments:
            assert fragment in self.stderr, f"{fragment!r} not in {self.stderr!r}"


def run_mcptask(
    *args: str,
    stdin: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 120.0,
) -> Result:
    """Run `mcptask ARGS`, with a clean environment apart from `env`, and capture everything."""
    completed = subprocess.run(
        [*mcptask_argv(), *args],
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        env=_environment(env),
        timeout=timeout,
        check=False,
    )
    return Result(completed.returncode, completed.stdout, completed.stderr)


def run_mcptask_until(
    ready: tuple[str, ...], then: Callable[[], object], *args: str, timeout: float = 60.0
) -> Result:
    """Run `mcptask ARGS` as run_mcptask does, but with stdout and stderr in one pipe (the
    Result's stdout holds both, in order); once that has shown every fragment of `ready`,
    call `then` (a change the running command is to see), and wait for the exit."""
    process = subprocess.Popen(
        [*mcptask_argv(), *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=_environment(None),
    )
    try:
        assert process.stdout is not None
        written = []
        awaited = set(ready)
        for line in process.stdout:
            written.append(line)
            awaited = {fragment for fragment in awaited if fragment not in line}
            if not awaited:
                break
        assert not awaited, f"mcptask ended without writing {awaited}: {''.join(written)}"
        then()
        rest, _ = process.communicate(timeout=timeout)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return Result(process.returncode, "".join(written) + rest, "")


@dataclass(frozen=True)
class Running:
    """An mcptask process that run_mcptask_during started, and what it has written so far."""

    process: subprocess.Popen[bytes]
    _stdout: IO[bytes]

    def stdout(self) -> str:
        """Everything on stdout so far (the last line may be incomplete)."""
        fd = self._stdout.fileno()
        return os.pread(fd, os.fstat(fd).st_size, 0).decode("utf-8", "replace")


def run_mcptask_during(
    during: Callable[[Running], object],
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = 120.0,
) -> Result:
    """Run `mcptask ARGS` as run_mcptask does, and `during(running)` meanwhile (what the
    command is to see happen, such as a server's clock moving on); then wait for the exit.
    Its output goes to files, so that nothing need read it meanwhile."""
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        process = subprocess.Popen(
            [*mcptask_argv(), *args],
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            env=_environment(env),
        )
        try:
            during(Running(process, stdout))
            process.wait(timeout)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            stdout.seek(0)
            stderr.seek(0)
            result = Result(process.returncode, stdout.read().decode(), stderr.read().decode())
            # Shown when the test fails (pytest captures it), whatever `during` raised.
            print(f"mcptask {' '.join(args)}: exit {result.code}", result.stdout, result.stderr)
    return result


def _environment(env: dict[str, str] | None) -> dict[str, str]:
    """Ours without MCPTASK_*, no colours, 200 columns, mcptask on PATH, and `env`."""
    environment = {
        key: value for key, value in os.environ.items() if not key.startswith("MCPTASK_")
    }
    environment.update({"NO_COLOR": "1", "COLUMNS": "200"})
    # As after `pip install`: the `mcptask` executable is on PATH (server commands use it).
    bin_dir = str(Path(sys.executable).parent)
    environment["PATH"] = os.pathsep.join([bin_dir, environment.get("PATH", "")])
    environment.update(env or {})
    return environment


def unused_port() -> int:
    """A local port nothing listens on (bound briefly, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port

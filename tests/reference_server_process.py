"""Start and stop the reference server as a real process, for integration tests.

    from tests.reference_server_process import start_reference_server, stop_process

    url, proc = start_reference_server("--seed", "working=3")
    try:
        ...  # talk to url
    finally:
        stop_process(proc)

The child runs with the repository root on PYTHONPATH, so it works whether or not mcptask is
installed. Its stderr (and, for HTTP servers, its stdout after the URL line) is read by daemon
threads that close the pipes at EOF: a pipe nobody reads could fill up and block the server,
and no file descriptor leaks whichever way the process is stopped. `proc.stderr_text()`
returns what the server logged so far.
"""

from __future__ import annotations

import contextlib
import os
import queue
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import IO, Any

REPO_ROOT = Path(__file__).resolve().parents[1]
URL_LINE_PREFIX = "mcptask reference server listening on "
DEFAULT_START_TIMEOUT = 20.0


class ReferenceServerError(RuntimeError):
    """The server process did not start (it died, or printed no URL line in time)."""


class ReferenceServerProcess(subprocess.Popen[bytes]):
    """A Popen whose stderr is collected in memory by a background thread."""

    stderr_chunks: list[bytes]
    stderr_reader: threading.Thread

    def stderr_text(self, wait: float = 0.0) -> str:
        """Everything the server wrote to stderr so far; `wait` lets the reader catch up
        (up to that many seconds) after the process has exited."""
        if wait and self.poll() is not None:
            self.stderr_reader.join(wait)
        return b"".join(list(self.stderr_chunks)).decode("utf-8", "replace")


# The test suite's own switch (not the reference server's): run the server with the
# conformance runner's fixture tools (tests/conformance/fixture_server.py).
FIXTURES_ARG = "--conformance-fixtures"


def reference_server_argv(*args: str) -> list[str]:
    """The command line that runs the reference server with `args` (with FIXTURES_ARG among
    them: the one that also offers the conformance fixture tools)."""
    if FIXTURES_ARG in args:
        rest = [arg for arg in args if arg != FIXTURES_ARG]
        return [sys.executable, "-m", "tests.conformance.fixture_server", *rest]
    return [sys.executable, "-m", "mcptask.reference_server", *args]


def reference_server_env() -> dict[str, str]:
    """The environment for the child: ours, with the repository root on PYTHONPATH."""
    env = dict(os.environ)
    existing = env.get("PYTHONPATH")
    env["PYTHONPATH"] = str(REPO_ROOT) + (os.pathsep + existing if existing else "")
    return env


def _collect(stream: IO[bytes], chunks: list[bytes]) -> None:
    with stream:
        for line in iter(stream.readline, b""):
            chunks.append(line)


def _spawn(args: list[str], stdin: int) -> ReferenceServerProcess:
    proc = ReferenceServerProcess(
        reference_server_argv(*args),
        stdin=stdin,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=reference_server_env(),
        cwd=REPO_ROOT,
    )
    assert proc.stderr is not None
    proc.stderr_chunks = []
    proc.stderr_reader = threading.Thread(
        target=_collect, args=(proc.stderr, proc.stderr_chunks), daemon=True
    )
    proc.stderr_reader.start()
    return proc


def _pump_stdout(stream: IO[bytes], first_line: queue.Queue[bytes]) -> None:
    """Hand over the first line, then read (and drop) the rest until EOF."""
    with stream:
        first_line.put(stream.readline())
        for _ in iter(stream.readline, b""):
            pass


def start_reference_server(
    *args: str, timeout: float = DEFAULT_START_TIMEOUT
) -> tuple[str, ReferenceServerProcess]:
    """Start an HTTP reference server and return (endpoint URL, process).

    Without `--http` in `args`, it listens on 127.0.0.1 with a free port. Raises
    ReferenceServerError, with the server's stderr, when the process exits or prints no URL
    line within `timeout` seconds; the process is stopped in that case.
    """
    argv = list(args)
    if "--http" not in argv:
        argv = ["--http", "127.0.0.1:0", *argv]
    proc = _spawn(argv, stdin=subprocess.DEVNULL)
    assert proc.stdout is not None
    first_line: queue.Queue[bytes] = queue.Queue()
    threading.Thread(target=_pump_stdout, args=(proc.stdout, first_line), daemon=True).start()
    try:
        line: bytes | None = first_line.get(timeout=timeout)
    except queue.Empty:
        line = None
    text = (line or b"").decode("utf-8", "replace").strip()
    if not text.startswith(URL_LINE_PREFIX):
        stop_process(proc)
        reason = "printed no URL line in time" if line is None else "exited before listening"
        raise ReferenceServerError(
            f"reference server {reason} (exit status {proc.returncode}); "
            f"stdout: {text!r}; stderr:\n{proc.stderr_text(wait=2)}"
        )
    return text.removeprefix(URL_LINE_PREFIX), proc


def start_stdio_reference_server(*args: str) -> ReferenceServerProcess:
    """Start a `--stdio` reference server; talk to it through proc.stdin / proc.stdout."""
    return _spawn(["--stdio", *args], stdin=subprocess.PIPE)


def stop_process(proc: subprocess.Popen[Any], timeout: float = 5.0) -> None:
    """Stop a process we started, by PID: end its input (a stdio server stops at EOF),
    terminate, wait, then kill if needed."""
    if proc.stdin is not None and not proc.stdin.closed:
        with contextlib.suppress(OSError):  # unflushed input to a dead process
            proc.stdin.close()
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout)


@contextmanager
def running_reference_server(*args: str) -> Iterator[str]:
    """`with running_reference_server("--seed", "working=2") as url:` ... stopped on exit."""
    url, proc = start_reference_server(*args)
    try:
        yield url
    finally:
        stop_process(proc)

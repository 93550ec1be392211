"""Run the third-party SEP-2663 server (FastMCP 4 + fastmcp-tasks 4.1.4) for end-to-end tests.

The server (tests/thirdparty/ext_tasks_server.py) lives in its own virtual environment,
``<repo>/.venv-thirdparty``, never in the project's venv. This module creates that venv on first
use, starts the server on 127.0.0.1 with a free port, waits until it really answers, stops it
by PID, and talks to it with raw stateless MCP 2026-07-28 requests (httpx, no SDK) to create
and inspect tasks independently of mcptask.

Standard library and httpx only; no relative imports, so it can be imported as
``tests.thirdparty.env`` or run directly::

    .venv/bin/python tests/thirdparty/env.py    # build the venv (once) and print the time

See README.md beside this file for what the server answers.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import itertools
import json
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Collection, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

import httpx

__all__ = [
    "EXTENSION",
    "PROTOCOL_VERSION",
    "REPO_ROOT",
    "SERVER_SCRIPT",
    "TERMINAL",
    "VENV_DIR",
    "RpcError",
    "cancel_task",
    "client_meta",
    "ensure_thirdparty_venv",
    "get_task",
    "rpc",
    "server_stderr",
    "start_ext_tasks_server",
    "start_task",
    "stop",
    "wait_for_status",
]

JSON = dict[str, Any]

PROTOCOL_VERSION = "2026-07-28"
EXTENSION = "io.modelcontextprotocol/tasks"
TOOL_NAME = "long_job"
TERMINAL = frozenset({"completed", "failed", "cancelled"})

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
REQUIREMENTS = HERE / "requirements.txt"
SERVER_SCRIPT = HERE / "ext_tasks_server.py"
VENV_DIR = REPO_ROOT / ".venv-thirdparty"
MARKER_NAME = ".mcptask-thirdparty-requirements"
LOCK_NAME = ".mcptask-thirdparty.lock"
PINNED_PACKAGE = "fastmcp_tasks"  # its dist-info must be there for the venv to count as ready

INSTALL_TIMEOUT = 900.0
START_TIMEOUT = 30.0  # for the "listening on ..." line
READY_TIMEOUT = 60.0  # for the first answered server/discover (imports take ~5 s)
HTTP_TIMEOUT = 30.0

_ids = itertools.count(1)
_venv_python: Path | None = None
_venv_guard = threading.Lock()
_stderr_files: dict[int, IO[bytes]] = {}


# --------------------------------------------------------------------------------------------
# The server's virtual environment
# --------------------------------------------------------------------------------------------


def _requirements_digest() -> str:
    digest = hashlib.sha256(REQUIREMENTS.read_bytes())
    digest.update(f"\0python{sys.version_info.major}.{sys.version_info.minor}".encode())
    return digest.hexdigest()


def _venv_bin(venv: Path) -> Path:
    return venv / "bin" / "python"


def _venv_is_ready(venv: Path, digest: str) -> bool:
    marker = venv / MARKER_NAME
    if not _venv_bin(venv).exists() or not marker.exists():
        return False
    if marker.read_text().strip() != digest:
        return False
    return any(venv.glob(f"lib/python*/site-packages/{PINNED_PACKAGE}-*.dist-info"))


def _run_checked(argv: Sequence[str], what: str) -> None:
    done = subprocess.run(
        list(argv), capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"{what} failed (exit {done.returncode}): {' '.join(argv)}\n"
            f"--- stdout ---\n{done.stdout}\n--- stderr ---\n{done.stderr}"
        )


def _build_venv(venv: Path, digest: str) -> None:
    # Start clean, but keep the lock file: the lock is held on its inode.
    for child in venv.iterdir():
        if child.name == LOCK_NAME:
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()
    _run_checked([sys.executable, "-m", "venv", str(venv)], "creating the third-party venv")
    _run_checked(
        [
            str(_venv_bin(venv)),
            "-m",
            "pip",
            "install",
            "--disable-pip-version-check",
            "--no-input",
            "--quiet",
            "-r",
            str(REQUIREMENTS),
        ],
        "installing tests/thirdparty/requirements.txt",
    )
    (venv / MARKER_NAME).write_text(digest + "\n")


def ensure_thirdparty_venv() -> Path:
    """Create ``<repo>/.venv-thirdparty`` with fastmcp-tasks once; return the venv directory.

    The venv is reused while its marker file holds the hash of requirements.txt plus the Python
    minor version (and fastmcp-tasks is installed); otherwise it is rebuilt from scratch with
    ``python -m venv`` and ``pip install -r tests/thirdparty/requirements.txt``. An fcntl lock
    on a file inside the venv directory keeps parallel callers (pytest-xdist workers, separate
    pytest runs) from installing at the same time: the second one waits, then finds it ready.
    """
    global _venv_python
    with _venv_guard:
        if _venv_python is not None:
            return VENV_DIR
        digest = _requirements_digest()
        VENV_DIR.mkdir(parents=True, exist_ok=True)
        with open(VENV_DIR / LOCK_NAME, "a+b") as lock:
            fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
            try:
                if not _venv_is_ready(VENV_DIR, digest):
                    _build_venv(VENV_DIR, digest)
            finally:
                fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
        _venv_python = _venv_bin(VENV_DIR)
        return VENV_DIR


# --------------------------------------------------------------------------------------------
# Raw stateless 2026-07-28 requests
# --------------------------------------------------------------------------------------------


class RpcError(Exception):
    """A JSON-RPC error answer."""

    def __init__(self, error: JSON, http_status: int) -> None:
        self.code: int = int(error.get("code", 0))
        self.message: str = str(error.get("message", ""))
        self.data: Any = error.get("data")
        self.http_status = http_status
        super().__init__(f"{self.code}: {self.message} (HTTP {http_status})")


def client_meta() -> JSON:
    """The ``params._meta`` every 2026-07-28 request carries: version, identity, capabilities."""
    return {
        "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "mcptask-thirdparty-tests", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {"extensions": {EXTENSION: {}}},
    }


def _sse_data(lines: Iterator[str]) -> Iterator[str]:
    """Each SSE event's data (multi-line data joined with newlines)."""
    data: list[str] = []
    for raw in lines:
        line = raw.rstrip("\r")
        if line == "":
            if data:
                yield "\n".join(data)
            data = []
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        if name == "data":
            data.append(value[1:] if value.startswith(" ") else value)
    if data:
        yield "\n".join(data)


def _answer(response: httpx.Response, want_id: int) -> JSON:
    kind = response.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind == "text/event-stream":
        for data in _sse_data(iter(response.text.splitlines())):
            if not data.strip():
                continue
            message: JSON = json.loads(data)
            if "method" not in message and message.get("id") == want_id:
                return message
        raise AssertionError(
            f"no JSON-RPC answer to request {want_id} in the SSE stream "
            f"(HTTP {response.status_code}): {response.text[:500]!r}"
        )
    try:
        parsed: JSON = response.json()
    except ValueError:
        raise AssertionError(
            f"HTTP {response.status_code} {kind or 'no content type'}: {response.text[:500]!r}"
        ) from None
    return parsed


def rpc(
    url: str,
    method: str,
    params: JSON | None = None,
    *,
    name: str | None = None,
    client: httpx.Client | None = None,
    timeout: float = HTTP_TIMEOUT,
) -> JSON:
    """One stateless 2026-07-28 request; return its result or raise RpcError.

    Headers: ``MCP-Protocol-Version``, ``Mcp-Method`` and (for tools/call and tasks/*) ``Mcp-Name``,
    Accept both JSON and SSE. ``params._meta`` gets ``client_meta()``. The answer is read as
    JSON or SSE, whichever the server chose.
    """
    request_id = next(_ids)
    body_params: JSON = dict(params or {})
    body_params["_meta"] = {**client_meta(), **body_params.get("_meta", {})}
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": PROTOCOL_VERSION,
        "Mcp-Method": method,
    }
    if name is not None:
        headers["Mcp-Name"] = name
    message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": body_params}
    with contextlib.ExitStack() as stack:
        if client is None:
            client = stack.enter_context(httpx.Client(timeout=timeout))
        response = client.post(url, json=message, headers=headers, timeout=timeout)
        answer = _answer(response, request_id)
    if "error" in answer:
        raise RpcError(answer["error"], response.status_code)
    result: JSON = answer["result"]
    return result


def start_task(url: str, seconds: float, outcome: str = "completed") -> str:
    """``tools/call long_job`` with the tasks extension declared; return the new task's id.

    The server answers a flat CreateTaskResult (``resultType: "task"``, ``status: "working"``).
    """
    result = rpc(
        url,
        "tools/call",
        {"name": TOOL_NAME, "arguments": {"seconds": seconds, "outcome": outcome}},
        name=TOOL_NAME,
    )
    if result.get("resultType") != "task" or not isinstance(result.get("taskId"), str):
        raise AssertionError(f"tools/call {TOOL_NAME} did not create a task: {result}")
    task_id: str = result["taskId"]
    return task_id


def get_task(url: str, task_id: str) -> JSON:
    """``tasks/get``: the task as the server has it now."""
    return rpc(url, "tasks/get", {"taskId": task_id}, name=task_id)


def cancel_task(url: str, task_id: str) -> JSON:
    """``tasks/cancel``: the server's (empty) ack."""
    return rpc(url, "tasks/cancel", {"taskId": task_id}, name=task_id)


def wait_for_status(
    url: str, task_id: str, statuses: Collection[str] = TERMINAL, timeout: float = 60.0
) -> JSON:
    """Poll ``tasks/get`` until the task's status is one of ``statuses``; return the task.

    ``timeout`` only guards against a hang; it raises TimeoutError with the last status.
    """
    deadline = time.monotonic() + timeout
    with httpx.Client(timeout=HTTP_TIMEOUT) as client:
        while True:
            task = rpc(url, "tasks/get", {"taskId": task_id}, name=task_id, client=client)
            if task.get("status") in statuses:
                return task
            if time.monotonic() > deadline:
                raise TimeoutError(
                    f"task {task_id} still {task.get('status')!r} after {timeout}s "
                    f"(waiting for {sorted(statuses)})"
                )
            time.sleep(0.2)


# --------------------------------------------------------------------------------------------
# The server process
# --------------------------------------------------------------------------------------------


def server_stderr(proc: subprocess.Popen[bytes]) -> str:
    """What a server started by start_ext_tasks_server wrote to stderr so far."""
    stderr_file = _stderr_files.get(proc.pid)
    if stderr_file is None:
        return ""
    stderr_file.flush()
    stderr_file.seek(0)
    return stderr_file.read().decode(errors="replace")


def _fail_start(proc: subprocess.Popen[bytes], why: str) -> RuntimeError:
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(timeout=2 if proc.poll() is None else 0)
    code = proc.poll()
    err = server_stderr(proc)
    stop(proc)
    state = f"exit {code}" if code is not None else "still running, stopped"
    return RuntimeError(f"third-party server {why} ({state}); stderr:\n{err}")


def _wait_until_answering(url: str, proc: subprocess.Popen[bytes], timeout: float) -> None:
    """POST server/discover until the server answers it (the socket listens ~5 s earlier)."""
    deadline = time.monotonic() + timeout
    last_error = "no attempt"
    with httpx.Client() as client:
        while True:
            if proc.poll() is not None:
                raise _fail_start(proc, f"died before answering server/discover ({last_error})")
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise _fail_start(
                    proc, f"did not answer server/discover within {timeout}s ({last_error})"
                )
            try:
                result = rpc(url, "server/discover", client=client, timeout=min(remaining, 10.0))
            except (httpx.TransportError, RpcError, AssertionError, ValueError) as error:
                last_error = f"{type(error).__name__}: {error}"
                time.sleep(0.2)
                continue
            if PROTOCOL_VERSION not in result.get("supportedVersions", []):
                raise _fail_start(proc, f"answered server/discover without 2026-07-28: {result}")
            return


def start_ext_tasks_server(*args: str) -> tuple[str, subprocess.Popen[bytes]]:
    """Start ext_tasks_server.py (in the third-party venv) on 127.0.0.1 with a free port.

    ``args`` go to the script (e.g. ``"--json-response"``). Returns the endpoint URL
    (``http://127.0.0.1:PORT/mcp``) once the server answers ``server/discover``, and the
    process; end it with ``stop(proc)``. Raises RuntimeError with the server's stderr if it
    dies or does not come up in time.
    """
    python = _venv_bin(ensure_thirdparty_venv())
    argv = [str(python), "-u", str(SERVER_SCRIPT), "--port", "0", *args]
    stderr_file = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the server
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=stderr_file,
        cwd=REPO_ROOT,
    )
    _stderr_files[proc.pid] = stderr_file
    stdout = proc.stdout
    assert stdout is not None
    lines: queue.Queue[bytes] = queue.Queue()

    def read_first_line() -> None:
        # This thread owns the pipe: it keeps draining it (so a chatty child can never block on
        # a full pipe) and closes it at EOF, whichever way the process ends.
        with stdout:
            lines.put(stdout.readline())
            with contextlib.suppress(OSError, ValueError):
                for _ in iter(stdout.readline, b""):
                    pass

    threading.Thread(
        target=read_first_line, name=f"ext-tasks-server-{proc.pid}-stdout", daemon=True
    ).start()
    try:
        line = lines.get(timeout=START_TIMEOUT).decode(errors="replace").strip()
    except queue.Empty:
        raise _fail_start(proc, f"printed no 'listening on' line within {START_TIMEOUT}s") from None
    match = re.fullmatch(r"listening on (http://127\.0\.0\.1:\d+/mcp)", line)
    if match is None:
        raise _fail_start(proc, f"did not start: stdout {line!r}")
    url = match.group(1)
    _wait_until_answering(url, proc, READY_TIMEOUT)
    return url, proc


def stop(proc: subprocess.Popen[Any]) -> None:
    """End a process by its PID: SIGTERM, wait, then SIGKILL if it is still there.

    Its stdout is left to the thread that drains it (start_ext_tasks_server), which closes it.
    """
    if proc.stdin is not None:
        with contextlib.suppress(OSError):
            proc.stdin.close()
    if proc.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            proc.wait(timeout=10)
    stderr_file = _stderr_files.pop(proc.pid, None)
    if stderr_file is not None:
        stderr_file.close()


if __name__ == "__main__":  # pragma: no cover - manual helper: build the venv, show the time
    started = time.monotonic()
    print(ensure_thirdparty_venv(), f"({time.monotonic() - started:.1f}s)")

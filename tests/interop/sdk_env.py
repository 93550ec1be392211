"""Run the official MCP Python SDK's task server (mcp==1.30.0) for interop tests.

The SDK server (tests/interop/sdk_server/server.py) lives in its own virtual environment,
``<repo>/.venv-interop``, never in the project's venv. This module creates that venv on first
use, starts the server over Streamable HTTP or gives the argv to run it over stdio, and creates
tasks inside an HTTP session with plain httpx (no SDK on the client side).

It depends on the standard library and httpx only, and has no relative imports, so it can be
imported however the caller is laid out:

- as ``tests.interop.sdk_env`` from any test: tests/ and tests/interop/ are packages, so
  pytest (default "prepend" import mode) puts the repo root on sys.path;
- from a test module in tests/interop: ``from .sdk_env import start_sdk_server``;
- by path from anywhere (no package needed)::

      import importlib.util, pathlib, sys
      path = pathlib.Path("tests/interop/sdk_env.py")
      spec = importlib.util.spec_from_file_location("sdk_env", path)
      assert spec is not None and spec.loader is not None
      sdk_env = importlib.util.module_from_spec(spec)
      sys.modules["sdk_env"] = sdk_env
      spec.loader.exec_module(sdk_env)

Facts about the SDK server that callers rely on are checked in test_sdk_server_smoke.py.
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
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

import httpx

__all__ = [
    "PROTOCOL_VERSION",
    "REPO_ROOT",
    "SERVER_SCRIPT",
    "VENV_DIR",
    "RpcError",
    "RpcReply",
    "StdioPeer",
    "create_tasks_in_session",
    "ensure_sdk_venv",
    "initialize_session",
    "post_rpc",
    "rpc",
    "sdk_stdio_command",
    "server_stderr",
    "start_sdk_server",
    "stop",
]

JSON = dict[str, Any]
HttpMode = Literal["sse", "json"]

PROTOCOL_VERSION = "2025-11-25"
HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
SDK_SERVER_DIR = HERE / "sdk_server"
REQUIREMENTS = SDK_SERVER_DIR / "requirements.txt"
SERVER_SCRIPT = SDK_SERVER_DIR / "server.py"
VENV_DIR = REPO_ROOT / ".venv-interop"
MARKER_NAME = ".mcptask-interop-requirements"
LOCK_NAME = ".mcptask-interop.lock"
TOOL_NAME = "long_job"

INSTALL_TIMEOUT = 900.0
START_TIMEOUT = 60.0
HTTP_TIMEOUT = 30.0

_ids = itertools.count(1)
_venv_python: Path | None = None
_venv_guard = threading.Lock()
_stderr_files: dict[int, IO[bytes]] = {}


# --------------------------------------------------------------------------------------------
# The SDK's virtual environment
# --------------------------------------------------------------------------------------------


def _requirements_digest() -> str:
    digest = hashlib.sha256(REQUIREMENTS.read_bytes())
    digest.update(f"\0{sys.version_info.major}.{sys.version_info.minor}".encode())
    return digest.hexdigest()


def _pinned_mcp_version() -> str:
    for line in REQUIREMENTS.read_text().splitlines():
        match = re.fullmatch(r"\s*mcp\s*==\s*([^\s;#]+).*", line)
        if match:
            return match.group(1)
    raise RuntimeError(f"{REQUIREMENTS} does not pin mcp==<version>")


def _venv_bin(venv: Path) -> Path:
    return venv / "bin" / "python"


def _venv_is_ready(venv: Path, digest: str) -> bool:
    marker = venv / MARKER_NAME
    if not _venv_bin(venv).exists() or not marker.exists():
        return False
    if marker.read_text().strip() != digest:
        return False
    wanted = f"mcp-{_pinned_mcp_version()}.dist-info"
    return any(venv.glob(f"lib/python*/site-packages/{wanted}"))


def _run_checked(argv: Sequence[str], what: str) -> None:
    done = subprocess.run(
        list(argv), capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(
            f"{what} failed (exit {done.returncode}): {' '.join(argv)}\n"
            f"--- stdout ---\n{done.stdout}\n--- stderr ---\n{done.stderr}"
        )


def ensure_sdk_venv() -> Path:
    """Create ``<repo>/.venv-interop`` with the SDK once; return its python.

    The venv is reused while its marker file holds the hash of requirements.txt (and the Python
    minor version) and the pinned mcp dist-info is present; otherwise it is rebuilt. An fcntl
    lock on a file inside the venv directory keeps parallel callers (pytest-xdist workers,
    separate pytest runs) from installing at the same time.
    """
    global _venv_python
    with _venv_guard:
        if _venv_python is not None:
            return _venv_python
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
        return _venv_python


def _build_venv(venv: Path, digest: str) -> None:
    # Start clean but keep the lock file (its inode is what the lock is held on).
    for child in venv.iterdir():
        if child.name == LOCK_NAME:
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()
    _run_checked([sys.executable, "-m", "venv", str(venv)], "creating the interop venv")
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
        "installing the SDK server's requirements",
    )
    (venv / MARKER_NAME).write_text(digest + "\n")


# --------------------------------------------------------------------------------------------
# Processes
# --------------------------------------------------------------------------------------------


def _server_argv(*args: str) -> list[str]:
    return [str(ensure_sdk_venv()), "-u", str(SERVER_SCRIPT), *args]


def sdk_stdio_command(*extra_args: str) -> list[str]:
    """The argv that runs the SDK server over stdio (e.g. for ``mcptask --stdio -- ...``)."""
    return _server_argv("--stdio", *extra_args)


def start_sdk_server(
    mode: HttpMode, *extra_args: str, timeout: float = START_TIMEOUT
) -> tuple[str, subprocess.Popen[bytes]]:
    """Start the SDK server over Streamable HTTP on 127.0.0.1 with a free port.

    ``mode`` "sse" answers POSTs with text/event-stream (the SDK default), "json" with
    application/json. ``extra_args`` go to server.py (e.g. "--seed", "3"). Returns the endpoint
    URL (``http://127.0.0.1:<port>/mcp``) and the process; end it with ``stop(proc)``.
    """
    argv = _server_argv("--http", "127.0.0.1:0", *(["--json-response"] if mode == "json" else []))
    argv.extend(extra_args)
    stderr_file = tempfile.TemporaryFile()  # noqa: SIM115 - lives as long as the server
    proc = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=stderr_file
    )
    _stderr_files[proc.pid] = stderr_file
    assert proc.stdout is not None
    lines: queue.Queue[bytes] = queue.Queue()
    threading.Thread(
        target=lambda: lines.put(proc.stdout.readline() if proc.stdout else b""),
        name=f"sdk-server-{proc.pid}-stdout",
        daemon=True,
    ).start()
    try:
        line = lines.get(timeout=timeout).decode(errors="replace").strip()
    except queue.Empty:
        err = server_stderr(proc)
        stop(proc)
        raise RuntimeError(f"SDK server printed no URL within {timeout}s; stderr:\n{err}") from None
    match = re.fullmatch(r"listening on (http://\S+/mcp)", line)
    if match is None:
        if not line:  # stdout closed: the server is exiting
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=5)
        err = server_stderr(proc)
        stop(proc)
        raise RuntimeError(
            f"SDK server did not start (exit {proc.returncode}); stdout: {line!r}; stderr:\n{err}"
        )
    return match.group(1), proc


def server_stderr(proc: subprocess.Popen[bytes]) -> str:
    """What a server started by start_sdk_server wrote to stderr so far."""
    stderr_file = _stderr_files.get(proc.pid)
    if stderr_file is None:
        return ""
    stderr_file.flush()
    stderr_file.seek(0)
    return stderr_file.read().decode(errors="replace")


def stop(proc: subprocess.Popen[Any]) -> None:
    """End a process started here: close its stdin, SIGTERM it by PID, wait, SIGKILL if needed."""
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
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
    stderr_file = _stderr_files.pop(proc.pid, None)
    if stderr_file is not None:
        stderr_file.close()


# --------------------------------------------------------------------------------------------
# JSON-RPC over Streamable HTTP, by hand
# --------------------------------------------------------------------------------------------


class RpcError(Exception):
    """A JSON-RPC error answer."""

    def __init__(self, error: JSON) -> None:
        self.code: int = int(error.get("code", 0))
        self.message: str = str(error.get("message", ""))
        self.data: Any = error.get("data")
        super().__init__(f"{self.code}: {self.message}")


@dataclass
class RpcReply:
    """One POST's outcome: the answer to our request (None for a notification) and the rest."""

    status_code: int
    content_type: str
    session_id: str | None
    message: JSON | None
    notifications: list[JSON] = field(default_factory=list)
    requests: list[JSON] = field(default_factory=list)

    @property
    def result(self) -> JSON:
        if self.message is None:
            raise AssertionError(f"no JSON-RPC answer (HTTP {self.status_code})")
        if "error" in self.message:
            raise RpcError(self.message["error"])
        result: JSON = self.message["result"]
        return result


def _headers(session_id: str | None) -> dict[str, str]:
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    if session_id is not None:
        headers["Mcp-Session-Id"] = session_id
        headers["MCP-Protocol-Version"] = PROTOCOL_VERSION
    return headers


def iter_sse_data(lines: Iterator[str]) -> Iterator[str]:
    """Yield each SSE event's data (multi-line data joined with newlines), per the SSE rules."""
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


def post_rpc(
    client: httpx.Client, url: str, message: JSON, session_id: str | None = None
) -> RpcReply:
    """POST one JSON-RPC message; read the answer as JSON or SSE, whichever the server chose.

    For a request, SSE events are read until the response with the request's id arrives;
    notifications and server requests seen on the way are kept, empty (priming) events skipped.
    """
    want_id = message.get("id")
    with client.stream("POST", url, json=message, headers=_headers(session_id)) as response:
        content_type = response.headers.get("content-type", "").split(";")[0].strip().lower()
        reply = RpcReply(
            status_code=response.status_code,
            content_type=content_type,
            session_id=response.headers.get("mcp-session-id", session_id),
            message=None,
        )
        if want_id is None:
            response.read()
            return reply
        if content_type == "text/event-stream":
            for data in iter_sse_data(response.iter_lines()):
                if not data.strip():
                    continue
                parsed: JSON = json.loads(data)
                if "method" not in parsed and parsed.get("id") == want_id:
                    reply.message = parsed
                    break
                if "method" in parsed and "id" in parsed:
                    reply.requests.append(parsed)
                elif "method" in parsed:
                    reply.notifications.append(parsed)
        else:
            body = response.read()
            if body.strip():
                reply.message = json.loads(body)
        return reply


def rpc(
    client: httpx.Client,
    url: str,
    method: str,
    params: JSON | None = None,
    session_id: str | None = None,
) -> RpcReply:
    """Send a request (fresh numeric id) and return the reply; see post_rpc."""
    message: JSON = {"jsonrpc": "2.0", "id": next(_ids), "method": method}
    if params is not None:
        message["params"] = params
    return post_rpc(client, url, message, session_id)


def initialize_session(client: httpx.Client, url: str) -> tuple[str, JSON]:
    """initialize (2025-11-25, client capabilities {"tasks": {}}) + notifications/initialized.

    Returns the Mcp-Session-Id and the initialize result.
    """
    reply = rpc(
        client,
        url,
        "initialize",
        {
            "protocolVersion": PROTOCOL_VERSION,
            "capabilities": {"tasks": {}},
            "clientInfo": {"name": "mcptask-interop-tests", "version": "0"},
        },
    )
    result = reply.result
    if reply.session_id is None:
        raise AssertionError("initialize answer carried no Mcp-Session-Id")
    note = post_rpc(
        client, url, {"jsonrpc": "2.0", "method": "notifications/initialized"}, reply.session_id
    )
    if note.status_code != 202:
        raise AssertionError(f"notifications/initialized answered HTTP {note.status_code}")
    return reply.session_id, result


def call_long_job_as_task(
    client: httpx.Client,
    url: str,
    session_id: str,
    seconds: float,
    outcome: str = "completed",
    ttl_ms: int = 3_600_000,
) -> JSON:
    """Task-augmented tools/call of long_job; returns the created task (the CreateTaskResult's
    ``task``)."""
    result = rpc(
        client,
        url,
        "tools/call",
        {
            "name": TOOL_NAME,
            "arguments": {"seconds": seconds, "outcome": outcome},
            "task": {"ttl": ttl_ms},
        },
        session_id,
    ).result
    task: JSON = result["task"]
    return task


def create_tasks_in_session(
    url: str,
    n: int,
    seconds: float = 600.0,
    outcome: str = "completed",
    ttl_ms: int = 3_600_000,
) -> tuple[str, list[str]]:
    """Open a session, create ``n`` long_job tasks in it, and leave the session open.

    The session is not deleted, so another client (mcptask with ``--session-id``) can join it:
    the SDK only shows a task to the session that created it. Keep ``ttl_ms`` above
    ``seconds * 1000``: the SDK's in-memory store purges a task ``ttl`` after its creation even
    while it is still working.
    """
    with httpx.Client(timeout=HTTP_TIMEOUT) as client:
        session_id, _ = initialize_session(client, url)
        ids = [
            call_long_job_as_task(client, url, session_id, seconds, outcome, ttl_ms)["taskId"]
            for _ in range(n)
        ]
    return session_id, ids


# --------------------------------------------------------------------------------------------
# JSON-RPC over stdio, by hand
# --------------------------------------------------------------------------------------------


class StdioPeer:
    """A started stdio server with newline-delimited JSON-RPC on its pipes (for tests)."""

    def __init__(self, *extra_args: str) -> None:
        self.stderr_file = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        self.proc: subprocess.Popen[bytes] = subprocess.Popen(
            sdk_stdio_command(*extra_args),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr_file,
        )
        self.notifications: list[JSON] = []
        self._lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._pump, name="sdk-stdio-reader", daemon=True).start()

    def _pump(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self._lines.put(line)
        self._lines.put(b"")

    def send(self, message: JSON) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def next_message(self, timeout: float = HTTP_TIMEOUT) -> JSON:
        try:
            line = self._lines.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError(f"no message from the stdio server in {timeout}s") from None
        if not line:
            self.stderr_file.seek(0)
            err = self.stderr_file.read().decode(errors="replace")
            raise RuntimeError(f"stdio server closed stdout; stderr:\n{err}")
        message: JSON = json.loads(line)
        return message

    def request(self, method: str, params: JSON | None = None) -> JSON:
        """Send a request and return its answer message (result or error), keeping
        notifications that arrive before it in ``self.notifications``."""
        message: JSON = {"jsonrpc": "2.0", "id": next(_ids), "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        while True:
            incoming = self.next_message()
            if "method" not in incoming and incoming.get("id") == message["id"]:
                return incoming
            if "method" in incoming and "id" not in incoming:
                self.notifications.append(incoming)

    def wait_notification(
        self, method: str, task_id: str | None = None, timeout: float = HTTP_TIMEOUT
    ) -> JSON:
        """Return (and remove) the first notification ``method`` (about ``task_id`` if given),
        reading more messages for up to ``timeout`` seconds."""

        def matches(note: JSON) -> bool:
            if note.get("method") != method:
                return False
            return task_id is None or note.get("params", {}).get("taskId") == task_id

        deadline = time.monotonic() + timeout
        while True:
            for note in self.notifications:
                if matches(note):
                    self.notifications.remove(note)
                    return note
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"no {method} notification within {timeout}s")
            incoming = self.next_message(timeout=remaining)
            if "method" in incoming and "id" not in incoming:
                self.notifications.append(incoming)

    def result(self, method: str, params: JSON | None = None) -> JSON:
        answer = self.request(method, params)
        if "error" in answer:
            raise RpcError(answer["error"])
        result: JSON = answer["result"]
        return result

    def initialize(self) -> JSON:
        result = self.result(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {"tasks": {}},
                "clientInfo": {"name": "mcptask-interop-tests", "version": "0"},
            },
        )
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return result

    def close(self) -> None:
        stop(self.proc)
        self.stderr_file.close()


if __name__ == "__main__":  # pragma: no cover - manual helper: build the venv, show the time
    started = time.monotonic()
    print(ensure_sdk_venv(), f"({time.monotonic() - started:.1f}s)")

"""stdio transport: the server is a child process speaking newline-delimited JSON-RPC."""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import subprocess
import sys
import threading
from collections import deque
from collections.abc import Mapping
from typing import IO

from mcptask.errors import (
    McptaskError,
    ProtocolViolation,
    ResponseTimeout,
    ServerExited,
    UsageError,
)
from mcptask.protocol.jsonrpc import METHOD_NOT_FOUND, JsonObject, is_notification, is_response
from mcptask.transport import DEFAULT_TIMEOUT_SECONDS, Transport, WireLog
from mcptask.transport.limits import decode, max_answer_bytes, too_large
from mcptask.transport.redact import display_command

STDERR_TAIL_LINES = 10
NOT_JSON = "the server wrote a line that is not JSON on stdout (stdout is for JSON-RPC only)"
_SHUTDOWN_GRACE_SECONDS = 2.0
INHERITED_VARIABLES = (
    (
        "APPDATA",
        "HOMEDRIVE",
        "HOMEPATH",
        "LOCALAPPDATA",
        "PATH",
        "PROCESSOR_ARCHITECTURE",
        "SYSTEMDRIVE",
        "SYSTEMROOT",
        "TEMP",
        "USERNAME",
        "USERPROFILE",
    )
    if sys.platform == "win32"
    else ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER")
)
"""What a spawned server inherits from mcptask's environment unless told to inherit all:
the official MCP SDKs' list. Everything else (MCPTASK_TOKEN, a client secret, cloud keys)
reaches a server only through --env or its profile. A value starting with `()` is a shell
function, which the SDKs leave out too."""


def split_command(command: str) -> list[str]:
    """Split a server command line like a POSIX shell would, without running a shell."""
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise UsageError(f"cannot parse the server command: {exc}") from None
    if not argv:
        raise UsageError("the server command is empty")
    return argv


class StdioTransport(Transport):
    """A spawned MCP server, its stdin/stdout carrying one JSON-RPC message per line."""

    kind = "stdio"
    concurrent = False
    """`request` is thread-safe (answers are routed by id), but it is not offered for
    overlapping: a pipe has no network latency to hide, so a second request in flight only
    pays off when the server itself works on requests concurrently, which many stdio servers
    do not (the request then waits behind the other, and its timeout, which runs from the
    write, spends that wait); and one silent or dying server fails both at once."""

    def __init__(
        self,
        argv: list[str],
        *,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        log: WireLog | None = None,
        stderr_log: WireLog | None = None,
        env: Mapping[str, str] | None = None,
        inherit_env: bool = False,
    ) -> None:
        self.target = display_command(argv)
        self.timeout = timeout
        self._max_answer = max_answer_bytes()
        self._log = log
        self._stderr_log = stderr_log
        self._stderr_tail: deque[str] = deque(maxlen=STDERR_TAIL_LINES)
        self._sent_ids: set[object] = set()
        self._answers: dict[object, JsonObject | None] = {}
        """Each id a caller still waits for, with its answer once in (None until then): a
        late answer to any other id is dropped."""
        self._failure: McptaskError | None = None
        self._changed = threading.Condition()
        self._write_lock = threading.Lock()
        if inherit_env:
            environment = dict(os.environ)
        else:
            environment = {
                name: value
                for name in INHERITED_VARIABLES
                if (value := os.environ.get(name)) and not value.startswith("()")
            }
        try:
            # A session of its own: a Ctrl-C at the terminal must reach mcptask only, so that a
            # bulk cancel can finish its request in flight before the server is shut down.
            self._process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
                env={**environment, **(env or {})},
            )
        except OSError as exc:
            raise ServerExited(
                f"cannot start the server {argv[0]!r}: {exc.strerror or exc}"
            ) from None
        assert self._process.stdout is not None
        assert self._process.stderr is not None
        self._stderr_reader = threading.Thread(
            target=self._read_stderr, args=(self._process.stderr,), daemon=True
        )
        self._stderr_reader.start()
        self._stdout_reader = threading.Thread(
            target=self._read_stdout, args=(self._process.stdout,), daemon=True
        )
        self._stdout_reader.start()

    def request(
        self,
        message: JsonObject,
        *,
        timeout: float | None = None,
        headers: dict[str, str] | None = None,
        session: str | None = None,
    ) -> JsonObject:
        """Write a request line and wait for the response with the same id (stdio has no
        sessions: `session` is ignored)."""
        request_id = message.get("id")
        with self._changed:
            self._sent_ids.add(request_id)
            self._answers[request_id] = None
        try:
            self._write(message)
            limit = timeout if timeout is not None else self.timeout
            with self._changed:
                self._changed.wait_for(
                    lambda: self._answers[request_id] is not None or self._failure is not None,
                    timeout=limit,
                )
                answer = self._answers[request_id]
                if answer is not None:
                    return answer
                if self._failure is not None:
                    raise self._failure
        finally:
            with self._changed:
                del self._answers[request_id]  # with one that came in just too late
        raise ResponseTimeout(
            f"the server did not answer {message.get('method')} within {limit:g}s"
        )

    def subscribe(
        self, message: JsonObject, *, headers: dict[str, str] | None, stop: threading.Event
    ) -> None:
        """Write a long-lived request; its notifications arrive through the reader thread."""
        with contextlib.suppress(McptaskError):  # polling stays the baseline
            self._write(message)

    def notify(self, message: JsonObject) -> None:
        self._write(message)

    def join_session(self, session_id: str) -> None:
        raise UsageError("--session-id needs a Streamable HTTP server (--url)")

    def close(self) -> None:
        """Close stdin, give the server a moment to exit, then terminate, then kill."""
        process = self._process
        if process.stdin is not None and not process.stdin.closed:
            with contextlib.suppress(OSError):  # it is already gone
                process.stdin.close()
        for stop in (None, process.terminate, process.kill):
            if stop is not None:
                stop()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=_SHUTDOWN_GRACE_SECONDS)
                break
        self._stdout_reader.join(timeout=1.0)
        self._stderr_reader.join(timeout=1.0)

    def _write(self, message: JsonObject) -> None:
        line = json.dumps(message, separators=(",", ":"))
        self._trace(f"> {line}")
        stdin = self._process.stdin
        assert stdin is not None
        with self._write_lock:
            try:
                stdin.write(line.encode() + b"\n")
                stdin.flush()
            except (BrokenPipeError, ValueError, OSError):
                with self._changed:
                    failure = self._failure
                raise failure or self._death() from None

    def _read_stdout(self, stream: IO[bytes]) -> None:
        """Reader thread: route each line to the waiting request or the notification handler."""
        failure: McptaskError
        try:
            limit = self._max_answer
            # readline with a bound: a line is never read past the answer limit.
            while raw := stream.readline(limit + 1):
                if len(raw) > limit:
                    raise too_large(limit)
                text = raw.decode("utf-8", errors="replace").strip()
                if not text:
                    continue
                self._trace(f"< {text}")
                self._route(decode(text, context="a line from the server", not_json=NOT_JSON))
        except Exception as exc:  # never let the reader die silently: every wait would hang
            failure = (
                exc
                if isinstance(exc, McptaskError)
                else ProtocolViolation(f"cannot read the server's output ({type(exc).__name__})")
            )
            # Nothing more is read: close our end, so a server blocked writing is not left
            # waiting for the shutdown grace (it gets a broken pipe instead).
            with contextlib.suppress(OSError):
                stream.close()
        else:
            failure = self._death()
        with self._changed:
            self._failure = self._failure or failure
            self._changed.notify_all()

    def _route(self, message: JsonObject) -> None:
        if is_response(message):
            answered = message.get("id")
            with self._changed:
                if answered not in self._sent_ids:
                    # An error with a null id answers whatever could not be parsed: one of
                    # the requests still waiting (never one answered long ago).
                    if not ("error" in message and answered is None):
                        raise ProtocolViolation(
                            f"the server answered a request id it was never sent: {answered!r}"
                        )
                    waiting = (key for key, answer in self._answers.items() if answer is None)
                    answered = next(waiting, None)
                if answered in self._answers:  # else: late, its caller gave up (dropped)
                    self._answers[answered] = message
                    self._changed.notify_all()
        elif is_notification(message):
            if self._handler is not None:
                self._handler(message)
        elif message.get("method") != "ping" and self._request_handler is not None:
            self._request_handler(message, self._write)  # it answers with a line of its own
        else:  # a request of the server's: `ping` is answered, others refused
            reply: JsonObject = {"jsonrpc": "2.0", "id": message.get("id")}
            if message.get("method") == "ping":
                reply["result"] = {}
            else:
                reply["error"] = {"code": METHOD_NOT_FOUND, "message": "not supported by mcptask"}
            with contextlib.suppress(McptaskError):  # the reader will notice the server's exit
                self._write(reply)

    def _read_stderr(self, stream: IO[bytes]) -> None:
        """Keep the server's log apart: shown with -v, its tail quoted when the server dies."""
        while raw := stream.readline(64 * 1024):
            line = raw.decode("utf-8", errors="replace").rstrip()
            self._stderr_tail.append(line)
            if self._stderr_log is not None:
                self._stderr_log(f"server: {line}")

    def _death(self) -> ServerExited:
        """The error for a server whose stdout closed: its exit code and its last words."""
        try:
            code: int | None = self._process.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            code = None
        self._stderr_reader.join(timeout=0.5)
        status = f"exited with code {code}" if code is not None else "closed its output"
        tail = " | ".join(line for line in self._stderr_tail if line.strip())
        detail = f"; its last output: {tail}" if tail else ""
        return ServerExited(f"the server process {status}{detail}")

"""Every exception of mcptask, and the exit codes they map to.

The tree (each class carries its exit code; no instance overrides it):

    McptaskError ...................... 1  a bug: the message says how to report it
     ├── OutputFailure                     stdout cannot be written (a full disk, say)
     ├── UsageError ................... 2  bad options, arguments or input files (file, line)
     │    └── StateError                   the local state (record of known tasks) is unusable
     │         └── StoreFailure            the record of known tasks cannot be read or written
     ├── UnreachableError ............. 3  refused, DNS, TLS, timeout
     │    ├── EndpointNotFound             HTTP 404 outside a session: no MCP endpoint there
     │    ├── ServerExited                 the stdio server process ended: final, no retry
     │    ├── TlsFailure                   the TLS handshake failed: final, no retry
     │    └── TransientError               may pass: retried (`client/exchange.py`)
     │         ├── NotDelivered            the request never reached the server: resend
     │         ├── ServerBusy              429 / 503: the server did not act: resend later
     │         └── AnswerLost              sent, but no answer came: the server may have acted
     │              ├── GatewayFailure     502 / 504 from a gateway in front of the server
     │              ├── HttpTimeout        HTTP: no answer within --timeout: never retried
     │              └── ResponseTimeout    stdio: no answer line in time (lost, or a hung server)
     ├── AuthError .................... 4  HTTP 401 / 403 (challenge shown); credentials withheld
     │    ├── SignInRequired               401, and no way to sign in here (the hint names one)
     │    ├── AuthDiscoveryError           OAuth metadata missing, invalid, or not this server's
     │    ├── TokenRequestRefused          the authorization server refused a token request
     │    └── InsufficientScope            403 insufficient_scope again after the one step-up
     ├── UnsupportedError ............. 5  capability not negotiated, -32601, version refused
     │    ├── UnsupportedVersionError      -32022, with the versions the server names
     │    ├── NoTaskList                   no tasks/list (2026-07-28, or tasks.list not offered)
     │    └── TaskCallForbidden            the tool forbids task-augmented calls
     ├── TaskError .................... 6  a task (or its session) could not be acted on
     │    ├── SessionGone                  a joined session ended on the server
     │    └── RpcError                     a JSON-RPC error answer, classified by code and method
     │         ├── TaskNotFound            invalid params on tasks/get or tasks/result: unknown,
     │         │    │                      expired, or not visible
     │         │    └── SessionTaskGone    the session that owned a recorded task has ended
     │         └── CancelRefused           invalid params on tasks/cancel: finished, or unknown
     └── ProtocolViolation ............ 8  invalid JSON, not JSON-RPC, wrong content type or id
          └── HttpStatusError              an HTTP error status without a JSON-RPC error body

    SessionExpired (not a McptaskError)    HTTP 404 on a request that carried a session id;
                                           the client re-initializes once or raises SessionGone
    TimedOut (a BaseException)             a time bound ran out (schema check, answer headers)

Exit codes 7, 9, 10, 11, 12 and 130 are decided by reports (each report's `exit_code` in
`mcptask.operations`; several servers': `mcptask.cli.fleet.fleet_exit_code`), never by an
exception; `ExitCode` is used only here, by those reports and in `mcptask.cli`. Which
JSON-RPC error code becomes which class is decided in `mcptask.client.error_codes` only. The
transports raise these classes at their boundary: nothing above them sees httpx or OS errors.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from enum import IntEnum


class ExitCode(IntEnum):
    """Process exit codes: the single source of truth (docs/reference/exit-codes.md and the man
    pages are generated from these members and their docstrings)."""

    OK = 0
    """Done; also when nothing matched a selector."""
    UNEXPECTED = 1
    """An unexpected error (a bug in mcptask: the message says how to report it), or stdout
    cannot be written (a full disk)."""
    USAGE = 2
    """Usage error: bad options, arguments or input files."""
    UNREACHABLE = 3
    """The server cannot be reached: connection refused, DNS, TLS, timeout, the server process
    died."""
    AUTH = 4
    """Authentication or authorization refused (HTTP 401/403; the server's challenge is shown),
    a sign-in that cannot happen here, or one the authorization server refused."""
    UNSUPPORTED = 5
    """The server does not offer what the command needs (capability not negotiated, or
    -32601)."""
    TASK_FAILED = 6
    """At least one task was not found, could not be cancelled, or ended `unknown`; a joined or
    recorded session has ended; `answer`: the task did not wait for input (nothing was sent),
    or it failed, was cancelled or went away after the answer."""
    PENDING = 7
    """Not confirmed in time (`pending`); `watch --exit-status`: a task ended failed, cancelled
    or gone; `watch --wait-timeout` ran out; `result`: the task had not finished within
    `--wait-timeout`, or it waits for input; `answer`: the task still waited on the answer
    when `--wait-timeout` ran out, or its question (a 2025-11-25 server's request) did not
    reach mcptask."""
    PROTOCOL = 8
    """The server broke the protocol: invalid JSON, not JSON-RPC, wrong content type, wrong id,
    an answer over the size bound, a list without end (over 5,000 pages)."""
    RESULT_IS_ERROR = 9
    """`result` (and `start` when the server ran the call at once): the tool reported an error
    (`isError: true`)."""
    RESULT_FAILED = 10
    """`result`: the task failed with an error instead of a result (the error is shown)."""
    RESULT_CANCELLED = 11
    """`result`: the task was cancelled, so there is no result."""
    SERVERS_FAILED = 12
    """Several servers in one run (`-P 'prod-*'`, `--all-profiles`): at least one could not
    be reached, refused the sign-in, lacked what the command needs, or stopped on an error;
    the others went on (each server's own code is in its section of `-o json`)."""
    INTERRUPTED = 130
    """Interrupted (Ctrl-C, SIGTERM), or a bulk cancel declined at the prompt."""


class McptaskError(Exception):
    """Base of every error mcptask reports to the user as one line."""

    exit_code: ExitCode = ExitCode.UNEXPECTED

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class OutputFailure(McptaskError):
    """stdout cannot be written for a reason other than its reader leaving (`| head`)."""


class UsageError(McptaskError):
    """Bad options, arguments or input files (a profiles file's errors name file and line)."""

    exit_code = ExitCode.USAGE


class StateError(UsageError):
    """The state directory or the record in it is unusable: the user's environment to fix."""


class StoreFailure(StateError):
    """The record of known tasks cannot be opened, read or written (recording only warns)."""


class UnreachableError(McptaskError):
    """The server cannot be reached: refused, DNS, TLS, timeout, or its process died."""

    exit_code = ExitCode.UNREACHABLE


class EndpointNotFound(UnreachableError):
    """HTTP 404 to a request outside any session: there is no MCP endpoint at that URL."""


class ServerExited(UnreachableError):
    """The stdio server process ended (or never started): waiting brings nothing back."""


class TlsFailure(UnreachableError):
    """The TLS handshake failed (an untrusted certificate, say): retrying cannot help."""


class TransientError(UnreachableError):
    """A failure that may pass; `retry_after` is the wait the server asked for, if any."""

    def __init__(self, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.retry_after = retry_after


class NotDelivered(TransientError):
    """The request provably never reached the server (refused, DNS, connect timeout)."""


class ServerBusy(TransientError):
    """The server answered 429 or 503: it did not act on the request; try again later."""


class AnswerLost(TransientError):
    """Sent, but no readable answer came, and the server may have acted: only an idempotent
    request may be sent again; a cancel's effect is learned with `tasks/get`."""


class GatewayFailure(AnswerLost):
    """A gateway in front of the server answered 502 or 504: the server may have acted."""


class HttpTimeout(AnswerLost):
    """HTTP: the request was sent and no answer came within --timeout (a read, write or
    whole-answer timeout). Never retried, whatever the method: the server has the request
    and holds it, so a repeat would most likely wait as long, and --timeout is the wait the
    user allowed. A cancel's effect is still learned with `tasks/get`."""


class ResponseTimeout(AnswerLost):
    """stdio: no answer line within --timeout. Retried like a lost answer: on a pipe, a line
    lost on the way shows only as this silence (a late answer is set aside)."""


class AuthError(McptaskError):
    """The server refused the credentials (HTTP 401 or 403), or mcptask refused to send them
    (plain http:// to another machine, an authorization server they are not bound to)."""

    exit_code = ExitCode.AUTH


class SignInRequired(AuthError):
    """No client credentials, and no person at a terminal (nor `BROWSER`) to sign in."""


class AuthDiscoveryError(AuthError):
    """The OAuth metadata is missing, invalid, or names another resource or issuer."""


class TokenRequestRefused(AuthError):
    """The authorization server refused a token, registration or sign-in request."""


class InsufficientScope(AuthError):
    """HTTP 403 `insufficient_scope` after mcptask already stepped up once."""


class UnsupportedError(McptaskError):
    """The server does not offer what the command needs."""

    exit_code = ExitCode.UNSUPPORTED


class UnsupportedVersionError(UnsupportedError):
    """The server rejected our protocol version; `supported` lists the ones it speaks."""

    def __init__(self, message: str, *, supported: tuple[str, ...]) -> None:
        super().__init__(message)
        self.supported = supported


class NoTaskList(UnsupportedError):
    """The server has no `tasks/list` (2026-07-28 by design, or `tasks.list` not offered)."""


class TaskCallForbidden(UnsupportedError):
    """The tool's `execution.taskSupport` does not allow a task-augmented call."""


class TaskError(McptaskError):
    """A task, or the session holding it, could not be acted on."""

    exit_code = ExitCode.TASK_FAILED


class SessionGone(TaskError):
    """A session the user asked to join no longer exists on the server."""


class RpcError(TaskError):
    """A JSON-RPC error answer (classified by `mcptask.client.error_codes`, never by wording);
    `shown` replaces the one line the user sees."""

    def __init__(
        self, code: int, message: str, data: object = None, *, shown: str | None = None
    ) -> None:
        super().__init__(shown or f"server error {code}: {message}")
        self.code = code
        self.server_message = message
        self.data = data


class TaskNotFound(RpcError):
    """Invalid params on `tasks/get` or `tasks/result`: unknown, expired, or not visible."""

    def __init__(self, task_id: str, code: int, server_message: str, data: object = None) -> None:
        shown = f"task {task_id} not found (unknown, expired, or not visible to this session)"
        super().__init__(code, server_message, data, shown=f"{shown}: {server_message}")
        self.task_id = task_id


class SessionTaskGone(TaskNotFound):
    """A recorded task lived in a session that has ended, and no other session sees it."""

    def __init__(self, task_id: str, session_id: str) -> None:
        gone = f"task {task_id} is gone: the session that owned it ({session_id}) has ended"
        RpcError.__init__(self, 0, gone, shown=gone)  # not TaskNotFound's line
        self.task_id = task_id


class CancelRefused(RpcError):
    """Invalid params on `tasks/cancel`: finished or unknown (only `tasks/get` tells which)."""


class ProtocolViolation(McptaskError):
    """The server broke the protocol: invalid JSON, not JSON-RPC, wrong content type or id."""

    exit_code = ExitCode.PROTOCOL


class HttpStatusError(ProtocolViolation):
    """An HTTP error status without a JSON-RPC error body (era detection falls back on it)."""


class SessionExpired(Exception):
    """HTTP 404 to a request with a session id; internal to the client, never the user's."""


class TimedOut(BaseException):
    """A time bound ran out (`time_bound`'s timer signal): a BaseException, so that no
    `except Exception` of a library swallows it. Never reaches the user."""


@contextlib.contextmanager
def time_bound(seconds: float) -> Iterator[None]:
    """Raise TimedOut in the block once `seconds` have passed (a real-time timer signal;
    Python's `re` checks for signals while it backtracks). Unbounded outside the main
    thread, where no signal can be caught."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: object) -> None:
        raise TimedOut

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)

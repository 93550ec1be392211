"""Every exception of mcptask, and the exit codes they map to.

The tree (each class carries its exit code; no instance overrides it):

    McptaskError ...................... 1  a bug: the message says how to report it
     ├── UsageError ................... 2  bad options, arguments or input files
     │    └── StateError                   the local state (record of known tasks) is unusable
     ├── UnreachableError ............. 3  refused, DNS, TLS, timeout
     │    ├── ResponseTimeout              no answer in time (the server may be alive)
     │    ├── EndpointNotFound             HTTP 404 outside a session: no MCP endpoint there
     │    └── ServerExited                 the stdio server process ended: final, no retry
     ├── AuthError .................... 4  HTTP 401 / 403, challenge shown
     ├── UnsupportedError ............. 5  capability not negotiated, -32601, version refused
     │    ├── UnsupportedVersionError      -32022, with the versions the server names
     │    ├── NoTaskList                   no tasks/list (2026-07-28, or tasks.list not offered)
     │    └── TaskCallForbidden            the tool forbids task-augmented calls
     ├── TaskError .................... 6  a task (or its session) could not be acted on
     │    ├── SessionGone                  a joined session ended on the server
     │    └── RpcError                     a JSON-RPC error answer, classified by code
     │         ├── TaskNotFound            -32602 on tasks/get: unknown, expired, not visible
     │         │    └── SessionTaskGone      the session that owned a recorded task has ended
     │         └── CancelRefused           -32602 on tasks/cancel: finished, or unknown
     └── ProtocolViolation ............ 8  invalid JSON, not JSON-RPC, wrong content type or id
          └── HttpStatusError              an HTTP error status without a JSON-RPC error body

    SessionExpired (not a McptaskError)    HTTP 404 on a request that carried a session id;
                                           the client re-initializes once or raises SessionGone

Exit codes that only reports decide (`mcptask.cli.exit_codes`), never an exception: 7 (not
finished or confirmed in time), 9, 10 and 11 (`mcptask result`: the tool reported an error,
the task failed, the task was cancelled), 130 (interrupted).

`ExitCode` appears only here and in `mcptask.cli`, the one layer that turns exceptions and
reports into exit codes. The transports raise these classes at their boundary: nothing above
them sees httpx or OS errors.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    """Process exit codes, as documented in the README (the single source of truth in code)."""

    OK = 0
    UNEXPECTED = 1
    USAGE = 2
    UNREACHABLE = 3
    AUTH = 4
    UNSUPPORTED = 5
    TASK_FAILED = 6
    PENDING = 7
    PROTOCOL = 8
    RESULT_IS_ERROR = 9
    """`result`: the task's tool result says `isError: true` (the tool reported a failure)."""
    RESULT_FAILED = 10
    """`result`: the task failed without a tool result (its request ended in an error)."""
    RESULT_CANCELLED = 11
    """`result`: the task was cancelled, so it has no result."""
    INTERRUPTED = 130


class McptaskError(Exception):
    """Base of every error mcptask reports to the user as one line."""

    exit_code: ExitCode = ExitCode.UNEXPECTED

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class UsageError(McptaskError):
    """Bad options, arguments or input files."""

    exit_code = ExitCode.USAGE


class StateError(UsageError):
    """The local state directory or the record of known tasks in it cannot be used.

    A usage error: like an unreadable input file, it is the user's environment to fix
    (`MCPTASK_STATE_DIR`, permissions, a damaged file), not a fault of the server or a bug.
    """


class UnreachableError(McptaskError):
    """The server cannot be reached: refused, DNS, TLS, timeout, or its process died."""

    exit_code = ExitCode.UNREACHABLE


class ResponseTimeout(UnreachableError):
    """No answer arrived in time (the server may still be alive)."""


class EndpointNotFound(UnreachableError):
    """HTTP 404 to a request outside any session: there is no MCP endpoint at that URL."""

    status = 404


class ServerExited(UnreachableError):
    """The stdio server process ended (or never started): waiting brings nothing back."""


class AuthError(McptaskError):
    """The server refused the credentials (HTTP 401 or 403)."""

    exit_code = ExitCode.AUTH


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
    """A JSON-RPC error answer. Callers classify it by class and `code`, never by wording."""

    def __init__(self, code: int, message: str, data: object = None) -> None:
        super().__init__(f"server error {code}: {message}")
        self.code = code
        self.server_message = message
        self.data = data


class TaskNotFound(RpcError):
    """`tasks/get` answered -32602: the task is unknown, expired, or not visible to us."""

    def __init__(self, task_id: str, code: int, server_message: str) -> None:
        super().__init__(code, server_message)
        self.task_id = task_id
        self.message = (
            f"task {task_id} not found (unknown, expired, or not visible to this session): "
            f"{server_message}"
        )
        self.args = (self.message,)


class SessionTaskGone(TaskNotFound):
    """A recorded task lived in a session that has ended, and no other session sees it."""

    def __init__(self, task_id: str, session_id: str) -> None:
        super().__init__(task_id, 0, "")
        self.message = f"task {task_id} is gone: the session that owned it ({session_id}) has ended"
        self.server_message = self.message
        self.args = (self.message,)


class CancelRefused(RpcError):
    """`tasks/cancel` answered -32602: the task had finished, or is unknown.

    The message is not standardised, so only a follow-up `tasks/get` tells the two apart.
    """


class ProtocolViolation(McptaskError):
    """The server broke the protocol: invalid JSON, not JSON-RPC, wrong content type or id."""

    exit_code = ExitCode.PROTOCOL


class HttpStatusError(ProtocolViolation):
    """An HTTP error status without a JSON-RPC error body (era detection falls back on it)."""

    def __init__(self, message: str, *, status: int) -> None:
        super().__init__(message)
        self.status = status


class SessionExpired(Exception):
    """The server answered 404 to a request that carried a session id: the session is gone.

    Internal to the client, which re-initializes once or reports a joined session as gone;
    it never reaches the user, so it is not a McptaskError.
    """

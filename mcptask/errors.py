"""The one exception tree of mcptask, and the exit codes it maps to.

Every failure that reaches the user is a `McptaskError`; its class decides the exit code.
`cli.py` is the only place that turns these into messages and exit codes.
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


class UnreachableError(McptaskError):
    """The server cannot be reached: refused, DNS, TLS, timeout, or its process died."""

    exit_code = ExitCode.UNREACHABLE


class AuthError(McptaskError):
    """The server refused the credentials (HTTP 401 or 403)."""

    exit_code = ExitCode.AUTH


class UnsupportedError(McptaskError):
    """The server does not offer what the command needs."""

    exit_code = ExitCode.UNSUPPORTED


class ProtocolViolation(McptaskError):
    """The server broke the protocol: invalid JSON, not JSON-RPC, wrong content type or id."""

    exit_code = ExitCode.PROTOCOL


class HttpStatusError(ProtocolViolation):
    """An HTTP error status without a JSON-RPC error body (era detection falls back on it)."""

    def __init__(self, message: str, *, status: int, exit_code: ExitCode | None = None) -> None:
        super().__init__(message)
        self.status = status
        if exit_code is not None:
            self.exit_code = exit_code


class ResponseTimeout(UnreachableError):
    """No answer arrived in time (the server may still be alive)."""


class SessionGone(McptaskError):
    """A session the user asked to join no longer exists on the server."""

    exit_code = ExitCode.TASK_FAILED


class TaskNotFound(McptaskError):
    """A task the user named does not exist (or is not visible to this session)."""

    exit_code = ExitCode.TASK_FAILED


class RpcError(McptaskError):
    """A JSON-RPC error answer. Callers classify it by `code`, never by message wording."""

    exit_code = ExitCode.TASK_FAILED

    def __init__(self, code: int, message: str, data: object = None) -> None:
        super().__init__(f"server error {code}: {message}")
        self.code = code
        self.server_message = message
        self.data = data

"""The one place JSON-RPC error codes are interpreted, by code and method (never by message).
Invalid params (-32602) means a task unknown, expired or not visible on `tasks/get` and
`tasks/result` (`TaskNotFound`), a refusal on `tasks/cancel` (`CancelRefused`: finished or
unknown; only `tasks/get` tells which)."""

from __future__ import annotations

from mcptask.errors import (
    CancelRefused,
    McptaskError,
    ProtocolViolation,
    RpcError,
    TaskNotFound,
    UnsupportedError,
    UnsupportedVersionError,
)
from mcptask.protocol.jsonrpc import (
    HEADER_MISMATCH,
    METHOD_NOT_FOUND,
    MISSING_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
    JsonObject,
)

INVALID_PARAMS = -32602


def result_of(answer: JsonObject, method: str, params: JsonObject | None = None) -> JsonObject:
    """The result of `answer` to `method`; an error answer raises `error_of`'s error."""
    error = answer.get("error")
    if isinstance(error, dict):
        raise error_of(error, method, params)
    result = answer.get("result")
    if not isinstance(result, dict):
        raise ProtocolViolation(f"the server's result for {method} is not an object")
    return result


def error_of(error: JsonObject, method: str, params: JsonObject | None = None) -> McptaskError:
    """A class of its own where the code changes what mcptask does, else an `RpcError`."""
    code = error.get("code")
    message = str(error.get("message", ""))
    data = error.get("data")
    details = data if isinstance(data, dict) else {}
    if code == METHOD_NOT_FOUND and method.startswith("tasks/"):
        return UnsupportedError(f"the server does not support {method} ({code}: {message})")
    if code == METHOD_NOT_FOUND and method == "tools/list":
        return UnsupportedError("the server offers no tools (tools/list)")
    if code == UNSUPPORTED_PROTOCOL_VERSION:
        listed = details.get("supported")
        supported = tuple(str(v) for v in listed) if isinstance(listed, list) else ()
        asked = details.get("requested")
        return UnsupportedVersionError(
            f"the server does not support protocol version {asked or 'asked for'} "
            f"({method}); it supports: {', '.join(supported) or 'nothing it named'}",
            supported=supported,
        )
    if code == MISSING_CLIENT_CAPABILITY:
        required = details.get("requiredCapabilities") if isinstance(data, dict) else message
        return UnsupportedError(
            f"the server requires client capabilities mcptask does not have for {method}: "
            f"{required}"
        )
    if code == HEADER_MISMATCH:
        return ProtocolViolation(
            f"the server says the HTTP headers do not match the {method} request: {message}"
        )
    task_id = params.get("taskId") if params else None
    if code == INVALID_PARAMS and isinstance(task_id, str):
        if method in ("tasks/get", "tasks/result"):
            return TaskNotFound(task_id, code, message, data)
        if method == "tasks/cancel":
            return CancelRefused(code, message, data)
    return RpcError(int(code) if isinstance(code, int) else 0, message, data)


def error_object(error: RpcError) -> JsonObject:
    """The JSON-RPC error object `error` was read from, as sent."""
    wire: JsonObject = {"code": error.code, "message": error.server_message}
    if error.data is not None:
        wire["data"] = error.data
    return wire

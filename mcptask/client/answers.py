"""Read a JSON-RPC answer: its result, or the error it carries as the right mcptask error."""

from __future__ import annotations

from mcptask.errors import (
    ProtocolViolation,
    RpcError,
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


def result_of(answer: JsonObject, method: str) -> JsonObject:
    """The result of `answer` to `method`; an error answer raises, classified by its code.

    -32601 on a tasks method and the 2026-07-28 protocol errors have classes of their own;
    any other code is an `RpcError` for the caller to classify (see `McpClient`).
    """
    error = answer.get("error")
    if isinstance(error, dict):
        raise error_of(error, method)
    result = answer.get("result")
    if not isinstance(result, dict):
        raise ProtocolViolation(f"the server's result for {method} is not an object")
    return result


def error_of(error: JsonObject, method: str) -> Exception:
    """The mcptask error for a JSON-RPC error object answering `method`."""
    code = error.get("code")
    message = str(error.get("message", ""))
    data = error.get("data")
    details = data if isinstance(data, dict) else {}
    if code == METHOD_NOT_FOUND and method.startswith("tasks/"):
        return UnsupportedError(f"the server does not support {method} ({code}: {message})")
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
    return RpcError(int(code) if isinstance(code, int) else 0, message, data)

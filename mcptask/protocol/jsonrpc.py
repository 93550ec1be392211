"""JSON-RPC 2.0 envelopes: building, telling apart and checking messages, and the error codes
that change what mcptask does."""

from __future__ import annotations

from typing import Any

from mcptask.errors import ProtocolViolation

JsonObject = dict[str, Any]

# JSON-RPC error codes that change what mcptask does (invalid params, whose meaning depends on
# the method, is read in mcptask.client.error_codes). Messages are never parsed for meaning.
METHOD_NOT_FOUND = -32601
HEADER_MISMATCH = -32020
MISSING_CLIENT_CAPABILITY = -32021
UNSUPPORTED_PROTOCOL_VERSION = -32022
# Errors only a modern (2026-07-28) server sends: one of them means "do not fall back".
MODERN_ERROR_CODES = (HEADER_MISMATCH, MISSING_CLIENT_CAPABILITY, UNSUPPORTED_PROTOCOL_VERSION)


def request_message(request_id: int | str, method: str, params: JsonObject | None) -> JsonObject:
    message: JsonObject = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return message


def notification_message(method: str) -> JsonObject:
    """mcptask sends no notification with params."""
    return {"jsonrpc": "2.0", "method": method}


def is_response(message: JsonObject) -> bool:
    return "method" not in message and ("result" in message or "error" in message)


def is_request(message: JsonObject) -> bool:
    """One the server sends us."""
    return "method" in message and "id" in message


def is_notification(message: JsonObject) -> bool:
    return "method" in message and "id" not in message


def check_message(value: object, *, context: str) -> JsonObject:
    """`value` if it is a JSON-RPC 2.0 message, else ProtocolViolation."""
    if not isinstance(value, dict) or value.get("jsonrpc") != "2.0":
        raise ProtocolViolation(f"{context} is not a JSON-RPC 2.0 message")
    if "method" in value:
        if not isinstance(value["method"], str):
            raise ProtocolViolation(f"{context} has a method that is not a string")
        return value
    if "result" not in value and "error" not in value:
        raise ProtocolViolation(f"{context} is neither a request, a notification nor a response")
    if not isinstance(value.get("id"), str | int | None) or isinstance(value.get("id"), bool):
        raise ProtocolViolation(f"{context} has an id that is neither a string nor a number")
    error = value.get("error")
    if error is not None and (
        not isinstance(error, dict) or not isinstance(error.get("code"), int)
    ):
        raise ProtocolViolation(f"{context} has a malformed error object")
    return value

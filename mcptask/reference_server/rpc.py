"""JSON-RPC 2.0 building blocks: error codes, message classification, response builders,
and the one-line encoding every transport writes."""

from __future__ import annotations

import enum
import json
from typing import Any

JsonObject = dict[str, Any]

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603


class JsonRpcError(Exception):
    """A JSON-RPC error to be answered to the peer (code, message, optional data)."""

    def __init__(self, code: int, message: str, data: object = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data


class MessageKind(enum.Enum):
    """What a decoded JSON value is, as far as JSON-RPC is concerned."""

    REQUEST = "request"
    NOTIFICATION = "notification"
    RESPONSE = "response"
    INVALID = "invalid"


def _is_valid_id(value: object) -> bool:
    # bool is an int subclass in Python, but `true` is not a valid JSON-RPC id.
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def classify(message: object) -> MessageKind:
    """Tell a request, a notification and a response apart; anything else is INVALID."""
    if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
        return MessageKind.INVALID
    if "method" in message:
        if not isinstance(message["method"], str):
            return MessageKind.INVALID
        if "params" in message and not isinstance(message["params"], dict | list):
            return MessageKind.INVALID
        if "id" not in message:
            return MessageKind.NOTIFICATION
        return MessageKind.REQUEST if _is_valid_id(message["id"]) else MessageKind.INVALID
    has_result, has_error = "result" in message, "error" in message
    if "id" in message and has_result != has_error:
        return MessageKind.RESPONSE
    return MessageKind.INVALID


def request_id(message: object) -> str | int | None:
    """The id of a message when it has a valid one (for error answers), else None."""
    if isinstance(message, dict):
        value = message.get("id")
        if _is_valid_id(value):
            return value
    return None


def result_response(msg_id: str | int | None, result: JsonObject) -> JsonObject:
    return {"jsonrpc": "2.0", "id": msg_id, "result": result}


def error_response(
    msg_id: str | int | None, code: int, message: str, data: object = None
) -> JsonObject:
    """An error response; `data` is included only when given.

    Without a request id (a parse error, an HTTP-layer failure before the body was read)
    the `id` member is left out: the MCP schema (2025-11-25 and later) makes it optional
    and allows only a string or an integer, so `"id": null` would not validate.
    """
    error: JsonObject = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    if msg_id is None:
        return {"jsonrpc": "2.0", "error": error}
    return {"jsonrpc": "2.0", "id": msg_id, "error": error}


def notification(method: str, params: JsonObject) -> JsonObject:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def encode_message(message: JsonObject) -> str:
    """One JSON-RPC message as compact single-line JSON (ASCII, so any text is safe)."""
    return json.dumps(message, separators=(",", ":"))

"""Deliberately broken answers (--fault), for testing how clients handle protocol errors."""

from __future__ import annotations

from mcptask.reference_server.config import Fault
from mcptask.reference_server.jsonrpc import JsonObject

_BODIES = {
    Fault.NOT_JSON: b"this is not json",
    Fault.NOT_JSONRPC: b'{"hello": "world"}',
    Fault.WRONG_CONTENT_TYPE: b"<html><body>This is not an MCP answer.</body></html>",
}


def replacement_body(fault: Fault) -> bytes | None:
    """The bytes sent instead of the answer, or None when the fault keeps the answer's shape
    (wrong-id alters the message; drop sends nothing)."""
    return _BODIES.get(fault)


def with_wrong_id(response: JsonObject) -> JsonObject:
    """A copy of the response whose id matches no request the client sent."""
    msg_id = response.get("id")
    if isinstance(msg_id, int):
        wrong: str | int = msg_id + 1_000_000
    else:
        wrong = f"{msg_id}-wrong"
    return {**response, "id": wrong}

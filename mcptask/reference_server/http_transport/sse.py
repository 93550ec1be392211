"""Server-Sent Events framing (the text/event-stream wire format)."""

from __future__ import annotations

from mcptask.reference_server.jsonrpc import JsonObject, encode_message

HEARTBEAT = b": heartbeat\n\n"


def message_event(event_id: str, message: JsonObject) -> bytes:
    """An SSE `message` event carrying one JSON-RPC message."""
    return f"event: message\nid: {event_id}\ndata: {encode_message(message)}\n\n".encode()


def priming_event(event_id: str, retry_ms: int | None = None) -> bytes:
    """An event with an id and empty data: lets the client resume with Last-Event-ID."""
    retry = f"retry: {retry_ms}\n" if retry_ms is not None else ""
    return f"id: {event_id}\n{retry}data:\n\n".encode()


def plain_event(message: JsonObject) -> bytes:
    """An SSE `message` event without an id (2026-07-28 streams are not resumable)."""
    return f"event: message\ndata: {encode_message(message)}\n\n".encode()

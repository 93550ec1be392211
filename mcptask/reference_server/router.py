"""Which protocol era answers a message: decided here, once, for every transport."""

from __future__ import annotations

from mcptask.reference_server.modern_wire import META_PROTOCOL_VERSION, MODERN_ONLY_METHODS


def is_modern_message(message: object) -> bool:
    """True for a message the modern era serves: it carries
    `params._meta["io.modelcontextprotocol/protocolVersion"]`, or names a modern-only method."""
    if not isinstance(message, dict):
        return False
    if message.get("method") in MODERN_ONLY_METHODS:
        return True
    params = message.get("params")
    meta = params.get("_meta") if isinstance(params, dict) else None
    return isinstance(meta, dict) and META_PROTOCOL_VERSION in meta

"""2026-07-28 multi round-trip requests: the signed `requestState` a call hands out.

The state comes back from the client with its retry and must not be forged: it travels as
Base64 JSON with an HMAC that binds it to the tool it was issued for.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import secrets

from mcptask.reference_server.jsonrpc import INVALID_PARAMS, JsonObject, JsonRpcError


class RequestStateSeal:
    """Seals and opens requestState values with a key of this server process."""

    def __init__(self) -> None:
        self._key = secrets.token_bytes(32)

    def seal(self, tool: str, state: JsonObject) -> str:
        """requestState: the state as Base64 JSON, with an HMAC that binds it to the tool."""
        payload = base64.urlsafe_b64encode(
            json.dumps({"tool": tool, "state": state}, separators=(",", ":")).encode()
        ).decode("ascii")
        return f"{payload}.{self._mac(payload)}"

    def open(self, tool: str, token: object) -> JsonObject:
        """The state sealed in a requestState this server handed out for `tool`; -32602
        for anything else."""
        try:
            if not isinstance(token, str):
                raise ValueError("not a string")
            payload, _, mac = token.rpartition(".")
            if not hmac.compare_digest(mac.encode(), self._mac(payload).encode()):  # any text
                raise ValueError("bad signature")
            sealed = json.loads(base64.urlsafe_b64decode(payload.encode("ascii")))
            if sealed.get("tool") != tool or not isinstance(sealed.get("state"), dict):
                raise ValueError("issued for another tool")
            state: JsonObject = sealed["state"]
            return state
        except (ValueError, UnicodeError, binascii.Error, AttributeError):
            raise JsonRpcError(
                INVALID_PARAMS, "Invalid requestState: not one this server issued for this tool"
            ) from None

    def _mac(self, payload: str) -> str:
        return hmac.new(self._key, payload.encode("ascii"), hashlib.sha256).hexdigest()

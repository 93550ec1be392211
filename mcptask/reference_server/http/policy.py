"""HTTP request checks of the Streamable HTTP transport: Origin, bearer token, Accept, and
the 2026-07-28 request metadata headers (MCP-Protocol-Version, Mcp-Method, Mcp-Name)."""

from __future__ import annotations

import base64
import binascii
import hmac
import ipaddress
import re
from collections.abc import Callable, Mapping
from urllib.parse import urlsplit

from mcptask.reference_server.oauth.clients import LOOPBACK_HOSTS
from mcptask.reference_server.oauth.server import Refusal

REALM = "mcptask-reference"

# The Base64 sentinel form of a header value (streamable-http.mdx, "Value Encoding").
SENTINEL = re.compile(r"=\?base64\?(.*)\?=")
# Where Mcp-Name comes from, per method: params.name / params.uri (core), params.taskId
# (tasks extension, "Routing Headers").
NAME_SOURCES = {
    "tools/call": "name",
    "prompts/get": "name",
    "resources/read": "uri",
    "tasks/get": "taskId",
    "tasks/update": "taskId",
    "tasks/cancel": "taskId",
}


def origin_allowed(origin: str) -> bool:
    """True for http://localhost, http://127.0.0.1 or http://[::1], any port (against DNS
    rebinding, as the transport spec requires)."""
    try:
        parts = urlsplit(origin)
        parts.port  # noqa: B018 - raises ValueError for a malformed port
    except ValueError:
        return False
    if parts.scheme != "http" or parts.username or parts.path or parts.query:
        return False
    return parts.hostname in LOOPBACK_HOSTS


def is_loopback(host: str) -> bool:
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def host_allowed(host: str | None, bind_host: str) -> bool:
    """DNS rebinding protection, as the official SDKs do it: on a loopback bind, the Host
    header must name a loopback host (127.0.0.1, localhost, [::1], or the bound address),
    with any port; a non-loopback bind accepts any Host (its names are not known here)."""
    if not is_loopback(bind_host):
        return True
    if host is None:
        return False
    name, _, port = host.strip().lower().rpartition(":")
    if not name or not port.isdigit():
        name = host.strip().lower()  # no port
    own = f"[{bind_host}]" if ":" in bind_host else bind_host
    return name in {"127.0.0.1", "localhost", "[::1]", own.lower()}


def _bearer_token(authorization: str | None) -> str | None:
    if authorization is None:
        return None
    scheme, _, token = authorization.strip().partition(" ")
    return token.strip() if scheme.lower() == "bearer" and token.strip() else None


def _same(a: str, b: str) -> bool:
    return hmac.compare_digest(a.encode(), b.encode())


def auth_failure(
    authorization: str | None, require: str | None, forbid: str | None
) -> Refusal | None:
    token = _bearer_token(authorization)
    if forbid is not None and token is not None and _same(token, forbid):
        return Refusal(
            403, 'Bearer error="insufficient_scope", scope="tasks"', "Insufficient scope"
        )
    if require is not None and (token is None or not _same(token, require)):
        return Refusal(
            401,
            f'Bearer realm="{REALM}", error="invalid_token"',
            "Missing or invalid bearer token",
        )
    return None


def accepted_types(accept: str | None) -> set[str]:
    if not accept:
        return set()
    return {part.split(";")[0].strip().lower() for part in accept.split(",")}


def decode_header_value(value: str) -> str | None:
    """A header value with its `=?base64?...?=` sentinel form decoded (None: not Base64 of
    UTF-8)."""
    sentinel = SENTINEL.fullmatch(value)
    if sentinel is None:
        return value
    try:
        return base64.b64decode(sentinel[1], validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        return None


def _mismatch(header: str, sent: str, body: object) -> str:
    return f"Header mismatch: {header} header value {sent!r} does not match body value {body!r}"


def modern_header_problem(
    header: Callable[[str], str | None], method: str, version: str, params: Mapping[str, object]
) -> str | None:
    """Why the headers of a 2026-07-28 POST do not mirror its body, or None when they do;
    `header` looks a header up by name (case-insensitively)."""
    for name, value in (("MCP-Protocol-Version", version), ("Mcp-Method", method)):
        sent = header(name)
        if sent is None:
            return f"Header mismatch: missing {name} header"
        if sent != value:
            return _mismatch(name, sent, value)
    source = NAME_SOURCES.get(method)
    body_value = params.get(source) if source is not None else None
    if not isinstance(body_value, str):
        return None  # nothing to mirror (a malformed body is the method's to reject)
    sent_name = header("Mcp-Name")
    if sent_name is None:
        return f"Header mismatch: missing Mcp-Name header (params.{source} of {method})"
    # RFC 9110 field values: visible ASCII, space and horizontal tab.
    if not all(0x20 <= ord(char) <= 0x7E or char == "\t" for char in sent_name):
        return "Header mismatch: Mcp-Name header contains invalid characters"
    decoded = decode_header_value(sent_name)
    if decoded is None:
        return "Header mismatch: Mcp-Name header has a malformed Base64 value"
    if decoded != body_value:
        return _mismatch("Mcp-Name", sent_name, body_value)
    return None

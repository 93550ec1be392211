"""Where to connect and with which credentials: options first, then the environment.

The result is the client's `ConnectionSettings`; every problem is a one-line UsageError.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

from mcptask.client.connect import DEFAULT_TIMEOUT_SECONDS, ConnectionSettings
from mcptask.errors import UsageError
from mcptask.protocol import PROTOCOL_CHOICES

ENV_URL = "MCPTASK_URL"
ENV_SERVER = "MCPTASK_SERVER"
ENV_TOKEN = "MCPTASK_TOKEN"


def resolve_settings(
    *,
    url: str | None,
    server_command: str | None,
    header_options: list[str] | None = None,
    token_file: Path | None = None,
    session_id: str | None = None,
    timeout: float = DEFAULT_TIMEOUT_SECONDS,
    protocol: str = "auto",
    environ: dict[str, str] | None = None,
) -> ConnectionSettings:
    """Combine options and environment into connection settings, or raise a UsageError."""
    env = dict(os.environ) if environ is None else environ
    if url and server_command:
        raise UsageError("give either --url or --server, not both")
    if not url and not server_command:
        url, server_command = env.get(ENV_URL) or None, env.get(ENV_SERVER) or None
        if url and server_command:
            raise UsageError(f"both {ENV_URL} and {ENV_SERVER} are set; unset one")
    if not url and not server_command:
        raise UsageError(
            f"no server given: use --url URL or --server 'COMMAND ARGS' (or {ENV_URL} / "
            f"{ENV_SERVER}); try --server 'mcptask reference-server --stdio'"
        )
    if protocol not in PROTOCOL_CHOICES:
        raise UsageError(f"--protocol takes one of: {', '.join(PROTOCOL_CHOICES)}")
    if not (math.isfinite(timeout) and timeout > 0):
        raise UsageError("--timeout must be a positive number of seconds")
    headers = parse_headers(header_options or [])
    if server_command and (headers or session_id or token_file):
        raise UsageError("--header, --token-file and --session-id apply to --url servers only")
    if session_id is not None and not _header_safe(session_id):
        raise UsageError("--session-id must be printable ASCII")
    # The environment's token is for HTTP servers; a stdio server ignores it.
    token = _read_token(token_file) if token_file is not None else env.get(ENV_TOKEN)
    if url and token and not any(name.lower() == "authorization" for name in headers):
        if not _header_safe(token):
            raise UsageError("the bearer token must be printable ASCII (it is not shown here)")
        headers["Authorization"] = f"Bearer {token}"
    return ConnectionSettings(
        url=url,
        server_command=server_command,
        headers=headers,
        session_id=session_id,
        timeout=timeout,
        protocol=protocol,
    )


def parse_headers(options: list[str]) -> dict[str, str]:
    """Parse repeated `--header 'Name: value'` options."""
    headers: dict[str, str] = {}
    for option in options:
        name, separator, value = option.partition(":")
        name = name.strip()
        if not separator or not name or not _header_safe(name) or " " in name:
            raise UsageError("--header takes 'Name: value' (a header name, a colon, a value)")
        if not _header_safe(value.strip()):
            # The value may be a credential: name the header, never show the value.
            raise UsageError(f"the value of --header {name!r} must be printable ASCII")
        headers[name] = value.strip()
    return headers


def _header_safe(text: str) -> bool:
    """True for text that can travel in an HTTP header: printable ASCII, no control bytes."""
    return all(0x20 <= ord(char) <= 0x7E for char in text)


def _read_token(path: Path) -> str:
    try:
        token = path.read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise UsageError(f"cannot read --token-file {str(path)!r}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"--token-file {str(path)!r} is not UTF-8 text") from None
    if not token:
        raise UsageError(f"--token-file {str(path)!r} is empty")
    return token

"""Open a connected client from connection settings, and always close it again."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

from mcptask.client.observe import TaskObserver
from mcptask.client.session import McpClient
from mcptask.transport import Transport, WireLog
from mcptask.transport.redact import display_url, is_sensitive_header

DEFAULT_TIMEOUT_SECONDS = 30.0


@dataclass(frozen=True)
class ConnectionSettings:
    """Everything needed to open a transport to one server."""

    url: str | None = None
    server_command: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    session_id: str | None = None
    timeout: float = DEFAULT_TIMEOUT_SECONDS
    protocol: str = "auto"

    def __repr__(self) -> str:
        # Headers may hold credentials: never let them reach a traceback or a log.
        shown = {
            name: "<redacted>" if is_sensitive_header(name) else value
            for name, value in self.headers.items()
        }
        url = display_url(self.url) if self.url else None
        return (
            f"ConnectionSettings(url={url!r}, server_command={self.server_command!r}, "
            f"headers={shown!r}, session_id={self.session_id!r}, timeout={self.timeout!r}, "
            f"protocol={self.protocol!r})"
        )


def open_transport(
    settings: ConnectionSettings,
    *,
    log: WireLog | None = None,
    server_log: WireLog | None = None,
) -> Transport:
    """The transport the settings name: Streamable HTTP for a URL, stdio for a command."""
    if settings.url:
        from mcptask.transport.http import HttpTransport

        return HttpTransport(
            settings.url, headers=settings.headers, timeout=settings.timeout, log=log
        )
    from mcptask.transport.stdio import StdioTransport, split_command

    assert settings.server_command is not None
    return StdioTransport(
        split_command(settings.server_command),
        timeout=settings.timeout,
        log=log,
        stderr_log=server_log,
    )


@contextmanager
def connected_client(
    settings: ConnectionSettings,
    *,
    log: WireLog | None = None,
    server_log: WireLog | None = None,
    needs_list: bool = False,
    observer: TaskObserver | None = None,
    task_sessions: Mapping[str, str] | None = None,
) -> Iterator[McpClient]:
    """A client that has completed the handshake (joining `settings.session_id` if given).

    `needs_list`: the command reads `tasks/list`, which decides the era of a dual-era server.
    `observer` hears every task met; `task_sessions` names the session that owns a task.
    """
    client = McpClient(
        open_transport(settings, log=log, server_log=server_log),
        protocol=settings.protocol,
        needs_list=needs_list,
        observer=observer,
    )
    try:
        client.connect(join_session=settings.session_id, task_sessions=task_sessions)
        yield client
    finally:
        client.close()

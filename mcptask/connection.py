"""Open a connected client from settings, and always close it again."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from mcptask.client import McpClient
from mcptask.config import ConnectionSettings
from mcptask.transport import Transport, WireLog
from mcptask.transport.http import HttpTransport
from mcptask.transport.stdio import StdioTransport, split_command


def open_transport(
    settings: ConnectionSettings,
    *,
    log: WireLog | None = None,
    server_log: WireLog | None = None,
) -> Transport:
    """The transport the settings name: Streamable HTTP for a URL, stdio for a command."""
    if settings.url:
        return HttpTransport(
            settings.url, headers=settings.headers, timeout=settings.timeout, log=log
        )
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
) -> Iterator[McpClient]:
    """A client that has completed the handshake (joining `settings.session_id` if given).

    `needs_list`: the command reads `tasks/list`, which decides the era of a dual-era server.
    """
    client = McpClient(
        open_transport(settings, log=log, server_log=server_log),
        protocol=settings.protocol,
        needs_list=needs_list,
    )
    try:
        client.connect(join_session=settings.session_id)
        yield client
    finally:
        client.close()

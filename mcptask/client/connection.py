"""Open a connected client from connection settings, and always close it again."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING

from mcptask.client.exchange import RetryPolicy
from mcptask.client.session import McpClient, SessionChange
from mcptask.transport import DEFAULT_TIMEOUT_SECONDS, Transport, WireLog
from mcptask.transport.redact import display_server, display_url, redact_headers

if TYPE_CHECKING:
    from mcptask.auth.config import AuthSettings
    from mcptask.auth.flow import McpAuth
    from mcptask.store.known_tasks import KnownTasks


@dataclass(frozen=True)
class ConnectionSettings:
    url: str | None = None
    server_command: str | None = None
    headers: dict[str, str] = field(default_factory=dict)
    env: dict[str, str] = field(default_factory=dict)
    """Added to the environment of a spawned stdio server (how it takes credentials)."""
    inherit_env: bool = False
    """Give a spawned stdio server all of mcptask's environment, not only the allow-list."""
    session_id: str | None = None
    keep_session: bool = False
    """Work in a session that outlives the process: never DELETE it; renew it when gone."""
    timeout: float = DEFAULT_TIMEOUT_SECONDS
    protocol: str = "auto"
    ca_cert: Path | None = None
    insecure: bool = False
    auth: AuthSettings | None = None
    """How to sign in to a --url server (None: send only the headers above)."""

    def __repr__(self) -> str:
        # Headers and a server's command line may hold credentials: never let them reach a
        # traceback or a log.
        shown = {item.name: getattr(self, item.name) for item in fields(self)} | {
            "url": display_url(self.url) if self.url else None,
            "server_command": display_server(self.server_command) if self.server_command else None,
            "headers": redact_headers(self.headers),
            "env": sorted(self.env),
        }
        listed = ", ".join(f"{name}={value!r}" for name, value in shown.items())
        return f"ConnectionSettings({listed})"


def sign_in_flow(
    settings: ConnectionSettings, *, log: WireLog | None = None, notice: WireLog | None = None
) -> McpAuth | None:
    """None for `--auth none`."""
    if settings.url is None or settings.auth is None or settings.auth.method == "none":
        return None
    from mcptask.auth.config import HttpOptions
    from mcptask.auth.flow import McpAuth
    from mcptask.transport.tls import verification

    http = HttpOptions(verification(settings.ca_cert, settings.insecure), settings.timeout)
    return McpAuth(settings.auth, settings.url, http=http, notice=notice, trace=log)


@contextmanager
def connected_client(
    settings: ConnectionSettings,
    *,
    log: WireLog | None = None,
    needs_list: bool = False,
    on_session_change: SessionChange | None = None,
    retry: RetryPolicy | None = None,
    notice: WireLog | None = None,
    auth: McpAuth | None = None,
    record: KnownTasks | None = None,
    task_sessions: Mapping[str, str] | None = None,
) -> Iterator[McpClient]:
    """A client that has completed the handshake (joining `settings.session_id` if given);
    the keywords are `McpClient`'s, `McpClient.connect`'s and `sign_in_flow`'s, but `auth`: a
    sign-in flow to use instead of the settings' (`log` also hears a stdio server's stderr)."""
    transport: Transport
    if settings.url:
        from mcptask.transport.http import HttpTransport

        transport = HttpTransport(
            settings.url,
            headers=settings.headers,
            timeout=settings.timeout,
            log=log,
            ca_cert=settings.ca_cert,
            insecure=settings.insecure,
            auth=auth or sign_in_flow(settings, log=log, notice=notice),
        )
    else:
        from mcptask.transport.stdio import StdioTransport, split_command

        assert settings.server_command is not None
        transport = StdioTransport(
            split_command(settings.server_command),
            timeout=settings.timeout,
            log=log,
            stderr_log=log,
            env=settings.env,
            inherit_env=settings.inherit_env,
        )
    client = McpClient(
        transport,
        protocol=settings.protocol,
        needs_list=needs_list,
        keep_session=settings.keep_session,
        on_session_change=on_session_change,
        retry=retry,
        record=record,
    )
    try:
        client.connect(join_session=settings.session_id, task_sessions=task_sessions)
        yield client
    finally:
        client.close()

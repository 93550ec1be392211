"""`mcptask connect`: handshake with a server and show what it offers for tasks."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated

import typer

from mcptask.cli.options import Common, Invocation, with_server_options
from mcptask.errors import UsageError


@with_server_options
def connect(
    target: Annotated[
        str | None, typer.Argument(help="A server URL or a server command (else --url/--server).")
    ] = None,
    *,
    common: Common,
) -> None:
    """Handshake with a server and show what it offers for tasks."""
    from mcptask.output.views.connect import Connection, ConnectView

    if target is not None:
        if common.url or common.server:
            raise UsageError("give the server either as TARGET or with --url/--server, not both")
        if target.startswith(("http://", "https://")):
            common = replace(common, url=target)
        else:
            common = replace(common, server=target)
    invocation = Invocation(common)
    view = ConnectView(invocation.screen)
    with invocation.client() as client:
        transport = client.transport
        connection = Connection(
            client.server, transport.kind, transport.target, transport.session_id
        )
    view.show(connection)

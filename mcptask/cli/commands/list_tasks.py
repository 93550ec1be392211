"""`mcptask list`: the server's tasks (every page), newest first."""

from __future__ import annotations

from typing import Annotated

import typer

from mcptask.cli.options import Common, Invocation, StatusOption, statuses, with_server_options


@with_server_options
def list_tasks(
    status: StatusOption = None,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="At most this many tasks (newest first).")
    ] = None,
    *,
    common: Common,
) -> None:
    """List the server's tasks (every page), newest first."""
    from mcptask.operations.listing import collect_tasks
    from mcptask.output.views.list_tasks import Listing, ListView

    wanted = statuses(status)
    invocation = Invocation(common)
    view = ListView(invocation.screen)
    with invocation.client(needs_list=True) as client:
        client.require("list")
        tasks = collect_tasks(client, statuses=wanted, limit=limit)
        transport = client.transport.kind
    view.show(
        Listing(
            tasks,
            transport=transport,
            filtered=wanted is not None,
            joined=common.session_id is not None,
        )
    )

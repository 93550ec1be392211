"""`mcptask list`: the server's tasks (every page), newest first."""

from __future__ import annotations

from typing import Annotated

import typer

from mcptask.cli.options import (
    Common,
    Invocation,
    KnownOption,
    StatusOption,
    statuses,
    with_server_options,
)


@with_server_options
def list_tasks(
    status: StatusOption = None,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="At most this many tasks (newest first).")
    ] = None,
    known: KnownOption = False,
    *,
    common: Common,
) -> None:
    """List the server's tasks (every page), newest first; --known: the recorded ones."""
    from mcptask.operations.known import refresh_known
    from mcptask.operations.listing import collect_tasks
    from mcptask.output.views.list_tasks import Listing, ListView

    wanted = statuses(status)
    invocation = Invocation(common)
    view = ListView(invocation.screen)
    recorded = invocation.record.known_ids() if known else None
    gone: list[str] | None = None
    with invocation.client(needs_list=not known, rejoin=recorded or []) as client:
        if recorded is not None:
            refreshed = refresh_known(client, recorded)
            tasks = refreshed.tasks
            if wanted is not None:
                tasks = [task for task in tasks if task.status in wanted]
            tasks, gone = tasks[:limit] if limit is not None else tasks, refreshed.gone
            view.unrefreshed(refreshed.errors)
        else:
            with invocation.record.hinting():
                client.require("list")
            tasks = collect_tasks(client, statuses=wanted, limit=limit)
        transport = client.transport.kind
    view.show(
        Listing(
            tasks,
            transport=transport,
            filtered=wanted is not None,
            joined=common.session_id is not None,
            gone=gone,
        )
    )

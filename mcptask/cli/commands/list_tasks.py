"""`mcptask list`: the server's tasks (every page), newest first."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated

import typer

from mcptask.cli.fleet import DEFAULT_PARALLEL, AllProfilesOption, ParallelOption, fleet_names
from mcptask.cli.invocation import Invocation
from mcptask.cli.options import Common, KnownOption, StatusOption, statuses, with_server_options
from mcptask.errors import UsageError


@with_server_options
def list_tasks(
    status: StatusOption = None,
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit",
            min=1,
            help="At most this many tasks (the newest; --order server: the first listed).",
        ),
    ] = None,
    known: KnownOption = False,
    order: Annotated[
        str,
        typer.Option(
            "--order",
            metavar="ORDER",
            help="newest (newest first, printed once every page is read) or server (the "
            "server's order; jsonl and ids print each page as it comes).",
        ),
    ] = "newest",
    all_profiles: AllProfilesOption = False,
    parallel: ParallelOption = DEFAULT_PARALLEL,
    *,
    common: Common,
) -> None:
    """List the server's tasks (every page), newest first; --known: the recorded ones."""
    from mcptask.operations.listing import ORDERS, newest_first_key, refresh_known, task_pages
    from mcptask.output.views.tasks import Listing, ListView

    if order not in ORDERS:
        raise UsageError(f"--order takes {' or '.join(ORDERS)}, not {order!r}")
    if known and order == "server":
        raise UsageError(
            "--known lists the recorded tasks newest first; --order server is for the server's list"
        )
    wanted = statuses(status)
    names = fleet_names(common, all_profiles)
    if names is not None:
        from mcptask.cli.fleet_runs import list_fleet

        list_fleet(
            common,
            names,
            parallel,
            statuses=wanted,
            limit=limit,
            known=known,
            newest=order == "newest",
        )
    invocation = Invocation(common)
    view = ListView(invocation.screen)
    recorded = invocation.known_ids() if known else None
    with invocation.client(needs_list=not known, rejoin=recorded or []) as client:
        about = Listing(
            [],
            transport=client.transport.kind,
            filtered=wanted is not None,
            joined=common.session_id is not None,
        )
        if recorded is None:
            client.require("list")
            # Printed while the pages are read, inside the connection's block.
            newest = order == "newest"
            pages = task_pages(client, statuses=wanted, limit=None if newest else limit)
            view.stream(pages, about, sort_key=newest_first_key if newest else None, limit=limit)
            return
        refreshed = refresh_known(client, recorded)
        view.unrefreshed(refreshed.errors)
    tasks = [task for task in refreshed.tasks if wanted is None or task.status in wanted]
    view.show(replace(about, tasks=tasks[:limit], gone=refreshed.gone))

"""`mcptask list`: the server's tasks (every page), newest first."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from mcptask.cli.fleet import (
    DEFAULT_PARALLEL,
    AllProfilesOption,
    ParallelOption,
    fleet_names,
    run_fleet,
)
from mcptask.cli.invocation import Invocation, screen_for
from mcptask.cli.options import Common, KnownOption, StatusOption, statuses, with_server_options
from mcptask.errors import UsageError

if TYPE_CHECKING:
    from mcptask.client.session import McpClient
    from mcptask.operations.listing import Refreshed
    from mcptask.output.views.fleet import ServerRun
    from mcptask.protocol.tasks import Task


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
    from mcptask.operations.listing import ORDERS, newest_first_key
    from mcptask.output.views.tasks import Listing, ListView

    if order not in ORDERS:
        raise UsageError(f"--order takes {' or '.join(ORDERS)}, not {order!r}")
    if known and order == "server":
        raise UsageError(
            "--known lists the recorded tasks newest first; --order server is for the server's list"
        )
    wanted = statuses(status)
    newest = order == "newest"
    names = fleet_names(common, all_profiles)
    if names is not None:
        list_fleet(common, names, parallel, wanted=wanted, limit=limit, known=known, newest=newest)
    invocation = Invocation(common)
    view = ListView(invocation.screen)
    with listing(invocation, wanted=wanted, known=known, limit=limit, newest=newest) as listed:
        client, pages, refreshed = listed
        about = Listing(
            [],
            transport=client.transport.kind,
            filtered=wanted is not None,
            joined=common.session_id is not None,
        )
        if refreshed is None:
            # Printed while the pages are read, inside the connection's block.
            view.stream(pages, about, sort_key=newest_first_key if newest else None, limit=limit)
            return
        view.unrefreshed(refreshed.errors)
    tasks = [task for page in pages for task in page]
    view.show(replace(about, tasks=tasks, gone=refreshed.gone))


@contextmanager
def listing(
    invocation: Invocation,
    *,
    wanted: tuple[str, ...] | None,
    known: bool,
    limit: int | None,
    newest: bool,
) -> Iterator[tuple[McpClient, Iterable[list[Task]], Refreshed | None]]:
    """`list` on one server, while its client is connected: the server's pages as they come
    (`newest`: every one, to be sorted), or with `known` the recorded tasks in `wanted`,
    refreshed, as one page (`limit` of them), and their refresh."""
    from mcptask.operations.listing import refresh_known, task_pages

    recorded = invocation.known_ids() if known else None
    with invocation.client(needs_list=not known, rejoin=recorded or []) as client:
        if recorded is None:
            client.require("list")
            pages = task_pages(client, statuses=wanted, limit=None if newest else limit)
            yield client, pages, None
        else:
            refreshed = refresh_known(client, recorded)
            tasks = [task for task in refreshed.tasks if wanted is None or task.status in wanted]
            yield client, [tasks[:limit]], refreshed


def list_fleet(
    common: Common,
    names: list[str],
    parallel: int,
    *,
    wanted: tuple[str, ...] | None,
    limit: int | None,
    known: bool,
    newest: bool,
) -> NoReturn:
    """`list` on every server; each server's tasks newest first (or in its order)."""
    from mcptask.operations.listing import newest_first_key
    from mcptask.output.views.fleet import FleetListView
    from mcptask.output.views.tasks import ListView

    view = FleetListView(screen_for(common.output, no_color=common.no_color))

    def work(run: ServerRun[list[Task]], invocation: Invocation) -> None:
        with listing(invocation, wanted=wanted, known=known, limit=limit, newest=newest) as listed:
            _, pages, refreshed = listed
            if refreshed is not None:
                ListView(invocation.screen).gone(refreshed.gone)
                ListView(invocation.screen).unrefreshed(refreshed.errors)
            tasks = [task for page in pages for task in page]
        if newest and refreshed is None:
            tasks.sort(key=newest_first_key, reverse=True)
        run.report = tasks[:limit]

    run_fleet(view, common, names, parallel, work)

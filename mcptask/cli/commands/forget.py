"""`mcptask forget`: drop entries from the local record of known tasks (no network)."""

from __future__ import annotations

from typing import Annotated

import typer

from mcptask.cli.completion import complete_task_id
from mcptask.cli.options import Common, with_server_options
from mcptask.errors import UsageError


@with_server_options
def forget(
    task_ids: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[ID]...", help="Task ids to forget.", autocompletion=complete_task_id
        ),
    ] = None,
    all_tasks: Annotated[
        bool, typer.Option("--all", help="Forget every recorded task (of this server).")
    ] = False,
    *,
    common: Common,
) -> None:
    """Forget recorded tasks (this server's, else every server's); sends nothing.

    The server is the one given with --url/--server or the environment.
    """
    import os

    from mcptask.cli.invocation import identity_of, screen_for
    from mcptask.cli.settings import ENV_PROFILE, ENV_SERVER, ENV_URL
    from mcptask.output.views.saved import ForgetView, Forgotten
    from mcptask.store.known_tasks import KnownTasks

    ids = list(dict.fromkeys(task_ids or []))
    if bool(ids) == all_tasks:
        raise UsageError("give task ids to forget, or --all (not both)")
    view = ForgetView(screen_for(common.output, no_color=common.no_color))
    url = common.url or (None if common.server else os.environ.get(ENV_URL))
    command = common.server or (None if url else os.environ.get(ENV_SERVER))
    profile = ""
    profile_from_env = not (url or command) and bool(os.environ.get(ENV_PROFILE))
    if common.profile or profile_from_env:
        # A profile's tasks are recorded under its name: forget those, not everyone's. (No
        # server named at all means every server's, not the default profile's.)
        from mcptask.cli.settings import profile_in_use
        from mcptask.store import profiles

        chosen = profile_in_use(common, lambda: profiles.load(profiles.profiles_path()), os.environ)
        if chosen is not None:
            url, command, profile = chosen.url, chosen.server, chosen.name
    identity = identity_of(url, command, profile) if url or command else None
    record = KnownTasks.open(identity)  # without a server: every server's tasks
    try:
        gone = record.forget(None if all_tasks else ids)
    finally:
        record.close()
    unknown = [task_id for task_id in ids if task_id not in gone]
    view.show(Forgotten(gone, unknown, identity.label if identity is not None else None))

"""The commands about what this machine keeps: `forget` (entries of the record of known
tasks), `handles` (the record as task handles of the official tasks library,
`@modelcontextprotocol/ext-tasks`, and such handles taken in) and `profiles` (the saved
servers: list them, delete one, choose the default)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from mcptask.cli.invocation import Invocation, identity_of, screen_for
from mcptask.cli.options import (
    Common,
    OutputOption,
    complete_profile,
    task_ids_argument,
    with_server_options,
)
from mcptask.errors import UsageError

if TYPE_CHECKING:
    from mcptask.store.profiles import ProfileBook


@with_server_options
def forget(
    task_ids: Annotated[list[str] | None, task_ids_argument(help="Task ids to forget.")] = None,
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

    from mcptask.cli.settings import (
        ENV_PROFILE,
        ENV_SERVER,
        ENV_URL,
        profile_book,
        profile_in_use,
    )
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
        chosen = profile_in_use(common, profile_book(common, os.environ), os.environ)
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


@with_server_options
def handles(
    import_from: Annotated[
        str | None,
        typer.Option(
            "--import",
            metavar="FILE",
            help="Take these handles (JSON, or JSON lines; - for stdin) into the record of "
            "this server, each once tasks/get shows the server knows its task.",
        ),
    ] = None,
    *,
    common: Common,
) -> None:
    """Write this server's recorded tasks as task handles of the official tasks library
    (ext-tasks SerializedTaskReference), or take such handles in (--import)."""
    from mcptask.cli.exit_codes import exit_code_for
    from mcptask.cli.inputs import read_text
    from mcptask.operations import handles as task_handles
    from mcptask.output.views.saved import HandleExportView, HandleImportView

    taken = None
    if import_from is not None:
        source = "stdin" if import_from == "-" else f"--import {import_from!r}"
        taken = task_handles.read_handles(read_text(import_from, source), source)
    invocation = Invocation(common, default_output="json" if taken is None else None)
    settings = invocation.settings
    endpoint = task_handles.endpoint_id(settings.url, settings.server_command)
    if taken is None:
        export_view = HandleExportView(invocation.screen)
        ids = invocation.known_ids()
        with invocation.client(rejoin=ids) as client:
            export_view.show(task_handles.export_handles(client, ids, endpoint))
        return
    view = HandleImportView(invocation.screen)
    with invocation.client() as client, invocation.stop as stop:
        report = task_handles.import_handles(client, taken, endpoint, stop=lambda: stop.stopped)
    view.show(report)
    raise typer.Exit(int(exit_code_for(report)))


def profiles(
    delete: Annotated[
        str | None,
        typer.Option(
            "--delete", metavar="NAME", help="Delete this profile.", autocompletion=complete_profile
        ),
    ] = None,
    default: Annotated[
        str | None,
        typer.Option(
            "--default",
            metavar="NAME",
            help="Make this profile the default.",
            autocompletion=complete_profile,
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(
            "--config",
            help="List the servers of this MCP client config file instead, placeholders as "
            "written (nothing is read from the environment).",
            dir_okay=False,
        ),
    ] = None,
    output: OutputOption = None,
    no_color: Annotated[bool, typer.Option("--no-color", help="No colours (also NO_COLOR).")] = (
        False
    ),
) -> None:
    """List the saved profiles (mcptask connect TARGET --save NAME saves one)."""
    from mcptask.output.views.saved import ProfilesView
    from mcptask.store import profiles as store

    screen = screen_for(output, no_color=no_color)
    view = ProfilesView(screen)
    path = store.profiles_path()
    if delete is not None and default is not None:
        raise UsageError("give either --delete or --default, not both")
    if config is not None:
        from mcptask.store.client_configs import read_client_config

        if delete is not None or default is not None:
            raise UsageError(
                "--config files are read only: --delete and --default change saved profiles"
            )
        view.show(_shown(read_client_config(config)))
        return
    if delete is not None:
        store.delete_profile(path, delete)
        screen.note(f"deleted profile {delete!r}")
    elif default is not None:
        store.set_default(path, default)
        screen.note(f"profile {default!r} is the default now")
    view.show(_shown(store.load(path)))


def _shown(book: ProfileBook) -> ProfileBook:
    """The profiles with their targets as mcptask shows targets: no user info, no
    credential-like query values or arguments (the file keeps them, as saved)."""
    from mcptask.transport.redact import display_server, redact_url

    return replace(
        book,
        profiles={
            name: replace(
                profile,
                url=profile.url and redact_url(profile.url),
                server=profile.server and display_server(profile.server),
            )
            for name, profile in book.profiles.items()
        },
    )

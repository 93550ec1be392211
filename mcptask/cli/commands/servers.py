"""The commands about servers and what this machine keeps of them: `connect` (handshake, show
what it offers, optionally save it as a profile), `login` and `logout` (its tokens),
`profiles` (list them, delete one, choose the default), `forget` (entries of the record of
known tasks), `handles` (the record as task handles of the official tasks library,
`@modelcontextprotocol/ext-tasks`, and such handles taken in) and `reference-server` (run
the embedded one)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from mcptask.cli.fleet import (
    DEFAULT_PARALLEL,
    AllProfilesOption,
    ParallelOption,
    fleet_names,
    run_fleet,
)
from mcptask.cli.invocation import Invocation, identity_of, screen_for
from mcptask.cli.options import (
    Common,
    OutputOption,
    ServerUrlArgument,
    complete_profile,
    task_ids_argument,
    with_server_options,
)
from mcptask.errors import UsageError

if TYPE_CHECKING:
    from mcptask.output.views.connection import Connection
    from mcptask.output.views.fleet import ServerRun
    from mcptask.store.profiles import ProfileBook


def _targeted(common: Common, target: str | None, others: str) -> Common:
    """`common` with TARGET as its server (a URL, else a command), refused beside `others`."""
    if target is None:
        return common
    if common.url or common.server or common.profile:
        raise UsageError(f"give the server either as TARGET or with {others}, not both")
    if target.startswith(("http://", "https://")):
        return replace(common, url=target)
    return replace(common, server=target)


@with_server_options
def connect(
    target: Annotated[
        str | None, typer.Argument(help="A server URL or a server command (else --url/--server).")
    ] = None,
    save: Annotated[
        str | None,
        typer.Option("--save", metavar="NAME", help="Save this server as profile NAME."),
    ] = None,
    default: Annotated[
        bool, typer.Option("--default", help="With --save: make it the default profile.")
    ] = False,
    keep_session: Annotated[
        bool,
        typer.Option(
            "--keep-session",
            help="With --save: keep this session for later commands (2025-11-25 servers).",
        ),
    ] = False,
    save_secrets: Annotated[
        bool,
        typer.Option(
            "--save-secrets",
            help="With --save: also write credential-like headers and variables as text.",
        ),
    ] = False,
    all_profiles: AllProfilesOption = False,
    parallel: ParallelOption = DEFAULT_PARALLEL,
    *,
    common: Common,
) -> None:
    """Handshake with a server and show what it offers for tasks; --save keeps it as a profile."""
    from mcptask.output.views.connection import ConnectView
    from mcptask.store import profiles

    names = fleet_names(common, all_profiles)
    if names is not None:
        if target is not None or save is not None:
            raise UsageError("with several servers, connect takes no TARGET and no --save")
        connect_fleet(common, names, parallel)
    if save is None and (default or keep_session or save_secrets):
        raise UsageError("--default, --keep-session and --save-secrets go with --save NAME")
    if save is not None:
        profiles.check_name(save)
        profiles.load(profiles.profiles_path())  # a file it cannot save into: said first
    common = _targeted(common, target, "--url/--server/--profile")
    invocation = Invocation(
        common, keep_session=True if keep_session else None, remember_session=save is None
    )
    view = ConnectView(invocation.screen)
    # Checked before connecting, so that nothing is kept or sent for a profile we cannot save.
    profile = None
    if save is not None:
        profile = invocation.resolved.to_profile(save, save_secrets=save_secrets)
    connection = survey(invocation)
    if profile is not None:
        saved = replace(profile, session_id=connection.session_id if profile.keep_session else None)
        profiles.save_profile(invocation.profiles_path, saved, make_default=default)
        invocation.screen.note(
            f"saved profile {saved.name!r} in {invocation.profiles_path}"
            + (" (the default)" if default else "")
        )
    view.show(connection)


def survey(invocation: Invocation) -> Connection:
    """`connect` on one server: what it offers in each era, and how it was reached."""
    from mcptask.output.views.connection import Connection

    with invocation.client() as client:
        others, problems = client.survey()
        transport = client.transport
        return Connection(
            client.server, transport.kind, transport.target, transport.session_id, others, problems
        )


def connect_fleet(common: Common, names: list[str], parallel: int) -> NoReturn:
    """`connect` to every server: what each offers for tasks."""
    from mcptask.output.views.fleet import FleetConnectView

    view = FleetConnectView(screen_for(common.output, no_color=common.no_color))

    def work(run: ServerRun[Connection], invocation: Invocation) -> None:
        run.report = survey(invocation)
        for problem in run.report.problems:
            invocation.screen.warn(problem)

    run_fleet(view, common, names, parallel, work)


@with_server_options
def login(
    target: ServerUrlArgument = None,
    *,
    common: Common,
) -> None:
    """Sign in to a server (OAuth: the browser, or --auth client-credentials) and cache the
    token; later commands use it, and refresh it, without asking again."""
    from mcptask.client.connection import sign_in_flow
    from mcptask.output.views.connection import LoginView, SignIn

    common = _targeted(common, target, "--url/--profile")
    if target is not None and common.server:
        raise UsageError(
            "login signs in to Streamable HTTP servers: give a URL (a --server process "
            "takes its credentials from its environment, --env)"
        )
    invocation = Invocation(common, force_sign_in=True)
    settings = invocation.settings
    if settings.url is None or settings.auth is None:
        raise UsageError(
            "login signs in to Streamable HTTP servers (--url, or a profile with a url)"
        )
    if settings.auth.method == "none":
        raise UsageError("--auth none: nothing to sign in with")
    view = LoginView(invocation.screen)
    auth = sign_in_flow(settings, log=invocation.log, notice=invocation.screen.warn)
    assert auth is not None  # a --url server whose --auth is not none
    with invocation.client(auth=auth) as client:
        server = client.server
        if auth.signed_in is None and not auth.sign_in_unprompted():
            invocation.screen.warn(
                f"{settings.url} did not ask for sign-in and publishes no OAuth metadata: "
                "nothing to do"
            )
    view.show(SignIn(server.name, settings.url, auth.signed_in, settings.auth.cache_path))


@with_server_options
def logout(
    target: ServerUrlArgument = None,
    every: Annotated[
        bool,
        typer.Option("--all", help="Forget every token and registered client of this machine."),
    ] = False,
    *,
    common: Common,
) -> None:
    """Forget the tokens mcptask keeps for a server (sends nothing to the server)."""
    from mcptask.auth.config import canonical_resource
    from mcptask.output.views.connection import LogoutView, SignedOut
    from mcptask.store import tokens

    if target is not None:
        if common.url or common.server or common.profile or every:
            raise UsageError("give the server either as TARGET, with --url/--profile, or --all")
        common = replace(common, url=target)
    if every and (common.url or common.server or common.profile):
        raise UsageError("--all forgets every server's tokens: give no server with it")
    url = None if every else _server_url(common)
    view = LogoutView(screen_for(common.output, no_color=common.no_color))
    path = tokens.tokens_path()
    if url is None:
        view.show(SignedOut(None, tokens.forget_all(path), path))
    else:
        view.show(SignedOut(url, tokens.forget_server(path, canonical_resource(url)), path))


def _server_url(common: Common) -> str:
    """The URL whose tokens to forget: from the line, the profile or MCPTASK_URL, with no
    credential read (logging out is what one does when they are gone)."""
    from mcptask.cli.settings import ENV_URL, profile_book, profile_in_use
    from mcptask.transport.redact import display_url

    profile = profile_in_use(common, profile_book(common, os.environ), os.environ)
    url = common.url or (profile.url if profile else None) or os.environ.get(ENV_URL)
    if common.server or (profile is not None and profile.server) or not url:
        raise UsageError("logout forgets the tokens of Streamable HTTP servers: give a URL")
    if not url.lower().startswith(("http://", "https://")):  # schemes know no case
        raise UsageError(f"invalid server URL {display_url(url)!r}: expected http(s)://HOST/PATH")
    return url


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
    raise typer.Exit(int(report.exit_code))


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


def reference_server(ctx: typer.Context) -> None:
    """Run the embedded reference MCP tasks server (--http HOST:PORT or --stdio; --help)."""
    from mcptask.reference_server import main as serve

    raise typer.Exit(serve(list(ctx.args)))

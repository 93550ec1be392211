"""`mcptask connect`: handshake with a server, show what it offers, optionally save it."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated

import typer

from mcptask.cli.invocation import Invocation
from mcptask.cli.options import Common, with_server_options
from mcptask.errors import UsageError


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
    *,
    common: Common,
) -> None:
    """Handshake with a server and show what it offers for tasks; --save keeps it as a profile."""
    from mcptask.output.views.connection import Connection, ConnectView
    from mcptask.store import profiles

    if save is None and (default or keep_session or save_secrets):
        raise UsageError("--default, --keep-session and --save-secrets go with --save NAME")
    if save is not None:
        profiles.check_name(save)
        profiles.load(profiles.profiles_path())  # a file it cannot save into: said first
    if target is not None:
        if common.url or common.server or common.profile:
            raise UsageError(
                "give the server either as TARGET or with --url/--server/--profile, not both"
            )
        if target.startswith(("http://", "https://")):
            common = replace(common, url=target)
        else:
            common = replace(common, server=target)
    invocation = Invocation(
        common, keep_session=True if keep_session else None, remember_session=save is None
    )
    view = ConnectView(invocation.screen)
    # Checked before connecting, so that nothing is kept or sent for a profile we cannot save.
    profile = (
        invocation.resolved.to_profile(save, save_secrets=save_secrets)
        if save is not None
        else None
    )
    with invocation.client() as client:
        others, problems = client.survey()
        transport = client.transport
        connection = Connection(
            client.server, transport.kind, transport.target, transport.session_id, others, problems
        )
    if profile is not None:
        saved = replace(profile, session_id=connection.session_id if profile.keep_session else None)
        profiles.save_profile(invocation.profiles_path, saved, make_default=default)
        invocation.screen.note(
            f"saved profile {saved.name!r} in {invocation.profiles_path}"
            + (" (the default)" if default else "")
        )
    view.show(connection)

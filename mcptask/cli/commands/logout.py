"""`mcptask logout`: forget the tokens kept for a server (or for every server)."""

from __future__ import annotations

from dataclasses import replace
from typing import Annotated

import typer

from mcptask.cli.invocation import Invocation
from mcptask.cli.options import Common, with_server_options
from mcptask.errors import UsageError


@with_server_options
def logout(
    target: Annotated[
        str | None, typer.Argument(help="The server URL (else --url, --profile or MCPTASK_URL).")
    ] = None,
    every: Annotated[
        bool,
        typer.Option("--all", help="Forget every token and registered client of this machine."),
    ] = False,
    *,
    common: Common,
) -> None:
    """Forget the tokens mcptask keeps for a server (sends nothing to the server)."""
    from mcptask.auth.discovery import canonical_resource
    from mcptask.output.screen import Screen
    from mcptask.output.views.logout import LogoutView, SignedOut
    from mcptask.store import tokens

    if target is not None:
        if common.url or common.server or common.profile or every:
            raise UsageError("give the server either as TARGET, with --url/--profile, or --all")
        common = replace(common, url=target)
    path = tokens.tokens_path()
    if every:
        if common.url or common.server or common.profile:
            raise UsageError("--all forgets every server's tokens: give no server with it")
        try:
            screen = Screen(common.output, color=not common.no_color)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        LogoutView(screen).show(SignedOut(None, tokens.forget_all(path), path))
        return
    invocation = Invocation(common)
    url = invocation.settings.url
    if url is None:
        raise UsageError("logout forgets the tokens of Streamable HTTP servers: give a URL")
    view = LogoutView(invocation.screen)
    view.show(SignedOut(url, tokens.forget_server(path, canonical_resource(url)), path))

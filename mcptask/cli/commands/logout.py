"""`mcptask logout`: forget the tokens kept for a server (or for every server)."""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Annotated

import typer

from mcptask.cli.invocation import screen_for
from mcptask.cli.options import Common, ServerUrlArgument, with_server_options
from mcptask.errors import UsageError


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
    from mcptask.cli.settings import ENV_URL, profile_in_use
    from mcptask.store import profiles
    from mcptask.transport.redact import display_url

    profile = profile_in_use(common, lambda: profiles.load(profiles.profiles_path()), os.environ)
    url = common.url or (profile.url if profile else None) or os.environ.get(ENV_URL)
    if common.server or (profile is not None and profile.server) or not url:
        raise UsageError("logout forgets the tokens of Streamable HTTP servers: give a URL")
    if not url.lower().startswith(("http://", "https://")):  # schemes know no case
        raise UsageError(f"invalid server URL {display_url(url)!r}: expected http(s)://HOST/PATH")
    return url

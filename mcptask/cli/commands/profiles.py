"""`mcptask profiles`: the saved servers; delete one, or choose the default."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Annotated

import typer

from mcptask.cli.completion import complete_profile
from mcptask.cli.options import OutputOption
from mcptask.errors import UsageError

if TYPE_CHECKING:
    from mcptask.store.profiles import ProfileBook


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
    output: OutputOption = None,
    no_color: Annotated[bool, typer.Option("--no-color", help="No colours (also NO_COLOR).")] = (
        False
    ),
) -> None:
    """List the saved profiles (mcptask connect TARGET --save NAME saves one)."""
    from mcptask.cli.invocation import screen_for
    from mcptask.output.views.saved import ProfilesView
    from mcptask.store import profiles as store

    screen = screen_for(output, no_color=no_color)
    view = ProfilesView(screen)
    path = store.profiles_path()
    if delete is not None and default is not None:
        raise UsageError("give either --delete or --default, not both")
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

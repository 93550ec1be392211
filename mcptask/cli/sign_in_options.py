"""The sign-in options every server command takes (gathered into `Common` by options.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

AuthOption = Annotated[
    str | None,
    typer.Option(
        "--auth",
        metavar="METHOD",
        help="Sign-in: auto (cached token, else sign in as configured; the default), none, "
        "client-credentials (CI: never a browser) or browser (env MCPTASK_AUTH).",
        rich_help_panel="Sign-in",
    ),
]
ClientIdOption = Annotated[
    str | None,
    typer.Option(
        "--client-id",
        metavar="ID",
        help="OAuth client id registered for mcptask (env MCPTASK_CLIENT_ID).",
        rich_help_panel="Sign-in",
    ),
]
ClientSecretFileOption = Annotated[
    Path | None,
    typer.Option(
        "--client-secret-file",
        help="Read the OAuth client secret from this file (else MCPTASK_CLIENT_SECRET).",
        dir_okay=False,
        rich_help_panel="Sign-in",
    ),
]
ClientKeyFileOption = Annotated[
    Path | None,
    typer.Option(
        "--client-key-file",
        help="PEM private key: sign in with a JWT assertion, private_key_jwt "
        "(env MCPTASK_CLIENT_KEY_FILE).",
        dir_okay=False,
        rich_help_panel="Sign-in",
    ),
]
ScopeOption = Annotated[
    str | None,
    typer.Option(
        "--scope",
        help="Scopes to ask for, space-separated (default: what the server asks for).",
        rich_help_panel="Sign-in",
    ),
]
NoBrowserOption = Annotated[
    bool,
    typer.Option(
        "--no-browser",
        help="Print the sign-in URL instead of opening a browser.",
        rich_help_panel="Sign-in",
    ),
]

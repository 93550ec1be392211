"""Shell completion's values that live on this machine: profile names (the profiles file)
and known task ids (the record of known tasks). Nothing goes over the network, and neither
httpx nor Rich is imported; Typer and Click do the rest of each TAB."""

from __future__ import annotations

import os

import typer


def complete_profile(incomplete: str) -> list[str]:
    """Saved profile names that start with `incomplete`."""
    from mcptask.store.paths import profile_names

    return [name for name in profile_names() if name.startswith(incomplete)]


def complete_task_id(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    """Recorded task ids that start with `incomplete`, each with its last status: those of
    the server on the command line (or in MCPTASK_URL / MCPTASK_SERVER), else of every
    server. An id with control characters is not offered (the shell would print them), and
    a status is shown cleaned."""
    from mcptask.output.sanitize import clean
    from mcptask.store.database import complete_task_ids
    from mcptask.store.identity import ServerIdentity

    url = ctx.params.get("url") or os.environ.get("MCPTASK_URL")
    command = ctx.params.get("server") or os.environ.get("MCPTASK_SERVER")
    identity: ServerIdentity | None = None
    try:
        if url:
            identity = ServerIdentity.for_url(url)
        elif command:
            identity = ServerIdentity.for_command(command)
    except ValueError:
        identity = None
    return [
        (task_id, clean(status) if status else "")
        for task_id, status in complete_task_ids(os.environ, identity, incomplete)
        if clean(task_id) == task_id
    ]

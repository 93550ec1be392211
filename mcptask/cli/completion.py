"""Shell completion of task ids from the record of known tasks.

It runs at every Tab: it reads the SQLite record directly, makes no network call and imports
neither httpx, pydantic nor Rich (only `mcptask.store`, which is standard library).
"""

from __future__ import annotations

import os

import typer


def complete_task_id(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    """Recorded task ids that start with `incomplete`, each with its last status: those of
    the server on the command line (or in MCPTASK_URL / MCPTASK_SERVER), else of every
    server."""
    from mcptask.store.identity import ServerIdentity
    from mcptask.store.known import complete_task_ids

    params = ctx.params
    url = params.get("url") or os.environ.get("MCPTASK_URL")
    command = params.get("server") or os.environ.get("MCPTASK_SERVER")
    identity: ServerIdentity | None = None
    try:
        if isinstance(url, str) and url:
            identity = ServerIdentity.for_url(url)
        elif isinstance(command, str) and command:
            identity = ServerIdentity.for_command(command)
    except ValueError:
        identity = None
    return complete_task_ids(os.environ, identity, incomplete)


complete_task_id.completion_source = "task"  # type: ignore[attr-defined]
"""The fast completion path (mcptask/completion.py) knows these values by this name."""

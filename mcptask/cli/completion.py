"""Shell completion of task ids from the record of known tasks.

It runs at every Tab: it reads the SQLite record directly, makes no network call and imports
neither httpx, pydantic nor Rich (only `mcptask.store`, which is standard library).
"""

from __future__ import annotations

import typer


def complete_task_id(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    """Recorded task ids that start with `incomplete`, each with its last status: those of
    the server on the command line (or in MCPTASK_URL / MCPTASK_SERVER), else of every
    server. The same answer as the fast path's (`mcptask.completion`), which it asks."""
    from mcptask.completion import SOURCES

    given = {
        option: value
        for option, value in (
            ("--url", ctx.params.get("url")),
            ("--server", ctx.params.get("server")),
        )
        if isinstance(value, str) and value
    }
    return [(value, status or "") for value, status in SOURCES["task"](incomplete, given)]


complete_task_id.completion_source = "task"  # type: ignore[attr-defined]
"""The fast completion path (mcptask/completion.py) knows these values by this name."""

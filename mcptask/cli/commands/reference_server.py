"""`mcptask reference-server`: the embedded reference MCP tasks server."""

from __future__ import annotations

import typer


def reference_server(ctx: typer.Context) -> None:
    """Run the embedded reference MCP tasks server (--http HOST:PORT or --stdio; --help)."""
    from mcptask.reference_server import main as serve

    raise typer.Exit(serve(list(ctx.args)))

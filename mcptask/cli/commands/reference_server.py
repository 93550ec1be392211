"""`mcptask reference-server`: the embedded reference MCP tasks server."""

from __future__ import annotations

import gc

import typer


def reference_server(ctx: typer.Context) -> None:
    """Run the embedded reference MCP tasks server (--http HOST:PORT or --stdio; --help)."""
    from mcptask.cli import collector
    from mcptask.reference_server import main as serve

    # A server runs for long: start-up's garbage goes before the rest is frozen, and the
    # collector keeps its usual pace.
    gc.collect()
    collector.started()
    raise typer.Exit(serve(list(ctx.args)))

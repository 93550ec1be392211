"""The embedded MCP reference server (`mcptask reference-server`).

A small, spec-faithful MCP tasks server built on the standard library only: a demo target for
every mcptask command and the fixture of the test suite. It speaks 2025-11-25 and 2026-07-28
with the `io.modelcontextprotocol/tasks` extension, selected per request like a dual-era
server (--protocol-eras). docs/architecture.md maps its modules.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from mcptask.reference_server.cli_options import PROG, UsageError, parse_config

if TYPE_CHECKING:
    from mcptask.reference_server.scripting import ToolSet
    from mcptask.reference_server.store import TaskStore


def main(
    argv: Sequence[str] | None = None,
    tools: ToolSet | None = None,
    store_type: type[TaskStore] | None = None,
) -> int:
    """Run the reference server with `argv` (default: sys.argv[1:]), offering `tools`
    besides long_job, its tasks in a `store_type` (default TaskStore); returns the exit
    status. The test suite gives both (tests/conformance/fixture_server.py)."""
    try:
        config = replace(parse_config(argv), tools=tools)
    except UsageError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # --help
        return exc.code if isinstance(exc.code, int) else 0
    # Imported here so that `--help` does not load the server machinery.
    from mcptask.reference_server.server import run

    return run(config, store_type=store_type)


__all__ = ["main"]

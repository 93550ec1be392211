"""The embedded MCP reference server (`mcptask reference-server`).

A small, spec-faithful MCP tasks server built on the standard library only: a demo target for
every mcptask command and the fixture of the test suite. It speaks 2025-11-25 (tasks in the
core protocol, initialize, sessions) and 2026-07-28 with the `io.modelcontextprotocol/tasks`
extension (stateless requests with per-request `_meta`), selected per request like a dual-era
server (--protocol-eras). Layout:

- cli_options / config: command line -> ServerConfig (and the OAuth demo's OAuthConfig)
- scripting: task scripts, --seed, --tasks-file (server.populate fills the store)
- store (+ records, clock): the tasks, shared by all sessions and both
  eras; timed changes on an injectable clock, ttl, cancel, input
- rpc / wire: JSON-RPC envelopes; what both eras write alike (the Task object, taskId,
  errors)
- tools: the long_job tool, and ToolSet, the interface of tools given in code
  (ServerConfig.tools: the test suite's conformance fixtures)
- eras/: the protocol logic of each era: legacy (LegacyDispatcher, 2025-11-25), modern
  (+ modern_wire, subscriptions: ModernDispatcher, 2026-07-28 + tasks extension, listen
  streams), and router, which decides each message's era, once, for both transports
- http/ and stdio: the wire, over the router
- oauth/: the OAuth 2.1 authorization server of --oauth
- faults: deliberately broken answers (--fault) and the fault switches (--fault-rate,
  --die-after: a FaultPlan that the transports apply), with their command line
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from mcptask.reference_server.cli_options import PROG, UsageError, parse_config

if TYPE_CHECKING:
    from mcptask.reference_server.store import TaskStore
    from mcptask.reference_server.tools import ToolSet


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

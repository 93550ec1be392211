"""The embedded MCP reference server (`mcptask reference-server`).

A small, spec-faithful MCP tasks server built on the standard library only: a demo target for
every mcptask command and the fixture of the test suite. It speaks 2025-11-25 (tasks in the
core protocol, initialize, sessions) and 2026-07-28 with the `io.modelcontextprotocol/tasks`
extension (stateless requests with per-request `_meta`), selected per request like a dual-era
server (--protocol-eras). Layout:

- options / config (+ fault_options): command line -> ServerConfig
- scripting / seeding: task scripts, --seed, --tasks-file
- store (+ records, creation_order, timers, workers, clock): the tasks, shared by all
  sessions and both eras; timed changes on an injectable clock, ttl, cancel, input
- jsonrpc / wire / calls: JSON-RPC envelopes; what both eras write alike (the Task
  object, taskId, errors); tools/list and tools/call plumbing
- legacy: LegacyDispatcher, the protocol logic of 2025-11-25
- modern (+ modern_wire, request_state, subscriptions): ModernDispatcher, 2026-07-28 +
  tasks extension, listen streams
- router: decides each message's era, once, for both transports
- tools / calls: the long_job tool; tools/list and tools/call, and the interface of tools
  given in code (ServerConfig.tools: the test suite's conformance fixtures)
- http_transport/ and stdio_transport: the wire, over the router
- faults: deliberately broken answers (--fault) and the fault switches (--fault-rate,
  --die-after: a FaultPlan that the transports apply) for client tests
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from mcptask.reference_server.options import PROG, UsageError, parse_config

if TYPE_CHECKING:
    from mcptask.reference_server.calls import Tool


def main(argv: Sequence[str] | None = None, tools: Sequence[Tool] = ()) -> int:
    """Run the reference server with `argv` (default: sys.argv[1:]), offering `tools`
    besides long_job; returns the exit status."""
    try:
        config = replace(parse_config(argv), tools=tuple(tools))
    except UsageError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except SystemExit as exc:  # --help
        return exc.code if isinstance(exc.code, int) else 0
    # Imported here so that `--help` does not load the server machinery.
    from mcptask.reference_server.server import run

    return run(config)


__all__ = ["main"]

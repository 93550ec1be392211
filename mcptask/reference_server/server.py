"""Wire the pieces together and run one server process until it is told to stop."""

from __future__ import annotations

import logging
import signal
import sys
from collections.abc import Callable
from types import FrameType

from mcptask.reference_server.cli_options import PROG
from mcptask.reference_server.config import ServerConfig
from mcptask.reference_server.eras.router import Router
from mcptask.reference_server.faults import FaultPlan
from mcptask.reference_server.http import serve_http
from mcptask.reference_server.seeding import populate
from mcptask.reference_server.stdio import StdioServer
from mcptask.reference_server.store import TaskStore


class _Stop(BaseException):
    """Raised in the main thread by SIGTERM/SIGINT to unwind and exit cleanly.

    A BaseException, like KeyboardInterrupt: socketserver catches every Exception raised
    while it starts a request's thread (and carries on serving), and the signal may land
    just then.
    """


def _raise_stop(signum: int, frame: FrameType | None) -> None:
    raise _Stop


def _announce(url: str) -> None:
    print(f"mcptask reference server listening on {url}", flush=True)


def _configure_logging(config: ServerConfig) -> None:
    logger = logging.getLogger("mcptask.reference_server")
    if not logger.handlers:
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("mcptask-reference: %(message)s"))
        logger.addHandler(handler)
        logger.propagate = False
    logger.setLevel(logging.INFO if config.log_requests else logging.WARNING)


def run(config: ServerConfig, announce: Callable[[str], None] = _announce) -> int:
    """Run the server described by `config`; returns the process exit status."""
    _configure_logging(config)
    store = TaskStore()
    try:
        try:
            populate(store, config)
        except ValueError as exc:
            print(f"{PROG}: error: {exc}", file=sys.stderr)
            return 2
        router = Router(config, store)
        plan = FaultPlan(config.fault_switches)
        plan.announce()
        previous = {sig: signal.signal(sig, _raise_stop) for sig in (signal.SIGTERM, signal.SIGINT)}
        try:
            if config.stdio:
                return StdioServer(
                    config, router, store, sys.stdin.buffer, sys.stdout.buffer, plan
                ).serve()
            serve_http(config, router, store, announce, plan)
            return 0
        except (_Stop, KeyboardInterrupt):
            return 0
        except OSError as exc:
            print(
                f"{PROG}: error: cannot listen on {config.host}:{config.port}: {exc.strerror}",
                file=sys.stderr,
            )
            return 1
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
    finally:
        store.close()

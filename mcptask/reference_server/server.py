"""Wire the pieces together and run one server process until it is told to stop; fill its
fresh task store from --seed, --tasks-file and --complete-on-cancel first (populate)."""

from __future__ import annotations

import logging
import signal
import sys
from collections.abc import Callable
from dataclasses import replace
from datetime import timedelta
from types import FrameType

from mcptask.reference_server.cli_options import PROG
from mcptask.reference_server.config import ServerConfig
from mcptask.reference_server.eras.router import Router
from mcptask.reference_server.faults import FaultPlan
from mcptask.reference_server.http.policy import is_loopback
from mcptask.reference_server.http.server import serve_http
from mcptask.reference_server.scripting import OnCancel
from mcptask.reference_server.stdio import StdioServer
from mcptask.reference_server.store import TaskStore


class _Stop(BaseException):
    """Raised in the main thread by SIGTERM/SIGINT to unwind and exit cleanly (serve_http
    handles the signals itself); like KeyboardInterrupt, no `except Exception` swallows it."""


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


def run(
    config: ServerConfig,
    announce: Callable[[str], None] = _announce,
    store_type: type[TaskStore] | None = None,
) -> int:
    """Run the server described by `config` (its tasks in a `store_type`, default
    TaskStore); returns the process exit status."""
    _configure_logging(config)
    store = (store_type or TaskStore)()
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
            _warn_if_open(config)
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


def _warn_if_open(config: ServerConfig) -> None:
    """A server other machines can reach, with no bearer check, serves its tasks to all."""
    if is_loopback(config.host) or config.oauth is not None or config.require_token:
        return
    print(
        f"{PROG}: warning: listening on {config.host}, which other machines may reach, "
        "without --oauth or --require-token: anyone who reaches it can list, read and "
        "cancel its tasks",
        file=sys.stderr,
        flush=True,
    )


# -- populating the store --------------------------------------------------------------

# Seeded tasks pretend to have been created one minute apart, the newest a minute ago.
SEED_SPACING = timedelta(minutes=1)
SEED_UPDATE_AFTER = timedelta(seconds=30)

_SEED_MESSAGES = {
    "working": "Processing step {n}",
    "input_required": "Waiting for input (question {n})",
    "completed": "Finished",
    "failed": "Failed: simulated error {n}",
    "cancelled": "Cancelled by client",
}


def populate(store: TaskStore, config: ServerConfig) -> None:
    """Create the seeded and scripted tasks (seeded timestamps count back from the store's
    clock); raise ValueError for conflicting ids."""
    total = sum(count for _, count in config.seed)
    start = store.clock.now()
    index = 0
    complete = OnCancel(kind="complete")  # --complete-on-cancel
    ids: set[str | None] = set()
    for status, count in config.seed:
        for number in range(1, count + 1):
            index += 1
            created = start - SEED_SPACING * (total - index + 1)
            task_id = f"{status}-{number:03d}"  # working-001, ...
            store.create(
                task_id=task_id,
                status=status,
                status_message=_SEED_MESSAGES[status].format(n=number),
                ttl_ms=config.ttl_ms,
                created_at=created,
                last_updated_at=created + SEED_UPDATE_AFTER,
                on_cancel=complete if task_id in config.complete_on_cancel else None,
            )
            ids.add(task_id)
    for scripted in config.scripted_tasks:
        if scripted.task_id in config.complete_on_cancel:
            scripted = replace(scripted, on_cancel=complete)
        store.start(scripted, scripted.ttl_ms if scripted.has_ttl else config.ttl_ms)
        ids.add(scripted.task_id)
    unknown = sorted(config.complete_on_cancel - ids)
    if unknown:
        raise ValueError(f"--complete-on-cancel: no seeded or scripted task {unknown[0]!r}")

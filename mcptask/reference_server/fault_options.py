"""The fault switches on the command line: --fault-rate and its companions, --die-after.

Their --help text is the reference for what each kind does on HTTP and on stdio.
"""

from __future__ import annotations

import argparse
import math
from collections.abc import Callable

from mcptask.reference_server.config import (
    DEFAULT_OVERSIZE_BYTES,
    HTTP_ONLY_KINDS,
    STDIO_KINDS,
    FaultKind,
    FaultSwitches,
)
from mcptask.reference_server.faults import DIE_STATUS

DEFAULTS = FaultSwitches()

DESCRIPTION = """\
Transient faults in a share of the task requests, for testing clients; all off by default.
Task requests: every JSON-RPC request whose method starts with tasks/ (2025-11-25: tasks/get, \
tasks/list, tasks/cancel, tasks/result; 2026-07-28: tasks/get, tasks/cancel, tasks/update); \
never initialize, server/discover, tools/*, notifications, nor HTTP GET or DELETE. Each one \
draws one number from random.Random(--fault-seed): the same seed and the same requests give \
the same faults.
- busy: HTTP 503 with Retry-After (--fault-retry-after); the request is not handled. HTTP only.
- rate-limited: HTTP 429 with Retry-After; not handled. HTTP only.
- reset: the connection is reset (TCP RST) before the request is handled. stdio: the request \
line is dropped unhandled and never answered.
- lost: the request is handled (a cancel takes effect), then the connection is closed \
without an answer. stdio: handled, and no answer line.
- sse-cut: in 2025-11-25 sessions, an SSE answer (whatever --answer says) closed after its \
priming event (an id, and retry: --fault-retry-after x 1000 ms) before the response, which a \
GET with Last-Event-ID then delivers. 2026-07-28 streams cannot be resumed: there the stream \
ends empty and the answer is lost. HTTP only.
- slow: handled at once, answered --fault-delay later. stdio: that answer line comes late \
(other lines are read and answered meanwhile).
- oversized: an answer over --fault-oversize bytes (padding in result._meta, or error.data), \
written in pieces: a JSON body with its Content-Length, an SSE event in a chunked stream, a \
stdio line.
Naming an HTTP-only kind with --stdio is a usage error."""


def _number(convert: Callable[[str], float], low: float, high: float | None, what: str) -> type:
    def parse(text: str) -> float:
        value = convert(text)
        if not math.isfinite(value) or value < low or (high is not None and value > high):
            raise ValueError(text)
        return value

    parse.__name__ = what
    return parse  # type: ignore[return-value]


def _kinds(text: str) -> tuple[FaultKind, ...]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    known = {kind.value: kind for kind in FaultKind}
    unknown = [name for name in names if name not in known]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown fault kind {', '.join(unknown) or text!r}; choose from {', '.join(known)}"
        )
    return tuple(dict.fromkeys(known[name] for name in names))


def add_fault_switches(parser: argparse.ArgumentParser) -> None:
    """Declare the fault switches (their own --help group)."""
    group = parser.add_argument_group("fault switches", DESCRIPTION)
    group.add_argument(
        "--fault-rate",
        type=_number(float, 0.0, 1.0, "number from 0 to 1"),
        metavar="P",
        help="the share of task requests that get a fault, 0 to 1 (default 0: none)",
    )
    group.add_argument(
        "--fault-kind",
        type=_kinds,
        metavar="KIND[,KIND...]",
        help="which kinds, drawn evenly: " + ", ".join(kind.value for kind in FaultKind) + " "
        "(default: all; with --stdio: " + ", ".join(kind.value for kind in STDIO_KINDS) + ")",
    )
    group.add_argument(
        "--fault-seed",
        type=int,
        metavar="N",
        help="seed of the draws (default: a random one, logged at start)",
    )
    group.add_argument(
        "--fault-retry-after",
        type=_number(int, 0, None, "integer >= 0"),
        default=DEFAULTS.retry_after_s,
        metavar="SECONDS",
        help="Retry-After of busy and rate-limited, retry: of sse-cut (x1000 ms) "
        f"(default {DEFAULTS.retry_after_s})",
    )
    group.add_argument(
        "--fault-delay",
        type=_number(int, 0, None, "integer >= 0"),
        default=DEFAULTS.delay_ms,
        metavar="MS",
        help=f"how late a slow answer comes (default {DEFAULTS.delay_ms})",
    )
    group.add_argument(
        "--fault-oversize",
        type=_number(int, 1, None, "integer >= 1"),
        default=DEFAULT_OVERSIZE_BYTES,
        metavar="BYTES",
        help="an oversized answer is larger than this (default "
        f"{DEFAULT_OVERSIZE_BYTES}: 33 MiB, over mcptask's 32 MiB bound)",
    )
    group.add_argument(
        "--die-after",
        type=_number(int, 1, None, "integer >= 1"),
        metavar="N",
        help="count the requests the server answers (any method, initialize and "
        "server/discover included; not notifications, nor requests refused by a fault or an "
        "HTTP check); the Nth is handled but never answered: the process exits at once with "
        f"status {DIE_STATUS} and a last line on stderr naming that request (stdio and HTTP)",
    )


def fault_switches(args: argparse.Namespace) -> FaultSwitches:
    """The switches the parsed command line sets; ValueError for combinations that make no
    sense (a kind with no meaning on the transport, kinds or a seed without a rate)."""
    if args.fault_rate is None and (args.fault_kind is not None or args.fault_seed is not None):
        raise ValueError("--fault-kind and --fault-seed need --fault-rate")
    kinds: tuple[FaultKind, ...] = args.fault_kind or (
        STDIO_KINDS if args.stdio else tuple(FaultKind)
    )
    if args.stdio:
        http_only = [kind.value for kind in kinds if kind in HTTP_ONLY_KINDS]
        if http_only:
            raise ValueError(
                f"--fault-kind {','.join(http_only)}: HTTP-only (stdio has "
                + ", ".join(kind.value for kind in STDIO_KINDS)
                + ")"
            )
    return FaultSwitches(
        rate=args.fault_rate or 0.0,
        kinds=kinds,
        seed=args.fault_seed,
        retry_after_s=args.fault_retry_after,
        delay_ms=args.fault_delay,
        oversize_bytes=args.fault_oversize,
        die_after=args.die_after,
    )

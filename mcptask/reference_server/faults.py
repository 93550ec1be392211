"""Faults for client tests, with their command line. --fault breaks every answer to tasks/*
requests in one way (a protocol violation). The fault switches make a share of the task
requests fail transiently, and end the process after a number of answers (--die-after): a
FaultPlan draws the fault of each task request and counts the answers; the transports apply
what it drew (DESCRIPTION says what each kind means on HTTP and on stdio).
"""

from __future__ import annotations

import argparse
import itertools
import logging
import os
import secrets
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from random import Random
from typing import NoReturn

from mcptask.reference_server.config import (
    HTTP_ONLY_KINDS,
    STDIO_KINDS,
    Fault,
    FaultKind,
    FaultSwitches,
)
from mcptask.reference_server.scripting import bounded
from mcptask.reference_server.wire import JsonObject, MessageKind, classify, encode_message

# The exit status of a process that --die-after ended (EX_SOFTWARE of sysexits.h).
DIE_STATUS = 70
# Where an oversized answer carries its padding: `_meta` of the result, `data` of an error.
PADDING_KEY = "mcptask-reference/padding"
# Oversized answers are written in pieces of this size, never built whole in memory.
PIECE_BYTES = 64 * 1024

log = logging.getLogger("mcptask.reference_server")

# The bytes sent instead of the answer; the other faults keep the answer's shape (wrong-id
# alters the message; drop sends nothing).
REPLACEMENT_BODIES = {
    Fault.NOT_JSON: b"this is not json",
    Fault.NOT_JSONRPC: b'{"hello": "world"}',
    Fault.WRONG_CONTENT_TYPE: b"<html><body>This is not an MCP answer.</body></html>",
}


def tampered(
    fault: Fault | None, method: object, response: JsonObject
) -> JsonObject | bytes | None:
    """What --fault sends for `response` to `method`: the response itself unless it answers
    a tasks/* request, else the bytes sent instead, the response with a wrong id, or None
    (drop: no answer at all)."""
    if fault is None or not isinstance(method, str) or not method.startswith("tasks/"):
        return response
    if fault is Fault.DROP:
        return None
    if fault is Fault.WRONG_ID:
        msg_id = response.get("id")
        wrong = msg_id + 1_000_000 if isinstance(msg_id, int) else f"{msg_id}-wrong"
        return {**response, "id": wrong}
    return REPLACEMENT_BODIES[fault]


def describe(message: object) -> str:
    """A request as the server's log names it: `tasks/cancel working-004 (id 9)`."""
    if not isinstance(message, dict):
        return "a message"
    params = message.get("params")
    task_id = params.get("taskId") if isinstance(params, dict) else None
    method = message.get("method")
    name = f"{method} {task_id}" if isinstance(task_id, str) else str(method)
    return f"{name} (id {message.get('id')!r})"


class FaultPlan:
    """The faults of one server run: which task request gets which fault, and when the
    process dies. Thread-safe. Each task request draws exactly one number u from
    `Random(seed)`: it gets a fault when u < rate, of kind `kinds[int(u / rate * n)]`."""

    def __init__(
        self, switches: FaultSwitches, *, sleep: Callable[[float], object] = time.sleep
    ) -> None:
        self.switches = switches
        self.sleep = sleep  # holds a slow answer back in real time, whatever the store's clock
        self.seed = switches.seed if switches.seed is not None else secrets.randbelow(2**31)
        self._random = Random(self.seed)
        self._lock = threading.Lock()
        self._drawn = 0
        self._answered = 0

    def announce(self) -> None:
        """Log what is switched on, with the seed (a warning: shown without --log)."""
        switches = self.switches
        if not switches.active:
            return
        parts = []
        if switches.rate > 0:
            kinds = ",".join(kind.value for kind in switches.kinds)
            parts.append(f"a {switches.rate:g} share of tasks/* requests get a fault of {kinds}")
            parts.append(f"--fault-seed {self.seed}")
        if switches.die_after is not None:
            parts.append(f"the process dies at answer {switches.die_after} (--die-after)")
        log.warning("fault switches on: %s", "; ".join(parts))

    def draw(self, message: object) -> FaultKind | None:
        """The fault of this request, if it gets one (only requests of tasks/* may)."""
        rate = self.switches.rate
        if rate <= 0 or classify(message) is not MessageKind.REQUEST:
            return None
        assert isinstance(message, dict)
        if not message["method"].startswith("tasks/"):
            return None
        kinds = self.switches.kinds
        with self._lock:
            self._drawn += 1
            number = self._drawn
            u = self._random.random()
            if u >= rate:
                return None
            kind = kinds[min(int(u / rate * len(kinds)), len(kinds) - 1)]
        log.info("fault %s on task request %d: %s", kind.value, number, describe(message))
        return kind

    def answering(self, message: object) -> str | None:
        """Count one answered request (--die-after). None while the process lives on; for
        the last one, the line to print before exiting without answering it."""
        limit = self.switches.die_after
        if limit is None:
            return None
        with self._lock:
            self._answered += 1
            if self._answered < limit:
                return None
        return (
            f"--die-after {limit}: handled request {limit}, {describe(message)}, and exiting "
            f"with status {DIE_STATUS} without answering it"
        )


def die(last_words: str) -> NoReturn:
    """End the process at once, like a crash, after one line on stderr."""
    print(f"mcptask reference-server: {last_words}", file=sys.stderr, flush=True)
    os._exit(DIE_STATUS)


@dataclass(frozen=True)
class PaddedAnswer:
    """A response made larger than `at_least` bytes with padding (a valid JSON-RPC message
    when read whole): `head`, then `size - len(head) - len(tail)` bytes of `x`, `tail`."""

    head: bytes
    tail: bytes
    size: int

    def write(
        self, write: Callable[[bytes], object], before: bytes = b"", after: bytes = b""
    ) -> None:
        """Write it in pieces between `before` and `after` (framing) and log how much of it
        the client took; OSError when it went away."""
        full, rest = divmod(self.size - len(self.head) - len(self.tail), PIECE_BYTES)
        padding = itertools.repeat(b"x" * PIECE_BYTES, full)
        pieces = itertools.chain([before, self.head], padding, [b"x" * rest, self.tail, after])
        written = 0
        try:
            for piece in pieces:
                if piece:
                    write(piece)
                written += len(piece)
        except OSError:
            log.info(
                "oversized answer: the client went away after %d of its %d bytes",
                written,
                self.size,
            )
            raise
        log.info("oversized answer: all %d bytes written", self.size)


def padded(response: JsonObject, at_least: int) -> PaddedAnswer:
    """`response` with padding in result._meta (or error.data), over `at_least` bytes."""
    marker = "@@mcptask-reference-padding@@"
    copy = dict(response)
    if isinstance(copy.get("result"), dict):
        result = dict(copy["result"])
        meta = result.get("_meta")
        result["_meta"] = {**(meta if isinstance(meta, dict) else {}), PADDING_KEY: marker}
        copy["result"] = result
    elif isinstance(copy.get("error"), dict):
        copy["error"] = {**copy["error"], "data": {PADDING_KEY: marker}}
    else:
        copy[PADDING_KEY] = marker
    encoded = encode_message(copy).encode()
    head, _, tail = encoded.partition(marker.encode())
    size = max(at_least + 1, len(head) + len(tail))
    return PaddedAnswer(head, tail, size)


# -- the command line of the fault switches ------------------------------------------------

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
    group = parser.add_argument_group("fault switches", DESCRIPTION)
    group.add_argument(
        "--fault-rate",
        type=bounded(float, 0.0, 1.0, "number from 0 to 1"),
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
        type=bounded(int, 0),
        default=FaultSwitches.retry_after_s,
        metavar="SECONDS",
        help="Retry-After of busy and rate-limited, retry: of sse-cut (x1000 ms) "
        f"(default {FaultSwitches.retry_after_s})",
    )
    group.add_argument(
        "--fault-delay",
        type=bounded(int, 0),
        default=FaultSwitches.delay_ms,
        metavar="MS",
        help=f"how late a slow answer comes (default {FaultSwitches.delay_ms})",
    )
    group.add_argument(
        "--fault-oversize",
        type=bounded(int, 1),
        default=FaultSwitches.oversize_bytes,
        metavar="BYTES",
        help="an oversized answer is larger than this (default "
        f"{FaultSwitches.oversize_bytes}: 33 MiB, over mcptask's 32 MiB bound)",
    )
    group.add_argument(
        "--die-after",
        type=bounded(int, 1),
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
            stdio_has = ", ".join(STDIO_KINDS)
            raise ValueError(
                f"--fault-kind {','.join(http_only)}: HTTP-only (stdio has {stdio_has})"
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

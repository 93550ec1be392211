"""The command line of `mcptask reference-server`: argparse definition and validation (the
fault switches' own group is in faults.py)."""

from __future__ import annotations

import argparse
import textwrap
from collections.abc import Sequence
from dataclasses import fields, replace
from pathlib import Path
from typing import NoReturn

from mcptask.reference_server.config import (
    AnswerMode,
    CancelMode,
    Fault,
    ProtocolEras,
    Scope,
    ServerConfig,
    add_access_arguments,
    oauth_config,
    required_token,
)
from mcptask.reference_server.faults import add_fault_switches, fault_switches
from mcptask.reference_server.scripting import (
    ScriptedTask,
    bounded,
    parse_seed,
    parse_tasks_file,
)

PROG = "mcptask reference-server"
# The defaults are ServerConfig's (its class attributes): an option left out stays None.
DEFAULT_HTTP = f"{ServerConfig.host}:{ServerConfig.port}"


class UsageError(Exception):
    """A bad command line; main() prints it as one line and exits 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        # One line instead of argparse's usage block: scripts and tests read stderr.
        raise UsageError(f"{message} (see --help)")


class _Formatter(argparse.HelpFormatter):
    """argparse's formatter, keeping the line breaks of descriptions: each line is wrapped
    as a paragraph of its own (a "- " line hangs under its dash)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        return "\n".join(
            textwrap.fill(
                line,
                width,
                initial_indent=indent,
                subsequent_indent=indent + ("  " if line.startswith("- ") else ""),
            )
            for line in text.splitlines()
        )


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog=PROG,
        formatter_class=_Formatter,
        description=(
            "Run the embedded MCP reference server: a small, spec-faithful MCP tasks server "
            "(2025-11-25, and 2026-07-28 with the io.modelcontextprotocol/tasks extension) "
            "used as a demo target and as a test fixture. Over HTTP it prints one line with "
            "its endpoint URL on stdout; logs go to stderr."
        ),
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--http",
        metavar="HOST:PORT",
        help=f"serve Streamable HTTP on HOST:PORT at /mcp (default {DEFAULT_HTTP}; "
        "port 0 picks a free port)",
    )
    where.add_argument("--stdio", action="store_true", help="serve newline-delimited JSON-RPC")
    parser.add_argument(
        "--protocol-eras",
        choices=[eras.value for eras in ProtocolEras],
        default=ProtocolEras.BOTH.value,
        help="legacy: 2025-11-25 only (initialize, sessions); modern: 2026-07-28 with the "
        "tasks extension only (per-request _meta, server/discover); both: a dual-era server "
        "that picks the era per request (default %(default)s)",
    )

    tasks = parser.add_argument_group("tasks")
    tasks.add_argument(
        "--seed",
        metavar="SPEC",
        help="seed tasks, e.g. working=20,completed=5,failed=2,cancelled=1,input_required=3; "
        "ids are STATUS-NNN (working-001, ...)",
    )
    tasks.add_argument(
        "--tasks-file",
        metavar="FILE",
        help='JSON list of scripted tasks: {"taskId", "status", "statusMessage", '
        '"steps": [[delaySeconds, status, message], ...], "onCancel", "ttl", "awaitInput", '
        '"askUrl"}; awaitInput: a step into input_required pauses the script until its '
        "question is answered (a form with one text field; with askUrl, a URL to visit)",
    )
    tasks.add_argument(
        "--ttl",
        type=bounded(int, 0),
        dest="ttl_ms",
        metavar="MS",
        help="ttl of seeded and scripted tasks, of task-augmented calls without a ttl and of "
        "2026-07-28 tasks (default: unlimited); counted from server start for seeded tasks",
    )
    tasks.add_argument(
        "--poll-interval",
        type=bounded(int, 0),
        dest="poll_interval_ms",
        metavar="MS",
        help=f"pollInterval reported on every task (default {ServerConfig.poll_interval_ms})",
    )
    tasks.add_argument(
        "--page-size",
        type=bounded(int, 1),
        metavar="N",
        help=f"tasks per tasks/list page (default {ServerConfig.page_size})",
    )
    tasks.add_argument(
        "--scope",
        choices=[scope.value for scope in Scope],
        default=Scope.GLOBAL.value,
        help="session: tasks created by tools/call are visible only to their HTTP session "
        "(default global)",
    )

    cancel = parser.add_argument_group("cancelling")
    cancel.add_argument(
        "--cancel-mode",
        choices=[mode.value for mode in CancelMode],
        default=CancelMode.STRICT.value,
        help="strict: the spec; lenient: cancelling a finished task succeeds unchanged; "
        "cooperative: answer 'working', cancel after --cancel-delay (default strict)",
    )
    cancel.add_argument(
        "--cancel-delay",
        type=int,
        dest="cancel_delay_ms",
        metavar="MS",
        help="delay of cooperative cancels; negative: never cancel (default "
        f"{ServerConfig.cancel_delay_ms})",
    )
    cancel.add_argument(
        "--modern-cancel-delay",
        type=int,
        metavar="MS",
        help="2026-07-28: tasks/cancel acknowledges at once and the task turns 'cancelled' "
        "this much later; negative: ack-only, never cancels (default: --cancel-delay when "
        f"given, else {ServerConfig.modern_cancel_delay_ms})",
    )
    cancel.add_argument(
        "--complete-on-cancel",
        action="append",
        default=[],
        metavar="ID[,ID...]",
        help="these tasks complete just as a cancel arrives (the cancel gets the "
        "terminal-status error); repeatable",
    )

    caps = parser.add_argument_group("capabilities")
    caps.add_argument(
        "--no-tasks",
        action="store_false",
        dest="tasks_enabled",
        help="offer no tasks capability (2026-07-28: no tasks extension)",
    )
    caps.add_argument(
        "--no-list", action="store_false", dest="list_enabled", help="omit tasks.list"
    )
    caps.add_argument(
        "--no-cancel",
        action="store_false",
        dest="cancel_enabled",
        help="omit tasks.cancel (2026-07-28: tasks/cancel becomes an unknown method)",
    )
    caps.add_argument(
        "--notify",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="send notifications/tasks/status on status changes; 2026-07-28: "
        "notifications/tasks on subscriptions/listen (with --no-notify the listen is "
        "acknowledged with no task ids) (default: on)",
    )

    http = parser.add_argument_group("HTTP")
    http.add_argument(
        "--answer",
        choices=[mode.value for mode in AnswerMode],
        default=AnswerMode.SSE.value,
        help="answer POSTs as one JSON body or as an SSE stream (default sse)",
    )
    http.add_argument(
        "--no-get-stream", action="store_false", dest="get_stream", help="answer GET with 405"
    )
    http.add_argument(
        "--affinity-cookie",
        action="store_true",
        help="set a sticky-session cookie on initialize; refuse requests of the session "
        "without it (400), as a load balancer's other nodes would",
    )
    http.add_argument(
        "--drop-session-after",
        type=bounded(int, 1),
        metavar="N",
        help="forget a session after N requests (initialize counts); then 404",
    )

    faults = parser.add_argument_group("faults")
    faults.add_argument(
        "--latency",
        type=bounded(int, 0),
        dest="latency_ms",
        metavar="MS",
        help="sleep before answering each tasks/* request",
    )
    faults.add_argument(
        "--fault",
        choices=[fault.value for fault in Fault],
        help="break every answer to tasks/* requests in this way",
    )
    add_fault_switches(parser)

    add_access_arguments(parser, http.add_argument)

    misc = parser.add_argument_group("other")
    misc.add_argument(
        "--server-name",
        metavar="NAME",
        help=f"serverInfo.name (default {ServerConfig.server_name})",
    )
    misc.add_argument(
        "--log", action="store_true", dest="log_requests", help="log every request on stderr"
    )
    return parser


def _host_port(text: str) -> tuple[str, int]:
    host, sep, port_text = text.rpartition(":")
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    try:
        port = int(port_text)
    except ValueError:
        port = -1
    if not sep or not host or not 0 <= port <= 65535:
        raise UsageError(f"--http expects HOST:PORT (e.g. {DEFAULT_HTTP}), got {text!r}")
    return host, port


def parse_config(argv: Sequence[str] | None) -> ServerConfig:
    """Turn a command line into a ServerConfig; raise UsageError for bad input. Every option
    given whose `dest` names a ServerConfig field is copied, then those that need converting
    (enums, files, combinations) are replaced."""
    args = build_parser().parse_args(argv)
    host, port = _host_port(args.http or DEFAULT_HTTP)
    try:
        seed = parse_seed(args.seed or "")
    except ValueError as exc:
        raise UsageError(f"bad --seed: {exc}") from None
    scripted: tuple[ScriptedTask, ...] = ()
    if args.tasks_file:
        try:
            scripted = parse_tasks_file(Path(args.tasks_file).read_text(encoding="utf-8"))
        except OSError as exc:
            raise UsageError(
                f"--tasks-file: cannot read {args.tasks_file}: {exc.strerror}"
            ) from None
        except (ValueError, UnicodeDecodeError) as exc:
            raise UsageError(f"--tasks-file {args.tasks_file}: {exc}") from None
    try:
        require_token, oauth = required_token(args), oauth_config(args)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if oauth is not None and (args.stdio or require_token or args.forbid_token):
        raise UsageError("--oauth serves HTTP and replaces --require-token/--forbid-token")
    try:
        switches = fault_switches(args)
    except ValueError as exc:
        raise UsageError(f"{exc} (see --help)") from None
    delays = (args.modern_cancel_delay, args.cancel_delay_ms, ServerConfig.modern_cancel_delay_ms)
    modern_cancel_delay = next(delay for delay in delays if delay is not None)
    given = {f.name: getattr(args, f.name, None) for f in fields(ServerConfig)}
    copied = {name: value for name, value in given.items() if value is not None}
    return replace(
        ServerConfig(**copied),
        host=host,
        port=port,
        seed=seed,
        scripted_tasks=scripted,
        scope=Scope(args.scope),
        answer=AnswerMode(args.answer),
        cancel_mode=CancelMode(args.cancel_mode),
        modern_cancel_delay_ms=modern_cancel_delay,
        complete_on_cancel=frozenset(
            task_id.strip()
            for value in args.complete_on_cancel
            for task_id in value.split(",")
            if task_id.strip()
        ),
        require_token=require_token,
        oauth=oauth,
        fault=Fault(args.fault) if args.fault else None,
        fault_switches=switches,
        protocol_eras=ProtocolEras(args.protocol_eras),
    )

"""The `mcptask` command line: Typer commands, and the one place errors become exit codes."""

from __future__ import annotations

import functools
import inspect
import math
import os
import signal
import sys
import threading
import typing
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TypeVar, cast

import typer

from mcptask import __version__
from mcptask.errors import ExitCode, McptaskError, UsageError
from mcptask.sanitize import clean

if TYPE_CHECKING:
    from mcptask.client import McpClient
    from mcptask.screen import Screen

app = typer.Typer(
    name="mcptask",
    help="Manage the long-running tasks of MCP servers: connect, list, get, cancel, watch.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)

# -- options every server command shares ------------------------------------------------------

UrlOption = Annotated[
    str | None,
    typer.Option("--url", help="Streamable HTTP endpoint of the server (env MCPTASK_URL)."),
]
ServerOption = Annotated[
    str | None,
    typer.Option(
        "--server", help="Server command to run over stdio, without a shell (env MCPTASK_SERVER)."
    ),
]
HeaderOption = Annotated[
    list[str] | None,
    typer.Option("--header", "-H", help="Extra HTTP header 'Name: value' (repeatable)."),
]
TokenFileOption = Annotated[
    Path | None,
    typer.Option(
        "--token-file",
        help="Read a bearer token from this file (else MCPTASK_TOKEN).",
        dir_okay=False,
    ),
]
SessionOption = Annotated[
    str | None,
    typer.Option("--session-id", help="Join this existing Streamable HTTP session."),
]
TimeoutOption = Annotated[
    float, typer.Option("--timeout", help="Seconds to wait for each answer.", min=0.001)
]
OutputOption = Annotated[
    str | None,
    typer.Option(
        "--output",
        "-o",
        help="table, json, jsonl or ids (default: table on a terminal, else json).",
    ),
]
VerboseOption = Annotated[
    bool, typer.Option("--verbose", "-v", help="Log the wire traffic to stderr (redacted).")
]
NoColorOption = Annotated[bool, typer.Option("--no-color", help="No colours (also NO_COLOR).")]
ProtocolOption = Annotated[
    str,
    typer.Option(
        "--protocol",
        help="auto (discover, else initialize), 2025-11-25 or 2026-07-28.",
    ),
]
StatusOption = Annotated[
    str | None,
    typer.Option("--status", help="Only these statuses, comma-separated (e.g. working,failed)."),
]


@dataclass(frozen=True)
class Common:
    """The shared options of one invocation."""

    url: str | None
    server: str | None
    header: list[str] | None
    token_file: Path | None
    session_id: str | None
    timeout: float
    output: str | None
    verbose: bool
    no_color: bool
    protocol: str = "auto"


_SERVER_OPTIONS: tuple[tuple[str, object, object], ...] = (
    ("url", UrlOption, None),
    ("server", ServerOption, None),
    ("header", HeaderOption, None),
    ("token_file", TokenFileOption, None),
    ("session_id", SessionOption, None),
    ("timeout", TimeoutOption, 30.0),
    ("output", OutputOption, None),
    ("verbose", VerboseOption, False),
    ("no_color", NoColorOption, False),
    ("protocol", ProtocolOption, "auto"),
)
"""The options every server command takes, in the order of `Common`'s fields."""

CommandFunction = TypeVar("CommandFunction", bound=Callable[..., None])


def with_server_options(command: CommandFunction) -> CommandFunction:
    """Give a command the shared server options, gathered into its `common: Common` argument.

    Typer reads a command's options from its signature, so the wrapper's signature is the
    command's own parameters followed by the shared ones; they are declared once, here.
    """
    own = [p for p in inspect.signature(command).parameters.values() if p.name != "common"]
    shared = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=kind, default=default)
        for name, kind, default in _SERVER_OPTIONS
    ]
    hints = typing.get_type_hints(command, include_extras=True)

    @functools.wraps(command, assigned=("__module__", "__name__", "__qualname__", "__doc__"))
    def run_command(**arguments: Any) -> None:
        common = Common(*(arguments.pop(name) for name, _, _ in _SERVER_OPTIONS))
        command(common=common, **arguments)

    run_command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [p.replace(annotation=hints[p.name]) for p in own] + shared
    )
    run_command.__annotations__ = {p.name: hints[p.name] for p in own} | {
        name: kind for name, kind, _ in _SERVER_OPTIONS
    }
    return cast(CommandFunction, run_command)


class Invocation:
    """One command's screen and connection, built from its shared options."""

    def __init__(self, common: Common, *, default_output: str | None = None) -> None:
        from mcptask.config import resolve_settings
        from mcptask.screen import Screen

        self.common = common
        try:
            self.screen: Screen = Screen(
                common.output or default_output, color=_color_wanted(common.no_color)
            )
        except ValueError as exc:
            raise UsageError(str(exc)) from None
        self.settings = resolve_settings(
            url=common.url,
            server_command=common.server,
            header_options=common.header,
            token_file=common.token_file,
            session_id=common.session_id,
            timeout=common.timeout,
            protocol=common.protocol,
        )

    @contextmanager
    def client(self, *, needs_list: bool = False) -> Iterator[McpClient]:
        """A connected client, closed again when the block ends."""
        from mcptask.connection import connected_client

        log = self.screen.note if self.common.verbose else None
        with connected_client(
            self.settings, log=log, server_log=log, needs_list=needs_list
        ) as client:
            yield client


def _color_wanted(no_color: bool) -> bool:
    return not (no_color or os.environ.get("NO_COLOR"))


# -- commands ----------------------------------------------------------------------------------


def _version_callback(value: bool) -> None:
    if value:
        print(f"mcptask {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_version_callback,
            is_eager=True,
            help="Print the version and exit.",
        ),
    ] = False,
) -> None:
    """Manage the long-running tasks of MCP servers: connect, list, get, cancel, watch."""


@app.command()
@with_server_options
def connect(
    target: Annotated[
        str | None, typer.Argument(help="A server URL or a server command (else --url/--server).")
    ] = None,
    *,
    common: Common,
) -> None:
    """Handshake with a server and show what it offers for tasks."""
    from mcptask import render, shapes

    if target is not None:
        if common.url or common.server:
            raise UsageError("give the server either as TARGET or with --url/--server, not both")
        if target.startswith(("http://", "https://")):
            common = replace(common, url=target)
        else:
            common = replace(common, server=target)
    invocation = Invocation(common)
    screen = invocation.screen
    if screen.format == "ids":
        raise UsageError("connect has no ids output; use -o table, json or jsonl")
    with invocation.client() as client:
        server_info = client.server
        transport = client.transport
        kind, target_shown, session = transport.kind, transport.target, transport.session_id
    if screen.format == "table":
        screen.out.print(
            render.server_panel(
                server_info, transport=kind, target=target_shown, session_id=session
            )
        )
        if not server_info.task_support.tasks:
            screen.warn("this server offers no tasks: list, get and cancel will not work here")
    else:
        document = shapes.connect_document(
            server_info, transport=kind, target=target_shown, session_id=session
        )
        if screen.format == "json":
            screen.json(document)
        else:
            screen.json_line(document)


@app.command("list")
@with_server_options
def list_tasks(
    status: StatusOption = None,
    limit: Annotated[
        int | None, typer.Option("--limit", min=1, help="At most this many tasks (newest first).")
    ] = None,
    *,
    common: Common,
) -> None:
    """List the server's tasks (every page), newest first."""
    from mcptask import render, shapes
    from mcptask.operations.listing import collect_tasks

    statuses = _statuses(status)
    invocation = Invocation(common)
    screen = invocation.screen
    with invocation.client(needs_list=True) as client:
        client.require("list")
        tasks = collect_tasks(client, statuses=statuses, limit=limit)
        kind = client.transport.kind
    if screen.format == "table":
        if tasks:
            screen.out.print(render.task_table(tasks))
    elif screen.format == "json":
        screen.json(shapes.list_document(tasks))
    elif screen.format == "jsonl":
        for task in tasks:
            screen.json_line(task.to_wire())
    else:
        screen.ids(task.taskId for task in tasks)
    if not tasks:
        screen.warn(
            _empty_list_reasons(
                kind, filtered=statuses is not None, joined=common.session_id is not None
            )
        )


def _empty_list_reasons(transport_kind: str, *, filtered: bool, joined: bool) -> str:
    if filtered:
        return "no tasks with that status"
    if transport_kind == "stdio":
        return (
            "no tasks: this server was started by mcptask just now over stdio, so its task "
            "store is likely empty; connect to a long-running server with --url instead"
        )
    reasons = "the tasks expired (ttl), or the server lists none"
    if not joined:
        reasons = (
            "the server keeps tasks per session and this is a new one (join the session "
            "that made them with --session-id), " + reasons
        )
    return f"no tasks; likely reasons: {reasons}"


@app.command()
@with_server_options
def get(
    task_id: Annotated[str, typer.Argument(metavar="ID", help="The task id.")],
    *,
    common: Common,
) -> None:
    """Show one task in full."""
    from mcptask import render
    from mcptask.errors import RpcError, TaskNotFound
    from mcptask.protocol import INVALID_PARAMS

    invocation = Invocation(common)
    screen = invocation.screen
    with invocation.client() as client:
        try:
            task = client.get_task(task_id)
        except RpcError as exc:
            if exc.code == INVALID_PARAMS:
                raise TaskNotFound(
                    f"task {task_id} not found (unknown, expired, or not visible to this "
                    f"session): {exc.server_message}"
                ) from None
            raise
    if screen.format == "table":
        screen.out.print(render.task_detail(task))
    elif screen.format == "json":
        screen.json(task.to_wire())
    elif screen.format == "jsonl":
        screen.json_line(task.to_wire())
    else:
        screen.ids([task.taskId])


@app.command()
@with_server_options
def cancel(
    task_ids: Annotated[
        list[str] | None,
        typer.Argument(metavar="[ID]...", help="Task ids to cancel; '-' reads ids from stdin."),
    ] = None,
    all_working: Annotated[
        bool,
        typer.Option("--all-working", help="Cancel every working and input_required task."),
    ] = False,
    status: StatusOption = None,
    from_file: Annotated[
        str | None,
        typer.Option("--from-file", help="Read ids from FILE ('-' = stdin), one per line."),
    ] = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask before a bulk cancel.")] = (
        False
    ),
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Show what would be cancelled; send no cancel.")
    ] = False,
    no_wait: Annotated[
        bool, typer.Option("--no-wait", help="Do not poll tasks/get to confirm the outcome.")
    ] = False,
    wait_timeout: Annotated[
        float,
        typer.Option("--wait-timeout", min=0.0, help="Seconds to wait for confirmation, per run."),
    ] = 5.0,
    *,
    common: Common,
) -> None:
    """Cancel tasks by id, from a file or stdin, or every working one; confirm each outcome."""
    from mcptask.cancel_command import CancelRequest, run_cancel

    _finite("--wait-timeout", wait_timeout)
    statuses = _statuses(status)
    if statuses is not None and not all_working:
        raise UsageError("--status narrows --all-working; give --all-working too")
    named = _read_ids(task_ids or [], from_file)
    if not named and not all_working:
        raise UsageError(
            "nothing to cancel: give task ids, --from-file FILE, '-' for stdin, or --all-working"
        )
    invocation = Invocation(common)
    request = CancelRequest(
        named_ids=named,
        all_working=all_working,
        statuses=statuses,
        yes=yes,
        dry_run=dry_run,
        wait=not no_wait,
        wait_timeout=wait_timeout,
    )
    with invocation.client(needs_list=all_working) as client:
        code = run_cancel(client, invocation.screen, request)
    raise typer.Exit(int(code))


@app.command()
@with_server_options
def watch(
    task_ids: Annotated[
        list[str] | None,
        typer.Argument(metavar="[ID]...", help="Tasks to watch (default: the listed ones)."),
    ] = None,
    status: StatusOption = None,
    interval: Annotated[
        float | None,
        typer.Option("--interval", min=0.0, help="Seconds between polls (default: the server's)."),
    ] = None,
    forever: Annotated[
        bool, typer.Option("--forever", help="Keep watching after every task has settled.")
    ] = False,
    watch_timeout: Annotated[
        float | None,
        typer.Option(
            "--wait-timeout", min=0.0, help="Stop after this many seconds (exit 7 if unsettled)."
        ),
    ] = None,
    exit_status: Annotated[
        bool,
        typer.Option("--exit-status", help="Exit 7 unless every watched task ended completed."),
    ] = False,
    retry_for: Annotated[
        float,
        typer.Option(
            "--retry-for",
            min=0.0,
            help="Seconds to keep retrying an unreachable server before exit 3.",
        ),
    ] = 30.0,
    *,
    common: Common,
) -> None:
    """Follow tasks live until they settle (completed, failed or cancelled)."""
    from mcptask.operations.watch import WatchOptions
    from mcptask.watch_command import run_watch

    for name, value in (
        ("--interval", interval),
        ("--wait-timeout", watch_timeout),
        ("--retry-for", retry_for),
    ):
        _finite(name, value)
    statuses = _statuses(status)
    if statuses is not None and task_ids:
        raise UsageError("--status narrows the listed tasks; it does not apply to given ids")
    invocation = Invocation(common, default_output="table")
    if invocation.screen.format == "ids":
        raise UsageError("watch has no ids output; use -o table, jsonl or json")
    options = WatchOptions(
        task_ids=list(dict.fromkeys(task_ids or [])),
        statuses=statuses,
        interval=interval,
        forever=forever,
        timeout=watch_timeout,
        retry_for=retry_for,
    )
    with invocation.client(needs_list=not options.task_ids) as client:
        code = run_watch(client, invocation.screen, options, exit_status=exit_status)
    raise typer.Exit(int(code))


@app.command(
    "reference-server",
    context_settings={
        "allow_extra_args": True,
        "ignore_unknown_options": True,
        "help_option_names": [],
    },
    add_help_option=False,
)
def reference_server(ctx: typer.Context) -> None:
    """Run the embedded reference MCP tasks server (--http HOST:PORT or --stdio; --help)."""
    from mcptask.reference_server import main as serve

    raise typer.Exit(serve(list(ctx.args)))


# -- shared parsing ----------------------------------------------------------------------------


def _finite(option: str, value: float | None) -> None:
    if value is not None and not math.isfinite(value):
        raise UsageError(f"{option} takes a finite number of seconds")


def _statuses(text: str | None) -> tuple[str, ...] | None:
    from mcptask.protocol import parse_statuses

    if text is None:
        return None
    try:
        return parse_statuses(text)
    except ValueError as exc:
        raise UsageError(f"--status: {exc}") from None


def _read_ids(arguments: list[str], from_file: str | None) -> list[str]:
    """Ids from arguments, a file and stdin ('-'), in order, each once."""
    ids: list[str] = []
    sources = [from_file] if from_file else []
    for argument in arguments:
        if argument == "-":
            sources.append("-")
        else:
            ids.append(argument)
    for source in dict.fromkeys(sources):
        ids.extend(_ids_from(source))
    for task_id in ids:
        if not task_id.strip() or clean(task_id) != task_id:
            raise UsageError(f"invalid task id {clean(task_id)!r}: control characters")
    return list(dict.fromkeys(ids))


def _ids_from(source: str) -> list[str]:
    """One id per line; blank lines and `#` comments are ignored."""
    if source == "-":
        try:
            text = sys.stdin.buffer.read().decode("utf-8")
        except UnicodeDecodeError:
            raise UsageError("the ids on stdin are not UTF-8 text") from None
    else:
        try:
            text = Path(source).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            raise UsageError(f"cannot read --from-file {source!r}: {reason}") from None
    lines = (line.strip() for line in text.splitlines())
    return [line for line in lines if line and not line.startswith("#")]


# -- entry point -------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> NoReturn:
    """Run the CLI; every failure ends as one line on stderr and a documented exit code."""
    code = run(argv)
    sys.exit(code)


def run(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code (used by `main` and by tests)."""
    from mcptask.screen import Screen

    args = sys.argv[1:] if argv is None else argv
    errors = Screen("table", color=_color_wanted("--no-color" in args))
    # SIGTERM ends any command like Ctrl-C does (exit 130, one line); the bulk cancel and watch
    # loops install their own handlers that stop between requests instead.
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, _interrupt)
    try:
        result = app(args=args, prog_name="mcptask", standalone_mode=False)
    except McptaskError as exc:
        errors.error(exc.message)
        return int(exc.exit_code)
    except typer.TyperException as exc:  # usage errors from the option parser
        message = exc.format_message()
        if message.startswith("No such option"):
            message += " (a task id that starts with '-' goes after '--', e.g. cancel -- -abc)"
        errors.error(message + _help_pointer(getattr(exc, "ctx", None)))
        return int(ExitCode.USAGE)
    except (KeyboardInterrupt, typer.Abort):
        errors.error("interrupted")
        return int(ExitCode.INTERRUPTED)
    except Exception as exc:  # a bug: say so in one line, keep the traceback for debugging
        if os.environ.get("MCPTASK_DEBUG"):
            raise
        errors.error(
            f"internal error ({type(exc).__name__}: {exc}); this is a bug in mcptask: please "
            "report it with the output of the same command run with -v and MCPTASK_DEBUG=1"
        )
        return int(ExitCode.UNEXPECTED)
    # Typer returns the code of an explicit Exit (and 130 for a Ctrl-C it caught itself).
    code = result if isinstance(result, int) else int(ExitCode.OK)
    if code == ExitCode.INTERRUPTED and _signalled:
        errors.error("interrupted")
    return code


_signalled: list[int] = []
"""Records Ctrl-C or SIGTERM outside the loops that handle them (a plain list: a signal
handler must not take locks)."""


def _interrupt(signum: int, frame: object) -> None:
    _signalled.append(signum)
    raise KeyboardInterrupt


def _help_pointer(ctx: object) -> str:
    path = getattr(ctx, "command_path", None)
    return f" (see: {path} --help)" if isinstance(path, str) and path else ""

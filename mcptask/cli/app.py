"""The `mcptask` Typer app, and the one place where exceptions become exit codes.

Commands live one per module in `mcptask.cli.commands`; they raise mcptask errors and end
with `typer.Exit(code)` where `cli.exit_codes` decided the code of a report. `run` turns
everything else into one line on stderr and a documented exit code, never a traceback.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
import threading
from typing import Annotated, Any, NoReturn

import typer

from mcptask import __version__
from mcptask.cli import collector
from mcptask.cli.command_line import command_named
from mcptask.cli.help_width import CappedCommand, CappedGroup
from mcptask.cli.options import color_wanted, root_options
from mcptask.errors import ExitCode, McptaskError

COMMANDS: dict[str, tuple[str, dict[str, Any]]] = {
    "connect": ("connect", {}),
    "start": ("start", {}),
    "list": ("list_tasks", {}),
    "get": ("get", {}),
    "result": ("result", {}),
    "cancel": ("cancel", {}),
    "watch": ("watch", {}),
    "forget": ("forget", {}),
    "profiles": ("profiles", {}),
    "login": ("login", {}),
    "logout": ("logout", {}),
    "reference-server": (
        "reference_server",
        {
            "context_settings": {
                "allow_extra_args": True,
                "ignore_unknown_options": True,
                "help_option_names": [],
            },
            "add_help_option": False,
        },
    ),
}
"""Every command, in the order help lists them: its module in `mcptask.cli.commands` (whose
function of the same name is the command), and its Typer settings."""


def _version_callback(value: bool) -> None:
    if value:
        print(f"mcptask {__version__}")
        raise typer.Exit()


@root_options
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
    """Manage the long-running tasks of MCP servers: connect, start, list, get, result,
    cancel, watch.

    The server options (--url, --server, --profile, -H, ...) may stand before or after the
    command name; given in both places, the later one wins (-H and --env add up).
    """


def build_app(only: str | None = None) -> typer.Typer:
    """The app with every command, or with the one command `only` names: a command line
    that names its command pays for importing and building that one alone (the parse, the
    errors and the help of that command are the same either way)."""
    app = typer.Typer(
        name="mcptask",
        help="Manage the long-running tasks of MCP servers: connect, start, list, get, "
        "result, cancel, watch.",
        cls=CappedGroup,
        no_args_is_help=True,
        add_completion=True,
        pretty_exceptions_enable=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    app.callback()(_root)
    for name in [only] if only in COMMANDS else COMMANDS:
        module_name, settings = COMMANDS[name]
        module = importlib.import_module(f"mcptask.cli.commands.{module_name}")
        # reference-server parses its own options (argparse): it keeps Typer's plain class.
        options: dict[str, Any] = settings or {"cls": CappedCommand}
        app.command(name, **options)(getattr(module, module_name))
    return app


def __getattr__(name: str) -> typer.Typer:
    """`app`: the whole app, built on first use (by the generators of the completion table
    and the help pages, and by tests)."""
    if name != "app":
        raise AttributeError(name)
    app = build_app()
    globals()["app"] = app
    return app


def main(argv: list[str] | None = None) -> NoReturn:
    """Run the CLI; every failure ends as one line on stderr and a documented exit code."""
    code = run(argv)
    # Else Python's finalization has the collector walk every object left (the modules,
    # Typer's and httpx's included): some 40 ms of a one-shot command. The commands have
    # closed what they opened (see cli.collector).
    collector.ending()
    sys.exit(code)


def run(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code (used by `main` and by tests)."""
    args = sys.argv[1:] if argv is None else argv
    # Made on the first error only: shell completion goes through here at every Tab, and
    # must not import Rich.
    errors = _ErrorScreen(color=color_wanted("--no-color" in args))
    # SIGTERM ends any command like Ctrl-C does (exit 130, one line); the bulk cancel and watch
    # loops install their own handlers that stop between requests instead.
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, _interrupt)
    try:
        completing = bool(os.environ.get("_MCPTASK_COMPLETE"))
        app = build_app(None if completing else command_named(args))
        if not args and not completing:
            # No command: the help, as a usage error (exit 2) that needs no error line.
            app(args=["--help"], prog_name="mcptask", standalone_mode=False)
            return int(ExitCode.USAGE)
        result = app(args=args, prog_name="mcptask", standalone_mode=False)
    except McptaskError as exc:
        errors.error(exc.message)
        return int(exc.exit_code)
    except typer.TyperException as exc:  # usage errors from the option parser
        context = getattr(exc, "ctx", None)
        message = exc.format_message()
        if message.startswith("No such option") and _takes_arguments(context):
            message += " (a task id that starts with '-' goes after '--', e.g. cancel -- -abc)"
        errors.error(message + _help_pointer(context))
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


class _ErrorScreen:
    """stderr for one-line errors, with Rich imported only when there is one to print."""

    def __init__(self, *, color: bool) -> None:
        self._color = color

    def error(self, message: str) -> None:
        from mcptask.output.screen import Screen

        Screen("table", color=self._color).error(message)


_signalled: list[int] = []
"""Records Ctrl-C or SIGTERM outside the loops that handle them (a plain list: a signal
handler must not take locks)."""


def _interrupt(signum: int, frame: object) -> None:
    _signalled.append(signum)
    raise KeyboardInterrupt


def _takes_arguments(ctx: object) -> bool:
    """True when the failing command takes positional arguments (such as task ids)."""
    command = getattr(ctx, "command", None)
    parameters = getattr(command, "params", [])
    return any(getattr(param, "param_type_name", "") == "argument" for param in parameters)


def _help_pointer(ctx: object) -> str:
    path = getattr(ctx, "command_path", None)
    return f" (see: {path} --help)" if isinstance(path, str) and path else ""

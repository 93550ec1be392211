"""The `mcptask` Typer app, and the one place where exceptions become exit codes: `run`
turns them into one line on stderr and a documented exit code, never a traceback (commands
end with `typer.Exit(code)` where a report carries its code).

The root is a lazy group (as hatch's `LazyGroup`): a command's module is imported, and its
Click command built, only when that command is looked up.
"""

from __future__ import annotations

import importlib
import os
import signal
import sys
import threading
from collections.abc import Iterator, Mapping
from typing import Annotated, Any

import typer
import typer.main
from typer.core import TyperCommand, TyperGroup

from mcptask import __version__
from mcptask.cli.options import Common, color_wanted, with_server_options
from mcptask.errors import ExitCode, McptaskError

COMMANDS = {
    "connect": "servers:connect",
    "start": "one_task:start",
    "list": "list_tasks:list_tasks",
    "get": "one_task:get",
    "result": "one_task:result",
    "answer": "answer:answer",
    "cancel": "cancel:cancel",
    "watch": "watch:watch",
    "forget": "servers:forget",
    "handles": "servers:handles",
    "profiles": "servers:profiles",
    "login": "servers:login",
    "logout": "servers:logout",
    "reference-server": "servers:reference_server",
}
"""Every command, in the order help lists them, and its function, `module:function` in
`mcptask.cli.commands`."""
EXAMPLES: dict[str, tuple[str, ...]] = {
    "connect": (
        "mcptask connect http://127.0.0.1:8765/mcp",
        'mcptask connect "mcptask reference-server --stdio" -o json',
        "mcptask connect http://127.0.0.1:8765/mcp --save local --default",
    ),
    "start": (
        'mcptask start long_job seconds:=30 message="nightly build"',
        "mcptask start long_job --args @job.json -o ids",
        "mcptask start long_job seconds:=5 --watch",
        "mcptask start long_job seconds:=600 --ttl 3600",
    ),
    "list": (
        "mcptask list --status working",
        "mcptask list --status working -o ids | head",
        "mcptask list --order server -o jsonl",
        "mcptask list --known",
    ),
    "get": ("mcptask get working-001 -o json",),
    "result": (
        "mcptask result 786512e2",
        "mcptask result 786512e2 --wait-timeout 600 -o json",
    ),
    "answer": (
        "mcptask answer 786512e2",
        "mcptask answer 786512e2 answer=yes",
        "mcptask answer 786512e2 --key approval approve=true count:=3",
        "mcptask answer 786512e2 --from-file answer.json -o json",
        "mcptask answer 786512e2 --decline",
    ),
    "cancel": (
        "mcptask cancel abc123 def456",
        "mcptask cancel --all-working --yes",
        "mcptask cancel --all-working --dry-run",
        "mcptask cancel --all-working --known --yes",
        "mcptask list --status working -o ids | mcptask cancel -",
        "mcptask cancel --from-file ids.txt -o json",
    ),
    "watch": (
        "mcptask watch abc123 def456",
        "mcptask watch --known",
        "mcptask watch --status working --exit-status",
        "mcptask watch abc123 --wait-timeout 60",
        "mcptask watch abc123 --answer",
        "mcptask watch --forever -o jsonl >> tasks.log",
        "mcptask watch -P 'prod-*' --exit-status",
    ),
    "forget": (
        "mcptask forget 786512e2 --url http://127.0.0.1:8765/mcp",
        "mcptask forget --all",
    ),
    "handles": (
        "mcptask handles --profile prod > handles.json",
        "mcptask handles --profile prod --import handles.json",
        "mcptask handles --url http://127.0.0.1:8765/mcp -o jsonl",
    ),
    "profiles": (
        "mcptask profiles",
        "mcptask profiles --default staging",
        "mcptask profiles --delete old",
    ),
    "login": (
        "mcptask login https://mcp.example.com/mcp",
        "mcptask login --profile prod --no-browser",
    ),
    "logout": (
        "mcptask logout https://mcp.example.com/mcp",
        "mcptask logout --all",
    ),
    "reference-server": (
        "mcptask reference-server --http 127.0.0.1:8765 --seed working=20,completed=5",
        "mcptask reference-server --stdio --protocol-eras modern",
    ),
}
"""Each command's examples, one command line each: shown at the end of its `--help`, and in
the generated reference and man pages (scripts/docs_reference.py), so the three agree."""
PASS_THROUGH: dict[str, Any] = {
    "context_settings": {
        "allow_extra_args": True,
        "ignore_unknown_options": True,
        "help_option_names": [],
    },
    "add_help_option": False,
}
"""reference-server parses its own options and help (argparse): Typer passes them on."""


BASH_SCRIPT = r"""
_mcptask_completion() {
    local IFS=$'\n' word
    local -a words
    # One candidate a line: no splitting on anything else, no globbing, each quoted for the
    # shell (mcptask offers only plain words; this holds even if another candidate came).
    mapfile -t words < <(env COMP_WORDS="${COMP_WORDS[*]}" \
                         COMP_CWORD="$COMP_CWORD" \
                         _MCPTASK_COMPLETE=complete_bash "$1")
    COMPREPLY=()
    for word in "${words[@]}"; do
        printf -v word '%q' "$word"
        COMPREPLY+=("$word")
    done
    return 0
}

complete -o default -F _mcptask_completion mcptask
"""
"""What `_MCPTASK_COMPLETE=source_bash mcptask` prints (completions/mcptask.bash): Typer's
script fills `COMPREPLY=( $( … ) )`, which globs and inserts the words unquoted."""


def _heading(ctx: Any, title: str) -> str:
    """A section's title, bold where the help goes to a terminal in colour."""
    return typer.style(title, bold=True) if ctx.color else title


def _print_help(ctx: Any, param: object, value: bool) -> None:
    """The help option's action: the page goes out as any output does (a reader that went
    away ends it quietly, stdout that cannot be written is the one-line error)."""
    if value and not ctx.resilient_parsing:
        from mcptask.output.screen import Screen

        Screen("table").text(ctx.get_help() + "\n")
        raise typer.Exit()


class HelpPage(TyperCommand):
    """Help drawn by Click in sections, without Rich (whose import alone costs more than all
    of Typer's), printed as any output is (`_print_help`); the help option's names in
    declared order (-h, --help): Click gathers them in a set, which iterates in another order
    in each process (and completion would list them so)."""

    def format_options(self, ctx: Any, formatter: Any) -> None:
        """The arguments and options in sections: Arguments, Options, then one per help panel
        (Server, Sign-in, Output), as the parameters declare them."""
        sections: dict[str, list[tuple[str, str]]] = {"Arguments": [], "Options": []}
        params: list[Any] = self.get_params(ctx)  # Typer's, which know their help panel
        for param in params:
            record = param.get_help_record(ctx)
            if record is not None:
                default = "Arguments" if param.param_type_name == "argument" else "Options"
                sections.setdefault(param.rich_help_panel or default, []).append(record)
        for title, rows in sections.items():
            if rows:
                with formatter.section(_heading(ctx, title)):
                    formatter.write_dl(rows)

    def get_help_option(self, ctx: Any) -> Any:
        option = super().get_help_option(ctx)
        if option is not None:
            option.callback = _print_help
        return option

    def get_help_option_names(self, ctx: Any) -> list[str]:
        names = super().get_help_option_names(ctx)
        return [name for name in ctx.help_option_names if name in names]


class Command(HelpPage):
    """A command, its help ending with its examples."""

    def format_epilog(self, ctx: Any, formatter: Any) -> None:
        if examples := EXAMPLES.get(self.name or ""):
            with formatter.section(_heading(ctx, "Examples")):
                for example in examples:
                    formatter.write_text(example)


class LazyCommands(Mapping[str, TyperCommand]):
    """The commands by name, in help's order; each is built on its first lookup."""

    def __init__(self) -> None:
        self._built: dict[str, TyperCommand] = {}

    def __getitem__(self, name: str) -> TyperCommand:
        if name not in self._built:
            module_name, function = COMMANDS[name].split(":")
            module = importlib.import_module(f"mcptask.cli.commands.{module_name}")
            settings = PASS_THROUGH if name == "reference-server" else {}
            one = typer.Typer(
                add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None
            )
            one.command(name, cls=Command, **settings)(getattr(module, function))
            command = typer.main.get_command(one)
            assert isinstance(command, TyperCommand)
            self._built[name] = command
        return self._built[name]

    def __iter__(self) -> Iterator[str]:
        return iter(COMMANDS)

    def __len__(self) -> int:
        return len(COMMANDS)


class CommandName:
    """A command name offered at TAB, read as Click's CompletionItem is (value, type, help).
    Its help, which zsh and fish show and bash does not, builds the command when read."""

    type = "plain"

    def __init__(self, group: LazyGroup, name: str) -> None:
        self.value = name
        self._group = group

    @property
    def help(self) -> str:
        return self._group.commands[self.value].get_short_help_str()


class LazyGroup(TyperGroup, HelpPage):
    """The root: its commands are built as they are looked up; its help as a command's,
    then each command with the first sentence of its help."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        self.commands = LazyCommands()  # type: ignore[assignment]

    def list_commands(self, ctx: object) -> list[str]:
        return list(COMMANDS)  # names only: listing builds nothing

    def shell_complete(self, ctx: Any, incomplete: str) -> list[Any]:
        """Command names without building the commands (Typer's would, for their help);
        option names as Typer offers them (no command name starts with "-")."""
        if incomplete.startswith("-"):
            return super().shell_complete(ctx, incomplete)
        return [CommandName(self, name) for name in COMMANDS if name.startswith(incomplete)]

    def format_options(self, ctx: Any, formatter: Any) -> None:
        HelpPage.format_options(self, ctx, formatter)
        rows = [(name, self.commands[name].get_short_help_str(sys.maxsize)) for name in COMMANDS]
        with formatter.section(_heading(ctx, "Commands")):
            formatter.write_dl(rows)


def _version_callback(ctx: typer.Context, value: bool) -> None:
    if value and not ctx.resilient_parsing:  # not while completing a line
        print(f"mcptask {__version__}")
        raise typer.Exit()


@with_server_options
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
    *,
    common: Common,
) -> None:
    """The root's --version, and the server options, which may stand before or after the
    command name: given in both places, the later one wins (-H, --env and -P add up)."""


app = typer.Typer(
    name="mcptask",
    help="Manage the long-running tasks of MCP servers: connect, start, list, get, "
    "result, cancel, watch.",
    cls=LazyGroup,
    no_args_is_help=True,
    add_completion=True,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
app.callback()(_root)


def run(argv: list[str] | None = None) -> int:
    """Run the CLI and return its exit code (used by `mcptask.entry` and by tests)."""
    args = sys.argv[1:] if argv is None else argv
    color = color_wanted("--no-color" in args)
    styled = color and sys.stdout.isatty()  # help's headings (Click's context setting)

    def error(message: str) -> None:
        # Rich is imported on the first error only: completion runs through here at every TAB.
        from mcptask.output.screen import Screen

        Screen("table", color=color).error(message)

    # SIGTERM ends any command like Ctrl-C does (exit 130, one line); the bulk cancel and watch
    # loops install their own handlers that stop between requests instead.
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, _interrupt)
    completing = os.environ.get("_MCPTASK_COMPLETE", "")
    if completing == "source_bash":  # mcptask's own script: Typer's globs the candidates
        sys.stdout.write(BASH_SCRIPT)
        return 0
    saved_width = None
    if completing in ("complete_zsh", "complete_fish"):
        from typer import rich_utils  # only these completions, whose answers carry help, pay

        # Each answer's help on one line, however long (Typer's Rich output would wrap it);
        # restored after, for callers that run the app in process.
        saved_width, rich_utils.MAX_WIDTH = rich_utils.MAX_WIDTH, 100_000
    try:
        if not args and not completing:
            # No command: the help, as a usage error (exit 2) that needs no error line.
            app(args=["--help"], prog_name="mcptask", standalone_mode=False, color=styled)
            return int(ExitCode.USAGE)
        result = app(args=args, prog_name="mcptask", standalone_mode=False, color=styled)
    except McptaskError as exc:
        error(exc.message)
        return int(exc.exit_code)
    except typer.TyperException as exc:  # usage errors from the option parser
        context = getattr(exc, "ctx", None)
        message = exc.format_message()
        arguments = getattr(getattr(context, "command", None), "params", [])
        if message.startswith("No such option") and any(
            getattr(param, "param_type_name", "") == "argument" for param in arguments
        ):  # the command takes positional arguments, such as task ids
            message += " (a task id that starts with '-' goes after '--', e.g. cancel -- -abc)"
        path = getattr(context, "command_path", None)
        error(message + (f" (see: {path} --help)" if isinstance(path, str) and path else ""))
        return int(ExitCode.USAGE)
    except (KeyboardInterrupt, typer.Abort):
        error("interrupted")
        return int(ExitCode.INTERRUPTED)
    except Exception as exc:  # a bug: say so in one line, keep the traceback for debugging
        if os.environ.get("MCPTASK_DEBUG"):
            raise
        error(
            f"internal error ({type(exc).__name__}: {exc}); this is a bug in mcptask: please "
            "report it with the output of the same command run with -v and MCPTASK_DEBUG=1"
        )
        return int(ExitCode.UNEXPECTED)
    finally:
        if saved_width is not None:
            from typer import rich_utils

            rich_utils.MAX_WIDTH = saved_width
    # Typer returns the code of an explicit Exit (and 130 for a Ctrl-C it caught itself).
    code = result if isinstance(result, int) else int(ExitCode.OK)
    if code == ExitCode.INTERRUPTED and _signalled:
        error("interrupted")
    return code


_signalled: list[int] = []
"""Records Ctrl-C or SIGTERM outside the loops that handle them (a plain list: a signal
handler must not take locks)."""


def _interrupt(signum: int, frame: object) -> None:
    _signalled.append(signum)
    raise KeyboardInterrupt

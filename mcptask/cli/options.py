"""The options the server commands share, declared once, and the invocation they describe."""

from __future__ import annotations

import functools
import inspect
import math
import os
import typing
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Protocol, TypeVar, cast

import typer

from mcptask.cli.completion import complete_profile
from mcptask.cli.sign_in_options import (
    AuthOption,
    ClientIdOption,
    ClientKeyFileOption,
    ClientSecretFileOption,
    NoBrowserOption,
    ScopeOption,
)
from mcptask.errors import UsageError

UrlOption = Annotated[
    str | None,
    typer.Option(
        "--url",
        help="Streamable HTTP endpoint of the server (env MCPTASK_URL).",
        rich_help_panel="Server",
    ),
]
ServerOption = Annotated[
    str | None,
    typer.Option(
        "--server",
        help="Server command to run over stdio, without a shell (env MCPTASK_SERVER).",
        rich_help_panel="Server",
    ),
]
ProfileOption = Annotated[
    str | None,
    typer.Option(
        "--profile",
        "-P",
        help="Use a saved profile (env MCPTASK_PROFILE; see: mcptask profiles).",
        autocompletion=complete_profile,
        rich_help_panel="Server",
    ),
]
HeaderOption = Annotated[
    list[str] | None,
    typer.Option(
        "--header",
        "-H",
        help="Extra HTTP header 'Name: value' (repeatable).",
        rich_help_panel="Server",
    ),
]
EnvOption = Annotated[
    list[str] | None,
    typer.Option(
        "--env",
        "-e",
        help="KEY=VALUE in the environment of a --server process (repeatable).",
        rich_help_panel="Server",
    ),
]
TokenFileOption = Annotated[
    Path | None,
    typer.Option(
        "--token-file",
        help="Read a bearer token from this file (else MCPTASK_TOKEN).",
        dir_okay=False,
        rich_help_panel="Server",
    ),
]
TokenEnvOption = Annotated[
    str | None,
    typer.Option(
        "--token-env",
        metavar="NAME",
        help="Read a bearer token from this variable.",
        rich_help_panel="Server",
    ),
]
SessionOption = Annotated[
    str | None,
    typer.Option(
        "--session-id", help="Join this existing Streamable HTTP session.", rich_help_panel="Server"
    ),
]
TimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        help="Seconds to wait for each answer (default 30).",
        min=0.001,
        rich_help_panel="Server",
    ),
]
ProtocolOption = Annotated[
    str | None,
    typer.Option(
        "--protocol",
        help="auto (discover, else initialize; the default), 2025-11-25 or 2026-07-28.",
        rich_help_panel="Server",
    ),
]
CaCertOption = Annotated[
    Path | None,
    typer.Option(
        "--ca-cert",
        help="Trust the CA certificates in this PEM file (else SSL_CERT_FILE, else the system's).",
        dir_okay=False,
        rich_help_panel="Server",
    ),
]
RetriesOption = Annotated[
    int | None,
    typer.Option(
        "--retries",
        min=0,
        help="Retry a transient failure this many times (default 4; watch: as long as "
        "--retry-for allows).",
        rich_help_panel="Server",
    ),
]
RetryForOption = Annotated[
    float | None,
    typer.Option(
        "--retry-for",
        min=0.0,
        help="Seconds after a request's first failure during which it is retried (default 30).",
        rich_help_panel="Server",
    ),
]
InsecureOption = Annotated[
    bool,
    typer.Option(
        "--insecure", help="Do not verify the server's TLS certificate.", rich_help_panel="Server"
    ),
]
OutputOption = Annotated[
    str | None,
    typer.Option(
        "--output",
        "-o",
        help="table, json, jsonl or ids (default: table on a terminal, else json).",
        rich_help_panel="Output",
    ),
]
VerboseOption = Annotated[
    bool,
    typer.Option(
        "--verbose",
        "-v",
        help="Log the wire traffic to stderr (redacted).",
        rich_help_panel="Output",
    ),
]
NoColorOption = Annotated[
    bool, typer.Option("--no-color", help="No colours (also NO_COLOR).", rich_help_panel="Output")
]
StatusOption = Annotated[
    str | None,
    typer.Option("--status", help="Only these statuses, comma-separated (e.g. working,failed)."),
]
KnownOption = Annotated[
    bool,
    typer.Option(
        "--known",
        help="Act on the tasks recorded here for this server, each refreshed with tasks/get "
        "first (the way to work in bulk without tasks/list).",
    ),
]


@dataclass(frozen=True)
class Common:
    """The shared options of one invocation, as the command line gave them."""

    url: str | None = None
    server: str | None = None
    profile: str | None = None
    header: list[str] | None = None
    env: list[str] | None = None
    token_file: Path | None = None
    token_env: str | None = None
    session_id: str | None = None
    timeout: float | None = None
    protocol: str | None = None
    ca_cert: Path | None = None
    insecure: bool = False
    retries: int | None = None
    retry_for: float | None = None
    auth: str | None = None
    client_id: str | None = None
    client_secret_file: Path | None = None
    client_key_file: Path | None = None
    scope: str | None = None
    no_browser: bool = False
    output: str | None = None
    verbose: bool = False
    no_color: bool = False


_SERVER_OPTIONS: tuple[tuple[str, object], ...] = (
    ("url", UrlOption),
    ("server", ServerOption),
    ("profile", ProfileOption),
    ("header", HeaderOption),
    ("env", EnvOption),
    ("token_file", TokenFileOption),
    ("token_env", TokenEnvOption),
    ("session_id", SessionOption),
    ("timeout", TimeoutOption),
    ("protocol", ProtocolOption),
    ("ca_cert", CaCertOption),
    ("insecure", InsecureOption),
    ("retries", RetriesOption),
    ("retry_for", RetryForOption),
    ("auth", AuthOption),
    ("client_id", ClientIdOption),
    ("client_secret_file", ClientSecretFileOption),
    ("client_key_file", ClientKeyFileOption),
    ("scope", ScopeOption),
    ("no_browser", NoBrowserOption),
    ("output", OutputOption),
    ("verbose", VerboseOption),
    ("no_color", NoColorOption),
)
"""The options every server command takes (also before the command name), as `Common`."""

_REPEATABLE = frozenset({"header", "env"})
"""Given both before and after the command name, these add up; the others: the later wins."""

CommandFunction = TypeVar("CommandFunction", bound=Callable[..., None])


def _shared_parameters() -> list[inspect.Parameter]:
    defaults = Common()
    return [
        inspect.Parameter(
            name,
            inspect.Parameter.KEYWORD_ONLY,
            annotation=kind,
            default=getattr(defaults, name),
        )
        for name, kind in _SERVER_OPTIONS
    ]


def with_server_options(command: CommandFunction) -> CommandFunction:
    """Give a command the shared server options, gathered into its `common: Common` argument.

    Typer reads a command's options from its signature, so the wrapper's signature is the
    command's own parameters followed by the shared ones; they are declared once, here. The
    same options given before the command name (see `root_options`) are merged in.
    """
    own = [p for p in inspect.signature(command).parameters.values() if p.name != "common"]
    hints = typing.get_type_hints(command, include_extras=True)

    @functools.wraps(command, assigned=("__module__", "__name__", "__qualname__", "__doc__"))
    def run_command(ctx: typer.Context, **arguments: Any) -> None:
        shared = {name: arguments.pop(name) for name, _ in _SERVER_OPTIONS}
        command(common=_merged(ctx, shared), **arguments)

    context = inspect.Parameter(
        "ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context
    )
    run_command.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [context, *(p.replace(annotation=hints[p.name]) for p in own), *_shared_parameters()]
    )
    run_command.__annotations__ = (
        {"ctx": typer.Context} | {p.name: hints[p.name] for p in own} | dict(_SERVER_OPTIONS)
    )
    return cast(CommandFunction, run_command)


RootFunction = TypeVar("RootFunction", bound=Callable[..., None])


def root_options(callback: RootFunction) -> RootFunction:
    """Let the root callback take the shared server options too, so that they may stand
    before the command name (`mcptask --profile prod list`); commands merge them in."""
    own = list(inspect.signature(callback).parameters.values())
    hints = typing.get_type_hints(callback, include_extras=True)

    @functools.wraps(callback, assigned=("__module__", "__name__", "__qualname__", "__doc__"))
    def run_root(**arguments: Any) -> None:
        callback(**{p.name: arguments[p.name] for p in own})

    run_root.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [*(p.replace(annotation=hints[p.name]) for p in own), *_shared_parameters()]
    )
    run_root.__annotations__ = {p.name: hints[p.name] for p in own} | dict(_SERVER_OPTIONS)
    return cast(RootFunction, run_root)


class _Parsed(Protocol):
    """What a parsed command line context tells (a command's, or the root's)."""

    params: dict[str, Any]

    def get_parameter_source(self, name: str) -> Any:
        """Where an option's value came from (command line, default...)."""


def _merged(ctx: typer.Context, command_values: dict[str, Any]) -> Common:
    """The command's options over the root's: the later one on the line wins."""
    root: _Parsed | None = ctx.parent
    values: dict[str, Any] = {}
    for name, _ in _SERVER_OPTIONS:
        here = command_values[name]
        before = root.params.get(name) if root is not None else None
        given_here = _given(ctx, name)
        given_before = root is not None and _given(root, name)
        if name in _REPEATABLE:
            values[name] = [*(before or []), *(here or [])] or None
        elif given_here or not given_before:
            values[name] = here
        else:
            values[name] = before
    return Common(**values)


def _given(ctx: _Parsed, name: str) -> bool:
    source = ctx.get_parameter_source(name)
    return source is not None and source.name in ("COMMANDLINE", "ENVIRONMENT", "PROMPT")


def color_wanted(no_color: bool) -> bool:
    """Colour unless `--no-color` or `NO_COLOR` says otherwise."""
    return not (no_color or os.environ.get("NO_COLOR"))


def finite(option: str, value: float | None) -> None:
    """Refuse infinity and NaN for an option that takes seconds."""
    if value is not None and not math.isfinite(value):
        raise UsageError(f"{option} takes a finite number of seconds")


def statuses(text: str | None) -> tuple[str, ...] | None:
    """The parsed `--status` filter, or None when not given."""
    from mcptask.protocol.tasks import parse_statuses

    if text is None:
        return None
    try:
        return parse_statuses(text)
    except ValueError as exc:
        raise UsageError(f"--status: {exc}") from None

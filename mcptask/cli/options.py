"""The options the server commands share, declared once, and the invocation they describe."""

from __future__ import annotations

import functools
import inspect
import math
import os
import typing
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar, cast

import typer

from mcptask.errors import UsageError

if TYPE_CHECKING:
    from mcptask.cli.record import Record
    from mcptask.client.session import McpClient
    from mcptask.output.screen import Screen

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
        from mcptask.cli.settings import resolve_settings
        from mcptask.output.screen import Screen

        self.common = common
        try:
            self.screen: Screen = Screen(
                common.output or default_output, color=color_wanted(common.no_color)
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
        self._record: Record | None = None

    @property
    def record(self) -> Record:
        """The record of known tasks of this server (opened on first use)."""
        if self._record is None:
            from mcptask.cli.record import Record

            self._record = Record(self.settings, self.screen)
        return self._record

    @contextmanager
    def client(
        self, *, needs_list: bool = False, rejoin: Iterable[str] = ()
    ) -> Iterator[McpClient]:
        """A connected client, closed again when the block ends. It reports every task it
        meets to the record; requests about the `rejoin` tasks go in the session recorded
        for each (if any), as --session-id would send them."""
        from mcptask.client.connect import connected_client

        log = self.screen.note if self.common.verbose else None
        wanted = set(rejoin)
        sessions = {
            task_id: session
            for task_id, session in (self.record.sessions() if wanted else {}).items()
            if task_id in wanted
        }
        try:
            with connected_client(
                self.settings,
                log=log,
                server_log=log,
                needs_list=needs_list,
                observer=self.record.recorder(),
                task_sessions=sessions,
            ) as client:
                yield client
        finally:
            self.record.flush()


def color_wanted(no_color: bool) -> bool:
    """Colour unless `--no-color` or `NO_COLOR` says otherwise."""
    return not (no_color or os.environ.get("NO_COLOR"))


def finite(option: str, value: float | None) -> None:
    """Refuse infinity and NaN for an option that takes seconds."""
    if value is not None and not math.isfinite(value):
        raise UsageError(f"{option} takes a finite number of seconds")


def statuses(text: str | None) -> tuple[str, ...] | None:
    """The parsed `--status` filter, or None when not given."""
    from mcptask.protocol import parse_statuses

    if text is None:
        return None
    try:
        return parse_statuses(text)
    except ValueError as exc:
        raise UsageError(f"--status: {exc}") from None

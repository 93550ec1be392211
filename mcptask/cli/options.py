"""The options the server commands share, declared once as the fields of `Common`, and how
they reach a command: before or after its name, gathered into its `common` argument; and
what TAB completes from this machine: profile names and known task ids (nothing goes over
the network, and neither httpx nor Rich is imported)."""

import contextlib
import functools
import inspect
import math
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Annotated, Any, TypeVar, cast

import typer

from mcptask.errors import UsageError

SHELL_WORD = re.compile(r"[A-Za-z0-9._:@%+=,/][A-Za-z0-9._:@%+=,/-]*")
"""A candidate every shell takes as one plain word: no space, quote, `$`, backslash, glob or
separator, and no leading `-` (an option). Task ids are server text and reach the command
line as the user presses Enter; what does not fit is not offered (the user can still type it,
quoted)."""

STATUS_WORD = re.compile(r"[A-Za-z0-9_ -]*")
"""A status shown beside an id (zsh and fish): zsh's script evaluates it, so a plain word."""


def shell_word(text: str) -> bool:
    """Whether `text` can be offered to a shell as it is."""
    return SHELL_WORD.fullmatch(text) is not None


def complete_profile(incomplete: str) -> list[str]:
    """Saved profile names that start with `incomplete`."""
    from mcptask.store.paths import profile_names

    return [name for name in profile_names() if name.startswith(incomplete) and shell_word(name)]


def complete_task_id(ctx: typer.Context, incomplete: str) -> list[tuple[str, str]]:
    """Recorded task ids that start with `incomplete`, each with its last status: those of
    the server on the command line (or in MCPTASK_URL / MCPTASK_SERVER), else of every
    server. Only ids that are plain shell words are offered (`SHELL_WORD`), and only statuses
    that are plain words once cleaned are shown."""
    from mcptask.output.sanitize import clean
    from mcptask.store.database import complete_task_ids

    url = ctx.params.get("url") or os.environ.get("MCPTASK_URL")
    command = ctx.params.get("server") or os.environ.get("MCPTASK_SERVER")
    identity = None
    if url or command:  # only then its module (and hashlib's OpenSSL) is imported
        from mcptask.store.identity import ServerIdentity

        with contextlib.suppress(ValueError):
            if url:
                identity = ServerIdentity.for_url(url)
            elif command:
                identity = ServerIdentity.for_command(command)
    offered = []
    for task_id, status in complete_task_ids(os.environ, identity, incomplete):
        shown = clean(status) if status else ""
        if shell_word(task_id):
            offered.append((task_id, shown if STATUS_WORD.fullmatch(shown) else ""))
    return offered


_server = functools.partial(typer.Option, rich_help_panel="Server")
_sign_in = functools.partial(typer.Option, rich_help_panel="Sign-in")
_output = functools.partial(typer.Option, rich_help_panel="Output")

OutputOption = Annotated[
    str | None,
    _output(
        "--output",
        "-o",
        help="table, json, jsonl or ids (default: table on a terminal, else json).",
    ),
]
StatusOption = Annotated[
    str | None,
    typer.Option("--status", help="Only these statuses, comma-separated (e.g. working,failed)."),
]
TaskIdArgument = Annotated[
    str, typer.Argument(metavar="ID", help="The task id.", autocompletion=complete_task_id)
]
task_ids_argument = functools.partial(
    typer.Argument, metavar="[ID]...", autocompletion=complete_task_id
)
"""Task ids, TAB-completed from the record of known tasks; each command says what they are."""
wait_timeout_option = functools.partial(typer.Option, "--wait-timeout", min=0.0)
"""--wait-timeout: seconds; each command says what it waits for."""
ServerUrlArgument = Annotated[
    str | None, typer.Argument(help="The server URL (else --url, --profile or MCPTASK_URL).")
]
AnswerOption = Annotated[
    bool,
    typer.Option(
        "--answer",
        help="On a terminal: when a task waits for input, pause, ask as mcptask answer does, "
        "send the answer and go on watching.",
    ),
]
KnownOption = Annotated[
    bool,
    typer.Option(
        "--known",
        help="Act on the tasks recorded here for this server, each refreshed with tasks/get "
        "first (the way to work in bulk without tasks/list).",
    ),
]


_PROFILE = _server(
    "--profile",
    "-P",
    help="Use a saved profile (env MCPTASK_PROFILE; see: mcptask profiles); connect, "
    "list, get, cancel and watch take several: a,b, -P a -P b, or a pattern such as 'prod-*'.",
    autocompletion=complete_profile,
)
_REPEATED_PROFILE = Annotated[list[str] | None, _PROFILE]
"""`--profile` as the line reads it: one item per `-P`, joined by commas into `Common`'s."""


@dataclass(frozen=True)
class Common:
    """The shared options of one invocation, as the command line gave them (in help's order)."""

    url: Annotated[
        str | None,
        _server("--url", help="Streamable HTTP endpoint of the server (env MCPTASK_URL)."),
    ] = None
    server: Annotated[
        str | None,
        _server(
            "--server",
            help="Server command to run over stdio, without a shell (env MCPTASK_SERVER).",
        ),
    ] = None
    profile: Annotated[str | None, _PROFILE] = None
    """One name, or several as `a,b` or a pattern; `-P a -P b` arrives as `a,b`."""
    config: Annotated[
        Path | None,
        _server(
            "--config",
            help="An MCP client config file (mcpServers, or VS Code's servers): --profile "
            "names one of its servers (env MCPTASK_CONFIG).",
            dir_okay=False,
        ),
    ] = None
    config_env: Annotated[
        list[str] | None,
        _server(
            "--config-env",
            metavar="NAME",
            help="Let the --config file's placeholders read this environment variable "
            "(repeatable; none is read otherwise).",
        ),
    ] = None
    header: Annotated[
        list[str] | None,
        _server("--header", "-H", help="Extra HTTP header 'Name: value' (repeatable)."),
    ] = None
    env: Annotated[
        list[str] | None,
        _server(
            "--env", "-e", help="KEY=VALUE in the environment of a --server process (repeatable)."
        ),
    ] = None
    inherit_env: Annotated[
        bool,
        _server(
            "--inherit-env",
            help="Give a --server process all of this environment (default: only HOME, "
            "LOGNAME, PATH, SHELL, TERM, USER and what --env or the profile passes).",
        ),
    ] = False
    token_file: Annotated[
        Path | None,
        _server(
            "--token-file",
            help="Read a bearer token from this file (else MCPTASK_TOKEN).",
            dir_okay=False,
        ),
    ] = None
    token_env: Annotated[
        str | None,
        _server("--token-env", metavar="NAME", help="Read a bearer token from this variable."),
    ] = None
    session_id: Annotated[
        str | None, _server("--session-id", help="Join this existing Streamable HTTP session.")
    ] = None
    timeout: Annotated[
        float | None,
        _server(
            "--timeout",
            help="Seconds each answer may take in all; an HTTP request not answered in time is "
            "not retried (default 30).",
            min=0.001,
        ),
    ] = None
    protocol: Annotated[
        str | None,
        _server(
            "--protocol",
            help="auto (discover, else initialize; the default), 2025-11-25 or 2026-07-28.",
        ),
    ] = None
    ca_cert: Annotated[
        Path | None,
        _server(
            "--ca-cert",
            help="Trust the CA certificates in this PEM file (else SSL_CERT_FILE, else the "
            "system's).",
            dir_okay=False,
        ),
    ] = None
    insecure: Annotated[
        bool, _server("--insecure", help="Do not verify the server's TLS certificate.")
    ] = False
    retries: Annotated[
        int | None,
        _server(
            "--retries",
            min=0,
            help="Retry a transient failure this many times (default 4; watch: as long as "
            "--retry-for allows).",
        ),
    ] = None
    retry_for: Annotated[
        float | None,
        _server(
            "--retry-for",
            min=0.0,
            help="Seconds after a request's first failure during which it is retried (default 30).",
        ),
    ] = None
    auth: Annotated[
        str | None,
        _sign_in(
            "--auth",
            metavar="METHOD",
            help="Sign-in: auto (cached token, else sign in as configured; the default), none, "
            "client-credentials (CI: never a browser) or browser (env MCPTASK_AUTH).",
        ),
    ] = None
    client_id: Annotated[
        str | None,
        _sign_in(
            "--client-id",
            metavar="ID",
            help="OAuth client id registered for mcptask (env MCPTASK_CLIENT_ID).",
        ),
    ] = None
    client_secret_file: Annotated[
        Path | None,
        _sign_in(
            "--client-secret-file",
            help="Read the OAuth client secret from this file (else MCPTASK_CLIENT_SECRET).",
            dir_okay=False,
        ),
    ] = None
    client_key_file: Annotated[
        Path | None,
        _sign_in(
            "--client-key-file",
            help="PEM private key: sign in with a JWT assertion, private_key_jwt "
            "(env MCPTASK_CLIENT_KEY_FILE).",
            dir_okay=False,
        ),
    ] = None
    client_issuer: Annotated[
        str | None,
        _sign_in(
            "--client-issuer",
            metavar="URL",
            help="The authorization server (issuer) the client belongs to: its secret or key "
            "goes there only (env MCPTASK_CLIENT_ISSUER).",
        ),
    ] = None
    scope: Annotated[
        str | None,
        _sign_in(
            "--scope",
            help="Scopes to ask for, space-separated (default: what the server asks for).",
        ),
    ] = None
    no_browser: Annotated[
        bool, _sign_in("--no-browser", help="Print the sign-in URL instead of opening a browser.")
    ] = False
    output: OutputOption = None
    verbose: Annotated[
        bool, _output("--verbose", "-v", help="Log the wire traffic to stderr (redacted).")
    ] = False
    no_color: Annotated[bool, _output("--no-color", help="No colours (also NO_COLOR).")] = False


# No `from __future__ import annotations` in this module: the fields' Annotated types are
# objects at hand, not 23 strings to evaluate at every start.
_SHARED = tuple(
    inspect.Parameter(
        field.name,
        inspect.Parameter.KEYWORD_ONLY,
        annotation=(
            _REPEATED_PROFILE if field.name == "profile" else Common.__annotations__[field.name]
        ),
        default=field.default,
    )
    for field in fields(Common)
)
"""The options every server command takes (also before the command name), as `Common`."""

_REPEATABLE = frozenset({"header", "env", "profile"})
"""Given both before and after the command name, these add up; the others: the later wins."""

Function = TypeVar("Function", bound=Callable[..., None])


def with_server_options(command: Function) -> Function:
    """Give a command the shared server options, gathered into its `common: Common` argument.
    Typer reads options from a signature, so the command's is rewritten: a context, its own
    parameters, then `Common`'s fields. The root takes them too, so that they may stand
    before the command name (`mcptask --profile prod list`): a command merges them in."""

    def run_command(ctx: typer.Context, **arguments: Any) -> None:
        shared = {option.name: arguments.pop(option.name) for option in _SHARED}
        command(common=_merged(ctx, shared), **arguments)

    signature = inspect.signature(command, eval_str=True)
    own = [p for p in signature.parameters.values() if p.name != "common"]
    context = inspect.Parameter(
        "ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=typer.Context
    )
    parameters = [context, *own, *_SHARED]
    functools.update_wrapper(run_command, command)
    run_command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    run_command.__annotations__ = {p.name: p.annotation for p in parameters}
    return cast(Function, run_command)


def _merged(ctx: typer.Context, here: dict[str, Any]) -> Common:
    """The command's options over the root's: the later one on the line wins."""
    root = ctx.parent
    values: dict[str, Any] = dict(here)
    if root is not None:
        values = {
            name: value if _given(ctx, name) or not _given(root, name) else root.params.get(name)
            for name, value in here.items()
        }
        for name in _REPEATABLE:
            values[name] = [*(root.params.get(name) or []), *(here[name] or [])] or None
    # `-P a -P b` is `-P a,b`; one `-P NAME` stays that name (a --config server's own name
    # may hold a comma: it is named alone).
    values["profile"] = ",".join(dict.fromkeys(values["profile"] or [])) or None
    return Common(**values)


def _given(ctx: Any, name: str) -> bool:
    source = ctx.get_parameter_source(name)
    return source is not None and source.name in ("COMMANDLINE", "ENVIRONMENT", "PROMPT")


def color_wanted(no_color: bool) -> bool:
    """Colour unless `--no-color` or `NO_COLOR` says otherwise."""
    return not (no_color or os.environ.get("NO_COLOR"))


def finite(option: str, value: float | None, unit: str = "of seconds") -> None:
    """Refuse infinity and NaN for an option that takes a number (`unit`: of seconds, a second)."""
    if value is not None and not math.isfinite(value):
        raise UsageError(f"{option} takes a finite number {unit}")


def statuses(text: str | None) -> tuple[str, ...] | None:
    """The parsed `--status` filter, or None when not given."""
    from mcptask.protocol.tasks import parse_statuses

    if text is None:
        return None
    try:
        return parse_statuses(text)
    except ValueError as exc:
        raise UsageError(f"--status: {exc}") from None

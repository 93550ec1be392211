"""Generate docs/reference/ and the man pages in docs/man/ from the code, so they cannot drift.

Commands and options come from the Click commands behind `--help` (their public API: params,
help records, usage), examples from `mcptask.cli.app`, exit codes from the members of
`mcptask.errors.ExitCode` and their docstrings, the reference server's switches from its
argparse parser. `tests/docs/test_reference.py` fails when a committed file differs from what
this prints.

    python scripts/docs_reference.py          # write the files
    python scripts/docs_reference.py --check  # exit 1 and name the stale files
"""

from __future__ import annotations

import argparse
import ast
import inspect
import itertools
import os
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

import typer.main  # noqa: E402

from mcptask import __version__, errors  # noqa: E402
from mcptask.cli.app import COMMANDS, EXAMPLES, app  # noqa: E402
from mcptask.reference_server.cli_options import build_parser  # noqa: E402

SHARED_PANELS = ("Server", "Sign-in", "Output")
"""The option panels every server command shares: documented once, under the root."""

ENVIRONMENT: dict[str, str] = {
    "MCPTASK_URL": "The server's Streamable HTTP endpoint, when the line names no server "
    "(as `--url`).",
    "MCPTASK_SERVER": "A server command to run over stdio, when the line names no server "
    "(as `--server`).",
    "MCPTASK_PROFILE": "The saved profile to use, when the line names no server (as `--profile`).",
    "MCPTASK_CONFIG": "An MCP client config file whose servers `--profile` names (as `--config`).",
    "MCPTASK_CONFIG_ENV": "Environment variables the `--config` file's placeholders may read, "
    "comma-separated (as `--config-env`).",
    "MCPTASK_TOKEN": "A bearer token sent as `Authorization: Bearer …` (as `--token-file`).",
    "MCPTASK_AUTH": "How to sign in: `auto`, `client-credentials`, `browser` or `none` "
    "(as `--auth`).",
    "MCPTASK_CLIENT_ID": "The OAuth client registered for mcptask (as `--client-id`).",
    "MCPTASK_CLIENT_SECRET": "Its client secret (as `--client-secret-file`).",
    "MCPTASK_CLIENT_KEY_FILE": "Its private key, for `private_key_jwt` (as `--client-key-file`).",
    "MCPTASK_CLIENT_ISSUER": "The authorization server (issuer) the client secret or key may go "
    "to, and only it (as `--client-issuer`).",
    "MCPTASK_CLIENT_METADATA_URL": "A Client ID Metadata Document URL to use as the client id.",
    "MCPTASK_SCOPE": "The scopes to ask for, space-separated (as `--scope`).",
    "MCPTASK_WIDE_RESOURCE": "`1`: ask for tokens for the wider resource (a parent path) a "
    "server's protected resource metadata names, not for the server's own URL.",
    "MCPTASK_CONFIG_DIR": "Where `profiles.toml` is (else `$XDG_CONFIG_HOME/mcptask`, else "
    "`~/.config/mcptask`).",
    "MCPTASK_STATE_DIR": "Where the token cache and the record of known tasks are (else "
    "`$XDG_STATE_HOME/mcptask`, else `~/.local/state/mcptask`).",
    "MCPTASK_MAX_ANSWER_BYTES": "The largest answer mcptask reads, in bytes (default 32 MiB).",
    "MCPTASK_DEBUG": "Set: an internal error shows its traceback instead of one line.",
    "MCPTASK_GC_TUNING": "`0`: leave Python's garbage collector at its defaults.",
    "MCPTASK_REFERENCE_REQUIRE_TOKEN": "`reference-server`: the bearer token it requires "
    "(as `--require-token-file`).",
    "MCPTASK_REFERENCE_OAUTH_CLIENTS": "`reference-server --oauth`: pre-registered clients, "
    "`ID:SECRET` one a line (as `--oauth-clients-file`).",
    "NO_COLOR": "Set: no colours (as `--no-color`).",
    "BROWSER": "The browser sign-in opens (Python's `webbrowser`); set, it also lets commands "
    "sign in without a terminal.",
    "SSL_CERT_FILE": "CA certificates to trust for `https://` servers (as `--ca-cert`).",
    "HTTPS_PROXY, HTTP_PROXY, ALL_PROXY, NO_PROXY": "Proxies, as everywhere.",
    "XDG_CONFIG_HOME, XDG_STATE_HOME": "The base directories of configuration and state.",
}
"""Every environment variable mcptask reads, and what it does (the test checks that every
`MCPTASK_*` name in the code is here, and every one here is in the code)."""


@dataclass(frozen=True)
class Option:
    """One option or argument as `--help` shows it."""

    names: str
    help: str


@dataclass(frozen=True)
class Command:
    """One command: its usage line, its help text, its own options, its examples."""

    name: str
    usage: str
    help: str
    options: tuple[Option, ...]
    examples: tuple[str, ...]
    verbatim_help: str = ""  # reference-server: its argparse help, as it prints it


def _options(command: Any, ctx: Any, *, panels: tuple[str, ...] | None) -> tuple[Option, ...]:
    """The command's options, those in `panels` (None: those in no shared panel)."""
    found = []
    for param in command.params:
        panel = getattr(param, "rich_help_panel", None)
        wanted = panel in panels if panels is not None else panel not in SHARED_PANELS
        record = param.get_help_record(ctx)
        if wanted and record is not None and not getattr(param, "hidden", False):
            found.append(Option(record[0], " ".join(record[1].split())))
    return tuple(found)


def _root() -> tuple[Any, Any]:
    group = typer.main.get_command(app)
    return group, group.context_class(group, info_name="mcptask")


def commands() -> Iterator[Command]:
    """Every command, in help's order."""
    group, root = _root()
    for name in COMMANDS:
        command = group.commands[name]
        ctx = command.context_class(command, info_name=name, parent=root)
        examples = EXAMPLES.get(name, ())
        if name == "reference-server":
            parser = build_parser()
            # argparse wraps to COLUMNS: a fixed width keeps the files stable, set only while
            # the help is drawn (tests import this module; their process keeps its COLUMNS).
            with mock.patch.dict(os.environ, {"COLUMNS": "80"}):
                usage, verbatim = parser.format_usage().strip(), parser.format_help()
            yield Command(name, usage, command.help or "", (), examples, verbatim_help=verbatim)
            continue
        usage = command.get_usage(ctx).removeprefix("Usage: ")
        options = _options(command, ctx, panels=None)
        yield Command(name, usage, inspect.cleandoc(command.help or ""), options, examples)


def shared_options() -> dict[str, tuple[Option, ...]]:
    """The options every server command takes, by panel."""
    group, root = _root()
    command = group.commands["cancel"]
    ctx = command.context_class(command, info_name="cancel", parent=root)
    return {panel: _options(command, ctx, panels=(panel,)) for panel in SHARED_PANELS}


def exit_codes() -> list[tuple[int, str, str]]:
    """(code, name, meaning) of every ExitCode member, the meaning from its docstring."""
    tree = ast.parse(inspect.getsource(errors.ExitCode))
    body = tree.body[0].body  # type: ignore[attr-defined]
    meanings: dict[str, str] = {}
    for statement, following in itertools.pairwise(body):
        if (
            isinstance(statement, ast.Assign)
            and isinstance(following, ast.Expr)
            and isinstance(following.value, ast.Constant)
        ):
            target = statement.targets[0]
            assert isinstance(target, ast.Name)
            meanings[target.id] = " ".join(str(following.value.value).split())
    return [(int(code), code.name, meanings[code.name]) for code in errors.ExitCode]


# -- Markdown ---------------------------------------------------------------------------------

HEADER = "<!-- Generated by scripts/docs_reference.py from the code: do not edit by hand. -->\n"


def _md(text: str) -> str:
    return text.replace("<", "&lt;").replace(">", "&gt;")


def _md_options(options: tuple[Option, ...]) -> list[str]:
    return [f"- `{option.names}`: {_md(option.help)}" for option in options]


def commands_markdown() -> str:
    group, root = _root()
    lines = [
        HEADER,
        "# Commands",
        "",
        f"`mcptask` {__version__}. {_md(group.help or '')}",
        "",
        "```",
        group.get_usage(root).removeprefix("Usage: "),
        "```",
        "",
        "Every command that talks to a server takes the options below. They may stand before or",
        "after the command name; given in both places, the later one wins (`-H` and `--env` add",
        "up). Exit codes: [exit-codes.md](exit-codes.md); environment:",
        "[environment.md](environment.md).",
        "",
    ]
    lines += [
        "## Options of `mcptask` itself",
        "",
        *_md_options(_options(group, root, panels=None)),
    ]
    lines.append("")
    for panel, options in shared_options().items():
        lines += [f"## {panel} options", "", *_md_options(options), ""]
    for command in commands():
        lines += [f"## `mcptask {command.name}`", "", "```", command.usage, "```", ""]
        if command.verbatim_help:
            lines += ["```", command.verbatim_help.rstrip(), "```", ""]
        else:
            lines += [_md(command.help), ""]
        if command.options:
            lines += ["Options:", "", *_md_options(command.options), ""]
        if command.examples:
            lines += ["Examples:", "", "```sh", *command.examples, "```", ""]
    return "\n".join(lines).rstrip() + "\n"


def exit_codes_markdown() -> str:
    lines = [HEADER, "# Exit codes", "", "| code | name | meaning |", "|---|---|---|"]
    lines += [f"| {code} | `{name}` | {_md(meaning)} |" for code, name, meaning in exit_codes()]
    return "\n".join(lines) + "\n"


def environment_markdown() -> str:
    lines = [HEADER, "# Environment variables", "", "| variable | what it does |", "|---|---|"]
    lines += [f"| `{name}` | {_md(text)} |" for name, text in ENVIRONMENT.items()]
    return "\n".join(lines) + "\n"


# -- man pages (roff) -------------------------------------------------------------------------


def _roff(text: str) -> str:
    text = text.replace("\\", "\\e").replace("`", "")
    return "\n".join("\\&" + line if line[:1] in ".'" else line for line in text.split("\n"))


def _man_options(options: tuple[Option, ...]) -> list[str]:
    return [item for o in options for item in (".TP", f"\\fB{_roff(o.names)}\\fR", _roff(o.help))]


def _man_page(name: str, summary: str, body: list[str]) -> str:
    title = name.upper()
    return (
        "\n".join(
            [
                f'.TH {title} 1 "" "mcptask {__version__}" "mcptask manual"',
                ".SH NAME",
                f"{name} \\- {_roff(summary)}",
                *body,
            ]
        )
        + "\n"
    )


def man_pages() -> dict[str, str]:
    """File name → roff text: mcptask(1) and one page per command."""
    group, root = _root()
    codes = [
        item
        for code, _name, meaning in exit_codes()
        for item in (".TP", f"\\fB{code}\\fR", _roff(meaning))
    ]
    env = [item for name, text in ENVIRONMENT.items() for item in (".TP", _roff(name), _roff(text))]
    shared = [
        line
        for panel, options in shared_options().items()
        for line in (f".SS {panel} options", *_man_options(options))
    ]
    see_also = ", ".join(f"\\fBmcptask-{name}\\fR(1)" for name in COMMANDS)
    pages = {
        "mcptask.1": _man_page(
            "mcptask",
            (group.help or "").split(":")[0],
            [
                ".SH SYNOPSIS",
                f"\\fBmcptask\\fR {_roff(group.get_usage(root).removeprefix('Usage: mcptask '))}",
                ".SH DESCRIPTION",
                _roff(group.help or ""),
                ".SH OPTIONS",
                *_man_options(_options(group, root, panels=None)),
                *shared,
                ".SH EXIT STATUS",
                *codes,
                ".SH ENVIRONMENT",
                *env,
                ".SH SEE ALSO",
                see_also,
            ],
        )
    }
    for command in commands():
        body = [".SH SYNOPSIS", _roff(command.usage), ".SH DESCRIPTION"]
        if command.verbatim_help:
            body += [".nf", _roff(command.verbatim_help.rstrip()), ".fi"]
        else:
            body += [_roff(command.help)]
        if command.options:
            body += [".SH OPTIONS", *_man_options(command.options)]
        if command.examples:
            body += [".SH EXAMPLES", ".nf", *(_roff(line) for line in command.examples), ".fi"]
        body += [".SH SEE ALSO", "\\fBmcptask\\fR(1)"]
        summary = re.split(r"(?<=[.;])\s", command.help)[0].rstrip(".;")
        pages[f"mcptask-{command.name}.1"] = _man_page(f"mcptask-{command.name}", summary, body)
    return pages


def generated_files() -> dict[Path, str]:
    """Every generated file, by path relative to the repository."""
    files = {
        Path("docs/reference/commands.md"): commands_markdown(),
        Path("docs/reference/exit-codes.md"): exit_codes_markdown(),
        Path("docs/reference/environment.md"): environment_markdown(),
    }
    files |= {Path("docs/man", name): text for name, text in man_pages().items()}
    return files


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--check", action="store_true", help="name stale files; write nothing")
    args = parser.parse_args()
    stale = []
    for relative, text in generated_files().items():
        path = REPO_ROOT / relative
        if path.exists() and path.read_text(encoding="utf-8") == text:
            continue
        stale.append(str(relative))
        if not args.check:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    if args.check and stale:
        print("stale (run python scripts/docs_reference.py):", *stale, sep="\n  ")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Build the table that TAB completion answers from (`mcptask/completion_spec.json`), by
walking the Typer app: every command, option and argument, with its help and where its values
come from. The table is generated, committed, and checked against the app by the tests:

    python -m mcptask.cli.completion_table > mcptask/completion_spec.json

It exists so that a TAB imports neither Typer nor the app (see `mcptask/completion.py`).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import typer
import typer.main
from typer._completion_classes import _sanitize_help_text

from mcptask.cli.app import app

UNWRAPPED = 100_000


def build() -> dict[str, Any]:
    """The completion table of the app, as plain data."""
    # Typer renders help through Rich, which wraps it to the terminal: a table is not for
    # one terminal, so it is rendered unwrapped.
    columns = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = str(UNWRAPPED)
    try:
        return _build()
    finally:
        if columns is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = columns


def _build() -> dict[str, Any]:
    root = typer.main.get_command(app)
    context = root.make_context("mcptask", [], resilient_parsing=True)
    commands: dict[str, Any] = {}
    for name in root.list_commands(context):  # type: ignore[attr-defined]
        command = root.get_command(context, name)  # type: ignore[attr-defined]
        if command is None or command.hidden:
            continue
        sub = command.make_context(name, [], parent=context, resilient_parsing=True)
        commands[name] = {"help": command.get_short_help_str(), **_parameters(command, sub)}
    return {"root": {**_parameters(root, context), "commands": commands}}


def _parameters(command: Any, context: Any) -> dict[str, Any]:
    options: list[dict[str, Any]] = []
    arguments: list[dict[str, Any]] = []
    for param in command.get_params(context):
        if param.param_type_name == "argument":
            arguments.append({"name": param.name, "nargs": param.nargs, "values": _values(param)})
        elif not param.hidden:
            names = [*param.opts, *param.secondary_opts]
            if set(names) == set(context.help_option_names):
                # Click builds the help option's names from a set: its order varies from one
                # process to the next. The table keeps the declared order.
                names = [name for name in context.help_option_names if name in names]
            options.append(
                {
                    "names": names,
                    "flag": bool(param.is_flag or param.count),
                    "multiple": bool(param.multiple),
                    "help": _sanitize_help_text(param.help) if param.help else None,
                    "values": _values(param),
                }
            )
    return {"options": options, "arguments": arguments}


def _values(param: Any) -> str | list[str] | None:
    """Where a parameter's values come from: a named source, a list of choices, `file`."""
    custom = getattr(param, "_custom_shell_complete", None)
    if custom is not None:
        # Typer wraps the autocompletion function; the function names its source.
        for cell in custom.__closure__ or ():
            source = getattr(cell.cell_contents, "completion_source", None)
            if isinstance(source, str):
                return source
        raise ValueError(f"{param.name}: an autocompletion without a completion_source")
    type_name = type(param.type).__name__
    if type_name == "Choice":
        return [str(choice) for choice in param.type.choices]
    return "file" if type_name in ("Path", "File") else None


def render() -> str:
    """The file `mcptask/completion_spec.json` (one option or argument per line)."""
    return json.dumps(build(), indent=1, ensure_ascii=False) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())

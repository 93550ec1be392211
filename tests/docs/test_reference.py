"""docs/reference/ and docs/man/ are what scripts/docs_reference.py makes of the code now, every
environment variable the code reads is documented, and every example is a command line the
parser takes."""

from __future__ import annotations

import ast
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
import typer.main

from mcptask.cli.app import COMMANDS, EXAMPLES, app
from mcptask.reference_server.cli_options import build_parser
from scripts.docs_reference import ENVIRONMENT, REPO_ROOT, generated_files

ENV_NAME = re.compile(r"MCPTASK_[A-Z_]+")


FILES = generated_files()


@pytest.mark.parametrize("relative", sorted(FILES, key=str), ids=str)
def test_the_committed_reference_is_generated_from_the_code(relative: Path) -> None:
    path = REPO_ROOT / relative
    assert path.exists(), f"{relative} is missing: run python scripts/docs_reference.py"
    assert path.read_text(encoding="utf-8") == FILES[relative], (
        f"{relative} is stale: run python scripts/docs_reference.py"
    )


def _environment_names_in_code() -> set[str]:
    """Every MCPTASK_* name that stands alone as a string in the package (what it reads)."""
    names = set()
    for path in (REPO_ROOT / "mcptask").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            value = node.value if isinstance(node, ast.Constant) else None
            if isinstance(value, str) and ENV_NAME.fullmatch(value):
                names.add(value)
    return names


def test_every_environment_variable_read_is_documented_and_no_other() -> None:
    documented = {name for name in ENVIRONMENT if ENV_NAME.fullmatch(name)}
    assert _environment_names_in_code() == documented


def _root_group() -> Any:
    """The root group (a Click group: mypy sees Typer's return type as a plain Command)."""
    return typer.main.get_command(app)


def _invocations(example: str) -> list[list[str]]:
    """The mcptask command lines of an example (the parts of a pipeline that run mcptask)."""
    words = shlex.split(example, comments=True)
    parts: list[list[str]] = [[]]
    for word in words:
        if word in ("|", ">>", ">"):
            parts.append([])
        else:
            parts[-1].append(word)
    return [part[1:] for part in parts if part[:1] == ["mcptask"]]


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_command_has_examples_the_parser_takes(name: str) -> None:
    group = _root_group()
    assert EXAMPLES.get(name), f"{name} has no examples"
    for example in EXAMPLES[name]:
        for argv in _invocations(example):
            command_name, args = argv[0], argv[1:]
            if command_name == "reference-server":
                build_parser().parse_args(args)  # exits 2 on a bad switch
                continue
            root = group.make_context("mcptask", [command_name], resilient_parsing=True)
            command = group.commands[command_name]
            command.make_context(command_name, args, parent=root)  # raises on a bad option


def test_a_bad_example_would_be_caught() -> None:
    group = _root_group()
    root = group.make_context("mcptask", ["cancel"], resilient_parsing=True)
    with pytest.raises(Exception, match="No such option"):
        group.commands["cancel"].make_context("cancel", ["--all-workin"], parent=root)

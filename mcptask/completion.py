"""TAB completion without the app: the answers Typer's completion would give, from the
generated table `completion_spec.json`, in the same wire formats for bash, zsh and fish.

The scripts in completions/ run `mcptask` with `_MCPTASK_COMPLETE=complete_<shell>` on every
TAB; `mcptask.entry` hands that here before anything heavy is imported. Values that live on
this machine (profile names, known task ids) are read from their files; nothing goes over
the network. It follows Click's rules (`shell_completion._resolve_incomplete`): an incomplete
word that starts an option completes option names (those not given yet, unless repeatable);
after an option that takes a value, its values; else the first argument still open; else,
at the top, the command names.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

SPEC_FILE = Path(__file__).with_name("completion_spec.json")

Item = tuple[str, str | None]
Values = Callable[[str, Mapping[str, str]], list[Item]]
"""A source of values: (the incomplete word, the values the command's options were given by
their first name, e.g. `--url`) -> (value, help) pairs."""


def _profiles(incomplete: str, given: Mapping[str, str]) -> list[Item]:
    from mcptask.store.profile_names import profile_names

    return [(name, None) for name in profile_names() if name.startswith(incomplete)]


def _task_ids(incomplete: str, given: Mapping[str, str]) -> list[Item]:
    """Recorded task ids, each with its last status: those of the server the line (or
    MCPTASK_URL / MCPTASK_SERVER) names, else of every server."""
    import os

    from mcptask.store.identity import ServerIdentity
    from mcptask.store.task_ids import complete_task_ids

    url = given.get("--url") or os.environ.get("MCPTASK_URL")
    command = given.get("--server") or os.environ.get("MCPTASK_SERVER")
    identity: ServerIdentity | None = None
    try:
        if url:
            identity = ServerIdentity.for_url(url)
        elif command:
            identity = ServerIdentity.for_command(command)
    except ValueError:
        identity = None
    from mcptask.output.sanitize import clean

    # Ids and statuses are the servers' text: an id with control characters is not offered
    # (the shell would print them), and a status is shown cleaned.
    return [
        (task_id, clean(status) if status else status)
        for task_id, status in complete_task_ids(os.environ, identity, incomplete)
        if clean(task_id) == task_id
    ]


SOURCES: dict[str, Values] = {"profile": _profiles, "task": _task_ids}
"""Where named values come from (the `completion_source` of an autocompletion function)."""


def complete(instruction: str, environ: Mapping[str, str]) -> int | None:
    """Answer one TAB (`complete_bash`, `complete_zsh`, `complete_fish`) on stdout; returns
    the exit status, or None for an instruction this engine leaves to Typer (`source_*`)."""
    shell = instruction.removeprefix("complete_")
    if not instruction.startswith("complete_") or shell not in ("bash", "zsh", "fish"):
        return None
    if shell == "bash":
        words = split(environ.get("COMP_WORDS", ""))
        cword = int(environ.get("COMP_CWORD", "0") or 0)
        args = words[1:cword]
        incomplete = words[cword] if cword < len(words) else ""
    else:
        line = environ.get("_TYPER_COMPLETE_ARGS", "")
        args = split(line)[1:]
        incomplete = ""
        if args and not line.endswith(" "):
            incomplete = args.pop()
    items = completions(args, incomplete)
    if shell == "bash":
        sys.stdout.write("\n".join(value for value, _ in items) + "\n")
    elif shell == "zsh":
        entries = "\n".join(_zsh_item(value, help) for value, help in items)
        sys.stdout.write((f"_arguments '*: :(({entries}))'" if items else "_files") + "\n")
    elif environ.get("_TYPER_COMPLETE_FISH_ACTION") == "is-args":
        return 0 if items else 1
    else:
        lines = [f"{value}\t{_one_line(help)}" if help else value for value, help in items]
        sys.stdout.write("\n".join(lines) + "\n")
    return 0


def completions(args: list[str], incomplete: str) -> list[tuple[str, str | None]]:
    """(value, help) for the incomplete word after the complete words `args`."""
    command, used, positionals, given = _resolve(args)
    if incomplete == "=":
        incomplete = ""
    elif "=" in incomplete and incomplete.startswith("-"):
        name, _, incomplete = incomplete.partition("=")
        args = [*args, name]
    if "--" not in args and incomplete.startswith("-"):
        return _names(command, used, incomplete)
    for option in command["options"]:
        if not option["flag"] and args and args[-1].startswith("-") and args[-1] in option["names"]:
            return _values(option["values"], incomplete, given)
    for index, argument in enumerate(command["arguments"]):
        if argument["nargs"] == -1 or index >= positionals:
            return _values(argument["values"], incomplete, given)
    return _names(command, used, incomplete)


def split(line: str) -> list[str]:
    """Words the way Click splits them: POSIX shell rules, an unfinished quote kept."""
    lexer = shlex.shlex(line, posix=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    words: list[str] = []
    try:
        words.extend(lexer)
    except ValueError:
        words.append(lexer.token)
    return words


def _resolve(args: list[str]) -> tuple[dict[str, Any], set[str], int, dict[str, str]]:
    """The command the words name (else the top), the options given to it (by first name),
    how many positional words it got, and the values its options were given."""
    top: dict[str, Any] = _spec()["root"]
    command, used, positionals, given = top, set[str](), 0, dict[str, str]()
    words = list(args)
    while words:
        word = words.pop(0)
        if word == "--":
            positionals += len(words)
            break
        option = _option(command, word)
        if option is not None:
            name = option["names"][0]
            used.add(name)
            if not option["flag"]:
                if "=" in word and word.startswith("--"):
                    given[name] = word.partition("=")[2]
                elif words:
                    given[name] = words.pop(0)
        elif word.startswith("-"):
            continue  # unknown options are ignored, as Click's resilient parsing does
        elif command is top and word in top["commands"]:
            command, used, given = top["commands"][word], set(), {}
        elif command is top:
            break  # an unknown command: nothing more is known
        else:
            positionals += 1
    return command, used, positionals, given


def _spec() -> dict[str, Any]:
    spec: dict[str, Any] = json.loads(SPEC_FILE.read_text(encoding="utf-8"))
    return spec


def _option(command: dict[str, Any], word: str) -> dict[str, Any] | None:
    name = word.partition("=")[0] if word.startswith("--") else word
    for option in command["options"]:
        if name in option["names"]:
            found: dict[str, Any] = option
            return found
    return None


def _names(
    command: dict[str, Any], used: set[str], incomplete: str
) -> list[tuple[str, str | None]]:
    """Command names (at the top), then option names if the word starts like one."""
    items: list[tuple[str, str | None]] = [
        (name, sub["help"])
        for name, sub in command.get("commands", {}).items()
        if name.startswith(incomplete)
    ]
    if incomplete and not incomplete[0].isalnum():
        for option in command["options"]:
            if option["multiple"] or option["names"][0] not in used:
                names = [name for name in option["names"] if name.startswith(incomplete)]
                items.extend((name, option["help"]) for name in names)
    return items


def _values(
    source: str | list[str] | None, incomplete: str, given: Mapping[str, str]
) -> list[Item]:
    if source is None:
        return []
    if isinstance(source, list):
        return [(choice, None) for choice in source if choice.startswith(incomplete)]
    if source == "file":
        return [(incomplete, None)]
    return SOURCES[source](incomplete, given)


def _one_line(text: str) -> str:
    return re.sub(r"\s", " ", text)


def _zsh_item(value: str, help: str | None) -> str:
    def escape(text: str) -> str:
        return (
            text.replace('"', '""')
            .replace("'", "''")
            .replace("$", "\\$")
            .replace("`", "\\`")
            .replace(":", r"\\:")
        )

    return f'"{escape(value)}":"{escape(help)}"' if help else f'"{escape(value)}"'

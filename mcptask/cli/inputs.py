"""What commands read from the command line, files and stdin: task ids, a tool's arguments,
and the values of `--header` and `--env`.

Task ids: arguments, `--from-file FILE` and stdin (`-`), one per line, in order, each once.

A tool's arguments, HTTPie's way: `KEY=VALUE` is a string, `KEY:=JSON` a raw JSON value;
`--args JSON` (or `@FILE`, `@-` for stdin) gives them all at once. The first unescaped `=`
ends the key; a `:` right before it makes the item `:=`. In a key, `\\=`, `\\:` and `\\\\`
stand for `=`, `:` and `\\`. Items add to (and replace keys of) `--args`.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from mcptask.errors import UsageError
from mcptask.output.sanitize import clean

JsonObject = dict[str, Any]
_ESCAPE = re.compile(r"\\([=:\\])")
_ITEM = re.compile(r"((?>\\[=:\\]|[^=])*?)(:?)=(.*)", re.DOTALL)
"""The key (escapes kept, each taken whole), an unescaped `:` right before the first
unescaped `=`, and the value."""


def read_ids(arguments: list[str], from_file: str | None) -> list[str]:
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


def tool_arguments(items: list[str], args: str | None) -> JsonObject:
    """The arguments object: `--args` first, then each item in order (a key given twice as
    an item is a usage error)."""
    arguments: JsonObject = _args_option(args) if args is not None else {}
    given: set[str] = set()
    for item in items:
        key, value, _ = parse_item(item)
        if key in given:
            raise UsageError(f"argument {key!r} is given twice")
        given.add(key)
        arguments[key] = value
    return arguments


def parse_item(item: str, what: str = "tool argument") -> tuple[str, Any, bool]:
    """One `KEY=VALUE` (a string) or `KEY:=JSON` (any JSON value), and whether the value
    came as JSON (`what` names the item in errors)."""
    match = _ITEM.fullmatch(item)
    if match is None:
        raise UsageError(
            f"{what} {item!r} is neither KEY=VALUE (a string) nor KEY:=JSON (a JSON "
            "value); options go before '--'"
        )
    escaped_key, raw_json, value = match.groups()
    key = _ESCAPE.sub(r"\1", escaped_key)
    if not key:
        raise UsageError(f"{what} {item!r} has no KEY before '='")
    if not raw_json:
        return key, value, False
    return key, _parsed(value, f"{what} {key}:="), True


def _args_option(args: str) -> JsonObject:
    """`--args`: a JSON object given inline, or read from `@FILE` (`@-`: stdin)."""
    if args.startswith("@"):
        name = args[1:]
        source = "stdin" if name == "-" else f"--args file {name!r}"
        value = read_json(name, source)
    else:
        source, value = "--args", _parsed(args, "--args")
    if not isinstance(value, dict):
        raise UsageError(f"{source} must be a JSON object (the tool's arguments by name)")
    return value


def read_json(path: str, source: str) -> Any:
    """The JSON value in file `path` (`-`: stdin); errors name it as `source`."""
    return _parsed(read_text(path, source), source)


def read_text(path: str, source: str) -> str:
    """The text of file `path` (`-`: stdin); errors name it as `source`."""
    try:
        return sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read {source}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"{source} is not UTF-8 text") from None


def _parsed(text: str, source: str) -> Any:
    try:
        return json.loads(text, parse_constant=_not_json)
    except ValueError as exc:
        raise UsageError(f"{source} is not valid JSON ({exc})") from None
    except RecursionError:
        raise UsageError(f"{source} is nested too deeply") from None


def _not_json(constant: str) -> Any:
    """Refuse the NaN and Infinity Python's parser takes: they cannot be sent as JSON."""
    raise ValueError(f"{constant} is not a JSON number")


def parse_headers(options: list[str]) -> dict[str, str]:
    """Parse repeated `--header 'Name: value'` options."""
    headers: dict[str, str] = {}
    for option in options:
        name, separator, value = option.partition(":")
        name = name.strip()
        if not separator or not name or not header_safe(name) or " " in name:
            raise UsageError("--header takes 'Name: value' (a header name, a colon, a value)")
        if not header_safe(value.strip()):
            # The value may be a credential: name the header, never show the value.
            raise UsageError(f"the value of --header {name!r} must be printable ASCII")
        headers[name] = value.strip()
    return headers


def parse_env(options: list[str]) -> dict[str, str]:
    """Parse repeated `--env KEY=VALUE` options (for a spawned stdio server)."""
    variables: dict[str, str] = {}
    for option in options:
        name, separator, value = option.partition("=")
        if not separator or not name or not name.replace("_", "a").isalnum() or name[0].isdigit():
            raise UsageError("--env takes KEY=VALUE (a variable name, '=', a value)")
        variables[name] = value
    return variables


def header_safe(text: str) -> bool:
    """True for text that can travel in an HTTP header: printable ASCII, no control bytes."""
    return all(0x20 <= ord(char) <= 0x7E for char in text)

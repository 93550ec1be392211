"""Task ids from the command line, a file and stdin (`-`)."""

from __future__ import annotations

import sys
from pathlib import Path

from mcptask.errors import UsageError
from mcptask.output.sanitize import clean


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

"""JSON text as `json.dumps` writes it: compact lines (`-o jsonl`) and indented objects (the
tasks of `list -o json`)."""

from __future__ import annotations

import json
from collections.abc import Mapping

_SCALARS = (str, int, float, bool, type(None))


def compact(value: object) -> str:
    """`value` as compact JSON text: `json.dumps(value, separators=(",", ":"))`."""
    return json.dumps(value, separators=(",", ":"))


def indented_object(value: Mapping[str, object], margin: str) -> str:
    """`json.dumps(value, indent=2)`, each line after the first after `margin`.

    json indents with its pure-Python encoder (some 8 us a task of `list -o json`); an
    object of scalars is written by the C encoder instead, with the line break and indent
    as the item separator (some 2.5 us), which is the same text.
    """
    if not value or not all(type(member) in _SCALARS for member in value.values()):
        # JSON text holds no raw newline inside a string, so indenting every line is exact.
        return json.dumps(value, indent=2).replace("\n", "\n" + margin)
    inner = "\n" + margin + "  "
    members = json.dumps(value, separators=("," + inner, ": "))[1:-1]
    return "{" + inner + members + "\n" + margin + "}"

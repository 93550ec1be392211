"""Which command a command line names, found without building the app: the root options
(which of them take a value) come from the generated completion table, which the tests keep
current with the app."""

from __future__ import annotations

import json
from pathlib import Path

SPEC_FILE = Path(__file__).resolve().parent.parent / "completion_spec.json"
WHOLE_APP = {"-h", "--help", "--version", "--install-completion", "--show-completion"}
"""Root options that answer for the whole app (its help lists every command)."""


def command_named(args: list[str]) -> str | None:
    """The command of `args` (the first word after the root options), or None when there is
    none or the line cannot be read this simply (then the whole app parses it and says what
    is wrong)."""
    takes_value = _root_options()
    words = iter(args)
    for word in words:
        if word == "--" or word == "-":
            return None
        if not word.startswith("-"):
            return word
        name = word.split("=", 1)[0]
        if name in WHOLE_APP or name[:2] in WHOLE_APP:
            return None
        if name.startswith("--"):
            if name not in takes_value:
                return None  # unknown, or given to a command that is not there
            if takes_value[name] and "=" not in word:
                next(words, None)
            continue
        # Short options: a cluster of flags (-vv), or one that takes a value, attached (-Pprod)
        # or as the next word (-P prod).
        for position, letter in enumerate(word[1:], start=1):
            option = f"-{letter}"
            if option not in takes_value:
                return None
            if takes_value[option]:
                if position == len(word) - 1:
                    next(words, None)
                break
    return None


def _root_options() -> dict[str, bool]:
    """Each root option's names -> whether it takes a value."""
    spec = json.loads(SPEC_FILE.read_text(encoding="utf-8"))
    return {
        name: not option["flag"] for option in spec["root"]["options"] for name in option["names"]
    }

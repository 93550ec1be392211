"""Shell completion's values that live on this machine: profile names (the profiles file)
and known task ids (the record of known tasks). Nothing goes over the network, and neither
httpx nor Rich is imported; Typer and Click do the rest of each TAB."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from mcptask.store.identity import ServerIdentity

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
    identity: ServerIdentity | None = None
    if url or command:  # only then its module (and hashlib's OpenSSL) is imported
        from mcptask.store.identity import ServerIdentity

        try:
            if url:
                identity = ServerIdentity.for_url(url)
            elif command:
                identity = ServerIdentity.for_command(command)
        except ValueError:
            identity = None
    offered = []
    for task_id, status in complete_task_ids(os.environ, identity, incomplete):
        shown = clean(status) if status else ""
        if shell_word(task_id):
            offered.append((task_id, shown if STATUS_WORD.fullmatch(shown) else ""))
    return offered


BASH_SCRIPT = r"""
_mcptask_completion() {
    local IFS=$'\n' word
    local -a words
    # One candidate a line: no splitting on anything else, no globbing, each quoted for the
    # shell (mcptask offers only plain words; this holds even if another candidate came).
    mapfile -t words < <(env COMP_WORDS="${COMP_WORDS[*]}" \
                         COMP_CWORD="$COMP_CWORD" \
                         _MCPTASK_COMPLETE=complete_bash "$1")
    COMPREPLY=()
    for word in "${words[@]}"; do
        printf -v word '%q' "$word"
        COMPREPLY+=("$word")
    done
    return 0
}

complete -o default -F _mcptask_completion mcptask
"""
"""What `_MCPTASK_COMPLETE=source_bash mcptask` prints (completions/mcptask.bash): Typer's
script fills `COMPREPLY=( $( … ) )`, which globs and inserts the words unquoted."""

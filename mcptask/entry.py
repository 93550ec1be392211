"""The `mcptask` executable: it answers `--version` and TAB completion before importing the
app (Typer, httpx, Rich), so that those stay instant; everything else goes to `mcptask.cli`."""

from __future__ import annotations

import os
import sys


def main() -> None:
    """Run mcptask with `sys.argv`."""
    instruction = os.environ.get("_MCPTASK_COMPLETE")
    if instruction:
        from mcptask.completion import complete

        code = complete(instruction, os.environ)
        if code is not None:
            sys.exit(code)
    elif sys.argv[1:] == ["--version"]:
        from mcptask import __version__

        print(f"mcptask {__version__}")
        sys.exit(0)
    from mcptask.cli import main as run

    run()

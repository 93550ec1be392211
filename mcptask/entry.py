"""The `mcptask` executable: `mcptask --version` is answered before anything is imported (it
needs no parser); every other command line goes to the app, `mcptask.cli.app`."""

from __future__ import annotations

import os
import sys


def main() -> None:
    """Run mcptask with `sys.argv`."""
    from mcptask.cli import collector

    collector.defer()
    if sys.argv[1:] == ["--version"]:
        from mcptask import __version__

        try:
            print(f"mcptask {__version__}", flush=True)
        except BrokenPipeError:  # `mcptask --version | true`: nobody reads
            # /dev/null in its place: the interpreter's final flush must not fail again.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(0)
    from mcptask.cli.app import main as run

    run()

"""The `mcptask` executable: `mcptask --version` is answered before anything is imported;
every other command line goes to the app, `mcptask.cli.app`.

The cyclic garbage collector is tuned here, at start and at exit only. A command builds some
40,000 objects that live as long as the process (modules, Typer's commands, httpx's client):
some 60 collections at Python's threshold before the first request, and one more walk at
exit; together about a quarter of a one-shot `get` (bench/one_shot.py). So the process
collects rarely and freezes everything before it exits; an object frozen while only a cycle
keeps it alive is never finalized, so whatever holds a resource is closed explicitly (the
record, the transport, a stdio server's process, temporary files). MCPTASK_GC_TUNING=0
leaves the collector as Python sets it.
"""

from __future__ import annotations

import gc
import os
import sys

THRESHOLD = 50_000
"""New containers between two collections (Python's usual: 700)."""


def main() -> None:
    """Run mcptask with `sys.argv`."""
    tuned = os.environ.get("MCPTASK_GC_TUNING") != "0"
    if tuned:
        gc.set_threshold(THRESHOLD, *gc.get_threshold()[1:])
    if sys.argv[1:] == ["--version"]:
        from mcptask import __version__

        try:
            print(f"mcptask {__version__}", flush=True)
        except BrokenPipeError:  # `mcptask --version | true`: nobody reads
            # /dev/null in its place: the interpreter's final flush must not fail again.
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except OSError as exc:  # a full disk: the one-line error of any output, exit 1
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.stderr.write(f"mcptask: error: cannot write the output: {exc.strerror}\n")
            sys.exit(1)
        sys.exit(0)
    from mcptask.cli.app import run

    try:
        code = run()
    finally:  # also when Typer ends a completion with sys.exit
        if tuned:  # every resource is closed: finalization has nothing to collect
            gc.freeze()
    sys.exit(code)

"""The `mcptask` executable: it answers `--version`, `--help` and TAB completion before
importing the app (Typer, httpx, Rich), so that those stay instant; everything else goes to
`mcptask.cli`."""

from __future__ import annotations

import os
import sys


def main() -> None:
    """Run mcptask with `sys.argv`."""
    from mcptask.cli import collector

    collector.defer()
    instruction = os.environ.get("_MCPTASK_COMPLETE")
    if instruction:
        from mcptask.completion import complete

        code = complete(instruction, os.environ)
        if code is not None:
            sys.exit(code)
    elif sys.argv[1:] == ["--version"]:
        from mcptask import __version__

        _show(f"mcptask {__version__}\n")
        sys.exit(0)
    else:
        from mcptask.help import help_page

        page = help_page(sys.argv[1:], os.environ, sys.stdout)
        if page is not None:
            _show(page)
            # No command at all is a usage error that shows the help (as the app does).
            sys.exit(0 if sys.argv[1:] else 2)
    from mcptask.cli.app import main as run

    run()


def _show(text: str) -> None:
    """Write `text` to stdout; a reader that went away (`| head`) ends it quietly."""
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except BrokenPipeError:
        # /dev/null in its place: the interpreter's final flush must not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except OSError as exc:  # a full disk, say: one line, exit 1, no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.stderr.write(f"mcptask: error: cannot write the output: {exc.strerror or exc}\n")
        sys.exit(1)

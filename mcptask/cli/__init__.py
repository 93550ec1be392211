"""The command line: options and settings, signals, one module per command, and the app that
turns exceptions and reports into exit codes (the only layer that decides them)."""

from mcptask.cli.app import main, run

__all__ = ["main", "run"]

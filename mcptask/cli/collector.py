"""The cyclic garbage collector around a command's start and end.

Starting, a command builds some 40,000 objects that live as long as the process: modules,
classes, functions, Typer's commands, httpx's client. With the collector's usual threshold
(a collection every 700 new containers) it walks them some 60 times before the first request
is sent, about 10 ms of a one-shot command. So start-up collects rarely (`defer`); once it is
over (`started`: the handshake is done), what it built is frozen, left out of every later
collection, and the usual threshold applies again. At the end (`ending`) everything is
frozen, so that Python's finalization does not walk it all once more.

A command that never calls `started` (one that makes no connection) still collects, just
rarely: garbage without cycles is freed at once either way.
"""

from __future__ import annotations

import gc

STARTUP_THRESHOLD = 50_000
"""New containers between two collections while the command starts (the usual: 700)."""

_usual: tuple[int, int, int] | None = None
"""The thresholds `defer` replaced, until `started` puts them back."""


def defer() -> None:
    """Collect rarely until `started` (call it first thing, before the imports)."""
    global _usual
    if _usual is None:
        _usual = gc.get_threshold()
        gc.set_threshold(STARTUP_THRESHOLD, *_usual[1:])


def started() -> None:
    """Start-up is over: freeze what it built and collect as usual from here on."""
    global _usual
    if _usual is not None:
        gc.freeze()
        gc.set_threshold(*_usual)
        _usual = None


def ending() -> None:
    """The process is about to exit: nothing left needs collecting (the rest of the
    finalization, flushing, atexit and joining threads, runs as ever)."""
    gc.freeze()

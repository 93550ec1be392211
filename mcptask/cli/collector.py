"""The cyclic garbage collector around a command's start and end.

Starting, a command builds some 40,000 objects that live as long as the process: modules,
classes, functions, Typer's commands, httpx's client. With the collector's usual threshold
(a collection every 700 new containers) that is some 60 collections before the first request
is sent, several of them of everything built so far: about 10 ms of a one-shot command. So
start-up collects rarely (`defer`); once it is over (`started`: the handshake is done), what
it built is frozen, left out of every later collection, and the usual threshold applies
again. At the end (`ending`) everything is frozen, so that Python's finalization does not
walk it all once more (some 40 ms).

What freezing costs: an object frozen while it is kept alive only by a reference cycle is
never finalized. So whatever holds a resource is closed explicitly, never left to the
collector: the record of known tasks (`KnownTasks.close`), the transport and its connections,
a stdio server's process, temporary files.

A command that never calls `started` (one that makes no connection) still collects, just
rarely, and so does one that spends long before its handshake (`watch` retrying a server
that is down): garbage without cycles is freed at once either way.
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
    """The process is about to exit, every resource closed: finalization collects nothing
    (the rest of it, flushing, atexit and joining threads, runs as ever)."""
    gc.freeze()

"""Turn Ctrl-C and SIGTERM into a flag, so long runs stop between requests, not inside one."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType


class StopSignal:
    """While active, the first SIGINT/SIGTERM sets `event`; a second one interrupts at once.

    Outside the main thread (where signals cannot be caught) it only provides the event.
    An invocation's client retries under its invocation's StopSignal (`Invocation.stop`):
    a wait between retries ends at once, and no retry follows, once the user asked to stop.
    """

    def __init__(self, *, on_stop: Callable[[], None] | None = None) -> None:
        self.event = threading.Event()
        self._requested = False
        self.on_stop = on_stop
        """Called once, from another thread, when the user asks to stop (to wake a wait)."""
        self._previous: dict[int, object] = {}

    def __enter__(self) -> StopSignal:
        self._catch()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._release()

    @contextmanager
    def prompting(self) -> Iterator[None]:
        """While a prompt waits for a line: Ctrl-C, SIGTERM or end of input ends the prompt at once
        and counts as the request to stop (a flag alone would leave the prompt waiting)."""
        caught = [signum for signum in (signal.SIGINT, signal.SIGTERM) if signum in self._previous]
        for signum in caught:
            signal.signal(signum, signal.default_int_handler)
        try:
            yield
        except (KeyboardInterrupt, EOFError):
            self._requested = True
            self.stop()
        finally:
            for signum in caught:
                signal.signal(signum, self._on_signal)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """While a prompt whose Ctrl-C means "no" waits (the bulk-cancel prompt of a run over
        several servers): the handlers of before, so that Ctrl-C interrupts the prompt and
        does not count as the request to stop."""
        self._release()
        try:
            yield
        finally:
            self._catch()

    @property
    def stopped(self) -> bool:
        """True once the user asked to stop."""
        return self._requested or self.event.is_set()

    def _catch(self) -> None:
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._previous[signum] = signal.signal(signum, self._on_signal)

    def _release(self) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]
        self._previous.clear()

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        if self._requested:
            # A second request to stop: do not wait for the request in flight any longer.
            raise KeyboardInterrupt
        self._requested = True
        # A handler runs in the main thread, which may be holding the very lock that
        # Event.set() needs (inside event.wait()): that would deadlock. So the handler only
        # flips a plain flag, and another thread sets the event and wakes the waiters.
        threading.Thread(target=self.stop, name="stop-signal", daemon=True).start()

    def stop(self) -> None:
        """Stop as a first Ctrl-C would (also: the reader of the output went away)."""
        if self.on_stop is not None:
            self.on_stop()
        self.event.set()

"""How long the server takes to answer a task request: the recent round trips, as measured.

A bulk cancel reads it to decide whether confirming a cancel while the next one goes out is
worth a second connection (operations/confirmations.py): only where there is latency to hide.
"""

from __future__ import annotations

import threading
from collections import deque

KEPT = 9
ENOUGH = 3
"""Round trips heard before there is a typical one: the first answers of a process are its
slowest (cold code paths on both sides), and one of two would be half the evidence."""


class RoundTrips:
    """The round trips of the last few task requests that were answered (one attempt each:
    a retry's wait, a refused or lost attempt, is not a round trip). Thread-safe."""

    def __init__(self) -> None:
        self._recent: deque[float] = deque(maxlen=KEPT)
        self._lock = threading.Lock()

    def add(self, seconds: float) -> None:
        """One answered attempt took `seconds`."""
        with self._lock:
            self._recent.append(seconds)

    @property
    def typical(self) -> float | None:
        """The (lower) median of the recent round trips in seconds, None before `ENOUGH` of
        them: a fault or a stall now and then does not move it."""
        with self._lock:
            recent = sorted(self._recent)
        return recent[(len(recent) - 1) // 2] if len(recent) >= ENOUGH else None

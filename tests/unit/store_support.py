"""What the record's unit tests share: two servers, and a clock the test moves."""

from __future__ import annotations

from mcptask.store.identity import ServerIdentity

SERVER = ServerIdentity.for_url("http://127.0.0.1:8765/mcp")
OTHER = ServerIdentity.for_url("http://127.0.0.1:9999/mcp")


class Clock:
    """A clock that stands still until the test sets `now`."""

    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

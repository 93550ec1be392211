"""`mcptask logout`: which tokens were forgotten (never their values)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from rich.text import Text

from mcptask.output.sanitize import clean
from mcptask.output.views.base import View
from mcptask.protocol.jsonrpc import JsonObject
from mcptask.store.tokens import CachedToken


@dataclass(frozen=True)
class SignedOut:
    """The server signed out of (None: every server), and the tokens forgotten."""

    url: str | None
    removed: list[CachedToken]
    cache: Path


class LogoutView(View[SignedOut]):
    """One line, a document, or one line per forgotten token."""

    command = "logout"
    formats = ("table", "json", "jsonl")

    def table(self, shown: SignedOut) -> None:
        """`signed out of URL (N tokens forgotten)`."""
        where = shown.url or "every server"
        count = len(shown.removed)
        if count == 0:
            self.screen.warn(f"no token kept for {where}: nothing to forget")
            return
        noun = "token" if count == 1 else "tokens"
        self.screen.out.print(Text(clean(f"signed out of {where} ({count} {noun} forgotten)")))

    def document(self, shown: SignedOut) -> JsonObject:
        """`{"url", "forgotten": [...], "cache"}`."""
        return {"url": shown.url, "forgotten": list(self.lines(shown)), "cache": str(shown.cache)}

    def lines(self, shown: SignedOut) -> Iterable[JsonObject]:
        """One forgotten token per line: server, issuer, grant."""
        return (
            {"server": t.server, "issuer": t.issuer, "clientId": t.client_id, "grant": t.grant}
            for t in shown.removed
        )

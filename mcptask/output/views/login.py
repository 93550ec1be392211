"""`mcptask login`: who signed us in, for what, until when; never a token."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from rich.table import Table
from rich.text import Text

from mcptask.output.sanitize import clean
from mcptask.output.views.base import View
from mcptask.protocol.jsonrpc import JsonObject
from mcptask.store.tokens import CachedToken


@dataclass(frozen=True)
class SignIn:
    """The outcome of a login: the token's description (None: no sign-in was needed)."""

    server_name: str
    url: str
    token: CachedToken | None
    cache: Path | None


class LoginView(View[SignIn]):
    """A short table, or a JSON document."""

    command = "login"
    formats = ("table", "json", "jsonl")

    def table(self, shown: SignIn) -> None:
        """What the sign-in obtained."""
        table = Table(box=None, show_header=False, pad_edge=False)
        table.add_column(style="bold")
        table.add_column(overflow="fold")
        for name, value in _rows(shown):
            table.add_row(name, Text(clean(value)))
        self.screen.out.print(table)

    def document(self, shown: SignIn) -> JsonObject:
        """`{"server", "url", "signedIn", "issuer", "resource", ...}`."""
        token = shown.token
        return {
            "server": shown.server_name,
            "url": shown.url,
            "signedIn": token is not None,
            "issuer": token.issuer if token else None,
            "resource": token.resource if token else None,
            "clientId": token.client_id if token else None,
            "grant": token.grant if token else None,
            "scope": token.scope if token else None,
            "expiresAt": token.expires_at if token else None,
            "refreshable": bool(token and token.refresh_token),
            "cache": str(shown.cache) if shown.cache else None,
        }


def _rows(shown: SignIn) -> list[tuple[str, str]]:
    token = shown.token
    rows = [("server", f"{shown.server_name} ({shown.url})")]
    if token is None:
        return [*rows, ("signed in", "no (the server needs no sign-in)")]
    rows += [
        ("signed in at", token.issuer),
        ("resource", token.resource),
        ("client", token.client_id),
        ("grant", token.grant.replace("_", " ")),
        ("scope", token.scope or "(none asked)"),
        ("expires", _expiry(token.expires_at)),
        ("refresh", "yes: renewed without asking" if token.refresh_token else "no"),
    ]
    if shown.cache is not None:
        rows.append(("kept in", str(shown.cache)))
    return rows


def _expiry(expires_at: float | None) -> str:
    if expires_at is None:
        return "not stated"
    left = expires_at - time.time()
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(expires_at))
    return f"{when} (in {left / 60:.0f} min)" if left >= 60 else f"{when} (in {left:.0f} s)"

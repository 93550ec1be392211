"""The views of reaching a server: `connect` (what the server offers) and `login`/`logout`
(who signed us in, for what, until when; never a token)."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from mcptask.output.sanitize import clean
from mcptask.output.views import View
from mcptask.protocol.handshake import ServerInfo
from mcptask.protocol.jsonrpc import JsonObject

if TYPE_CHECKING:
    from mcptask.store.tokens import CachedToken


@dataclass(frozen=True)
class Connection:
    """What `connect` learned: the server, and how it was reached."""

    server: ServerInfo
    transport: str
    target: str
    session_id: str | None
    others: list[ServerInfo] = field(default_factory=list)
    """What the server offers in the other era it speaks (auto mode uses either)."""
    problems: list[str] = field(default_factory=list)


class ConnectView(View[Connection]):
    """A panel on a terminal (and a plain word when the server has no tasks), or one
    document; then any problem met surveying the eras (stderr)."""

    command = "connect"
    formats = ("table", "json", "jsonl")

    def show(self, shown: Connection) -> None:
        super().show(shown)
        for problem in shown.problems:
            self.screen.warn(problem)

    def table(self, shown: Connection) -> None:
        """The negotiated era, and any other era the server speaks (auto mode uses it for
        what only it offers, such as a list)."""
        from rich.text import Text

        from mcptask.output.tables import field_table

        server, others = shown.server, shown.others
        table = field_table([])
        name = server.title or server.name or "(unnamed)"
        table.add_row("Server", Text(f"{clean(name)} {clean(server.version)}".strip()))
        protocol = f"{clean(server.protocol_version)} ({server.era} era)"
        if others:
            protocol += "; also " + ", ".join(
                f"{clean(other.protocol_version)} ({other.era} era)" for other in others
            )
        table.add_row("Protocol", Text(protocol))
        if server.extensions:
            table.add_row("Extensions", Text(", ".join(clean(name) for name in server.extensions)))
        table.add_row("Transport", Text(f"{shown.transport} {clean(shown.target)}"))
        table.add_row("Session", Text(clean(shown.session_id) if shown.session_id else "none"))
        names = {"supported": "get", "toolCalls": "task-augmented tools/call"}
        for era in (server, *others):
            offers = Text("not offered by this server", style="yellow")
            if era.task_support.tasks:
                offers = Text("  ").join(
                    Text(("✓ " if on else "✗ ") + names.get(kind, kind), "green" if on else "red")
                    for kind, on in task_support([era]).items()
                )
            table.add_row(f"Tasks ({clean(era.protocol_version)})" if others else "Tasks", offers)
        lister = next((other for other in others if other.task_support.list), None)
        if lister is not None and not server.task_support.list:
            uses = f"list, cancel --all-working and watch without ids use {lister.protocol_version}"
            table.add_row("", Text(f"{clean(uses)} here", style="dim"))
        if server.instructions:
            table.add_row("Instructions", Text(clean(server.instructions)))
        self.screen.out.print(table)
        if not any(era.task_support.tasks for era in (server, *others)):
            self.screen.warn("this server offers no tasks: list, get and cancel will not work here")

    def document(self, shown: Connection) -> JsonObject:
        """`connect -o json`. `tasks` is what mcptask can do with this server in auto mode
        (any era it speaks); `eras` details each era, the negotiated one first."""
        server = shown.server
        eras = [server, *shown.others]
        return {
            "server": {"name": server.name, "version": server.version, "title": server.title},
            "protocolVersion": server.protocol_version,
            "era": server.era,
            "supportedVersions": list(server.supported_versions),
            "extensions": list(server.extensions),
            "transport": shown.transport,
            "target": shown.target,
            "sessionId": shown.session_id,
            "tasks": task_support(eras),
            "eras": [
                {
                    "protocolVersion": era.protocol_version,
                    "era": era.era,
                    "tasks": task_support([era]),
                }
                for era in eras
            ],
            "capabilities": server.capabilities,
            "instructions": server.instructions,
        }


def task_support(eras: list[ServerInfo]) -> JsonObject:
    offers = [era.task_support for era in eras]
    return {
        "supported": any(offer.tasks for offer in offers),
        "list": any(offer.list for offer in offers),
        "cancel": any(offer.cancel for offer in offers),
        "toolCalls": any(offer.tool_calls for offer in offers),
    }


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
        from mcptask.output import tables

        token = shown.token
        rows = [("server", f"{shown.server_name} ({shown.url})")]
        if token is None:
            rows.append(("signed in", "no (the server needs no sign-in)"))
        else:
            expires = "not stated"
            if token.expires_at is not None:
                left = token.expires_at - time.time()
                expires = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(token.expires_at))
                expires += f" (in {left / 60:.0f} min)" if left >= 60 else f" (in {left:.0f} s)"
            rows += [
                ("signed in at", token.issuer),
                ("resource", token.resource),
                ("client", token.client_id),
                ("grant", token.grant.replace("_", " ")),
                ("scope", token.scope or "(none asked)"),
                ("expires", expires),
                ("refresh", "yes: renewed without asking" if token.refresh_token else "no"),
            ]
            if shown.cache is not None:
                rows.append(("kept in", str(shown.cache)))
        self.screen.out.print(tables.field_table(rows))

    def document(self, shown: SignIn) -> JsonObject:
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
        from rich.text import Text

        where = shown.url or "every server"
        count = len(shown.removed)
        if count == 0:
            self.screen.warn(f"no token kept for {where}: nothing to forget")
            return
        noun = "token" if count == 1 else "tokens"
        self.screen.out.print(Text(clean(f"signed out of {where} ({count} {noun} forgotten)")))

    def document(self, shown: SignedOut) -> JsonObject:
        return {"url": shown.url, "forgotten": list(self.lines(shown)), "cache": str(shown.cache)}

    def lines(self, shown: SignedOut) -> Iterable[JsonObject]:
        return (
            {"server": t.server, "issuer": t.issuer, "clientId": t.client_id, "grant": t.grant}
            for t in shown.removed
        )

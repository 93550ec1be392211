"""The views of what this machine keeps: `profiles` (the saved profiles, never the values of
their credentials), `forget` (what was dropped from the record of known tasks) and `handles`
(the record's tasks as task handles of the official tasks library, and what became of
handles taken in)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from mcptask.output.sanitize import clean
from mcptask.output.views import View
from mcptask.protocol.jsonrpc import JsonObject
from mcptask.store.profiles import Profile, ProfileBook, Reference, Value

if TYPE_CHECKING:
    from mcptask.operations.handles import ImportReport


class ProfilesView(View[ProfileBook]):
    """A table, a document, one line per profile, or the names."""

    command = "profiles"

    def table(self, shown: ProfileBook) -> None:
        from mcptask.output import tables

        if not shown.profiles:
            self.screen.warn(
                f"no profiles in {shown.path}; save one with mcptask connect TARGET --save NAME"
            )
            return
        # Where the targets came from, once any came from a config file (else all were typed).
        sourced = any(profile.source is not None for profile in shown.profiles.values())
        columns = ("NAME", "DEFAULT", "TARGET", *(("SOURCE",) if sourced else ()), "SETTINGS")
        rows = []
        for name, profile in sorted(shown.profiles.items()):
            origin, source = "command line", profile.source
            if source is not None:  # the config file, and its server when named otherwise there
                origin = source.file
                if source.server != profile.name:
                    origin += f" (server {source.server})"
            default = "*" if name == shown.default else ""
            settings = ", ".join(_settings(profile))
            rows.append((name, default, profile.target, *((origin,) if sourced else ()), settings))
        self.screen.out.print(tables.grid(columns, rows, overflow="fold"))

    def document(self, shown: ProfileBook) -> JsonObject:
        return {
            "path": str(shown.path),
            "default": shown.default,
            "profiles": list(self.lines(shown)),
        }

    def lines(self, shown: ProfileBook) -> Iterable[JsonObject]:
        for _, profile in sorted(shown.profiles.items()):
            source = profile.source
            yield {
                "name": profile.name,
                "url": profile.url,
                "server": profile.server,
                "protocol": profile.protocol,
                "timeout": profile.timeout,
                "keepSession": profile.keep_session,
                "sessionId": profile.session_id,
                "headers": {name: _source(value) for name, value in profile.headers.items()},
                "env": {name: _source(value) for name, value in profile.env.items()},
                "token": _source(profile.token),
                "auth": profile.auth,
                "clientId": profile.client_id,
                "clientSecret": _source(profile.client_secret),
                "clientKeyFile": profile.client_key_file,
                "clientIssuer": profile.client_issuer,
                "scope": profile.scope,
                "source": None if source is None else asdict(source),
            }

    def ids(self, shown: ProfileBook) -> Iterable[str]:
        return sorted(shown.profiles)


def _source(value: Value | None) -> str | None:
    """Where a value comes from, never the value: `env:NAME`, `file:PATH` or `saved`."""
    if value is None:
        return None
    return f"{value.kind}:{value.name}" if isinstance(value, Reference) else "saved"


def _settings(profile: Profile) -> list[str]:
    settings = (
        ("protocol", profile.protocol or None),
        ("timeout", None if profile.timeout is None else f"{profile.timeout:g}s"),
        ("headers", " ".join(sorted(profile.headers)) if profile.headers else None),
        ("env", " ".join(sorted(profile.env)) if profile.env else None),
        ("token", _source(profile.token)),
        ("auth", profile.auth or None),
        ("client", profile.client_id or None),
        ("client secret", _source(profile.client_secret)),
        ("client key", profile.client_key_file or None),
        ("client issuer", profile.client_issuer or None),
        ("scope", profile.scope or None),
        ("keeps session", (profile.session_id or "(none yet)") if profile.keep_session else None),
    )
    return [f"{name} {value}" for name, value in settings if value is not None]


@dataclass(frozen=True)
class Forgotten:
    """The ids dropped, those asked for that were not recorded, and whose record it was."""

    forgotten: list[str]
    unknown: list[str]
    server: str | None
    """The server's label, or None when the record of every server was meant."""


class ForgetView(View[Forgotten]):
    """A line per id and a count, a document, or the ids; then the ids that were not
    recorded (stderr)."""

    command = "forget"
    formats = ("table", "json", "ids")

    def show(self, shown: Forgotten) -> None:
        super().show(shown)
        if shown.unknown:
            self.screen.warn(
                "not recorded here: " + ", ".join(clean(task_id) for task_id in shown.unknown)
            )

    def table(self, shown: Forgotten) -> None:
        self.screen.plain_lines(shown.forgotten)
        where = f"of {clean(shown.server)}" if shown.server else "of every server"
        count = len(shown.forgotten)
        self.screen.note(f"forgot {count} task{'s' if count != 1 else ''} {where}")

    def document(self, shown: Forgotten) -> JsonObject:
        return {"forgotten": shown.forgotten, "notRecorded": shown.unknown, "server": shown.server}

    def ids(self, shown: Forgotten) -> Iterable[str]:
        return shown.forgotten


class HandleExportView(View[list[JsonObject]]):
    """`handles`: this server's recorded tasks as handles of the official tasks library,
    as it reads them: a JSON list, or one per line."""

    command = "handles"
    formats = ("json", "jsonl")

    def document(self, shown: list[JsonObject]) -> object:
        return shown

    def lines(self, shown: list[JsonObject]) -> Iterable[object]:
        return shown


class HandleImportView(View["ImportReport"]):
    """Each handle's outcome: a line each, or `{"endpointId", "handles": [...]}`."""

    command = "handles --import"
    formats = ("table", "json", "jsonl")

    def show(self, shown: ImportReport) -> None:
        super().show(shown)
        others = [handle.task_id for handle in shown.handles if handle.other_endpoint]
        if others:
            self.screen.warn(
                f"{len(others)} handle(s) were written by mcptask for another server; they "
                "were taken in for this one, as you named it"
            )
        if shown.interrupted:
            self.screen.error("interrupted: the handles after these were not taken in")

    def table(self, shown: ImportReport) -> None:
        said = {"recorded": "recorded ({})", "gone": "gone: the server no longer knows it"}
        self.screen.plain_lines(
            f"{handle.task_id}: "
            + said.get(handle.outcome, "server error: {}").format(
                clean(handle.status or handle.message or "")
            )
            for handle in shown.handles
        )

    def document(self, shown: ImportReport) -> JsonObject:
        return {"endpointId": shown.endpoint, "handles": list(self.lines(shown))}

    def lines(self, shown: ImportReport) -> Iterable[JsonObject]:
        return [
            {
                "taskId": handle.task_id,
                "outcome": handle.outcome,
                "status": handle.status,
                "message": handle.message,
            }
            for handle in shown.handles
        ]

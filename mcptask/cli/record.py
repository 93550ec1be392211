"""The record of known tasks as one command sees it: which server it is for, the recorder the
client reports to, the sessions to rejoin, the ids `--known` acts on.

Recording is a side benefit for most commands: a record that cannot be opened or written is
one warning, never a failed command. Commands that need the record (`--known`, `forget`) fail
with a StateError (exit 2) instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

from mcptask.client.connect import ConnectionSettings
from mcptask.errors import NoTaskList, StateError, UsageError
from mcptask.output.screen import Screen
from mcptask.store.identity import ServerIdentity
from mcptask.store.known import KnownTasks, ServerRecord, StoreFailure
from mcptask.store.recorder import Recorder


def identity_of(url: str | None, server_command: str | None, profile: str = "") -> ServerIdentity:
    """The identity a server's tasks are recorded under: its URL or command, and the profile
    it was reached through (a UsageError for a URL that cannot be read, named without its
    credentials)."""
    if url:
        try:
            return ServerIdentity.for_url(url, profile)
        except ValueError:
            from mcptask.transport.redact import display_url

            raise UsageError(f"invalid server URL {display_url(url)!r}") from None
    from mcptask.transport.redact import display_command
    from mcptask.transport.stdio import split_command

    assert server_command is not None
    return ServerIdentity.for_command(
        server_command,
        label=f"stdio: {display_command(split_command(server_command))}",
        profile=profile,
    )


class Record:
    """This command's part of the record: one server's tasks, opened on first use."""

    def __init__(
        self,
        settings: ConnectionSettings,
        screen: Screen,
        environ: Mapping[str, str] | None = None,
        *,
        profile: str = "",
    ) -> None:
        try:
            self.identity: ServerIdentity | None = identity_of(
                settings.url, settings.server_command, profile
            )
        except UsageError:
            # The transport refuses such a URL itself, with the same words, right after.
            self.identity = None
        self._screen = screen
        self._environ = os.environ if environ is None else environ
        self._record: ServerRecord | None = None
        self._failure: str | None = None
        self._recorder: Recorder | None = None

    def server_record(self, *, required: bool) -> ServerRecord | None:
        """This server's record; None (after one warning) when it cannot be used, unless
        `required`, which makes that a StateError."""
        if self.identity is None:
            if required:
                raise UsageError("invalid server URL: no record of known tasks to use")
            return None
        if self._record is None and self._failure is None:
            try:
                self._record = KnownTasks.open(self._environ).server(self.identity)
            except StoreFailure as exc:
                self._failure = str(exc)
                if not required:
                    self._screen.warn(f"tasks are not being recorded: {exc}")
        if self._record is None and required:
            raise StateError(self._failure or "the record of known tasks cannot be used")
        return self._record

    def recorder(self, *, listings_as_pages: bool = False) -> Recorder | None:
        """The observer the client reports every task to (None without a usable record);
        `listings_as_pages` for a command whose work is a listing (see `Recorder`)."""
        if self._recorder is None:
            record = self.server_record(required=False)
            if record is not None:
                self._recorder = Recorder(
                    record, on_failure=self._screen.warn, listings_as_pages=listings_as_pages
                )
        return self._recorder

    def sessions(self) -> dict[str, str]:
        """Recorded task id → the session that owns it, for the client to rejoin."""
        record = self.server_record(required=False)
        if record is None:
            return {}
        try:
            return record.sessions()
        except StoreFailure as exc:
            self._screen.warn(f"recorded sessions are not being rejoined: {exc}")
            return {}

    def known_ids(self) -> list[str]:
        """Every recorded id of this server (`--known`), most recent first."""
        record = self.server_record(required=True)
        assert record is not None
        try:
            return [task.task_id for task in record.tasks()]
        except StoreFailure as exc:
            raise StateError(str(exc)) from None

    def finish(self) -> None:
        """The client is closed: write whatever the recorder still holds, and close the file
        (a later use opens it again). Closed here rather than when the interpreter ends:
        its finalization collects nothing (`cli.collector`), and only a clean close removes
        the file's -wal and -shm companions."""
        try:
            if self._recorder is not None:
                self._recorder.finish()
        finally:
            if self._record is not None:
                self._record.store.close()
            self._record = None
            self._recorder = None

    def known_hint(self) -> str:
        """How many tasks of this server are recorded here, and the flag that uses them."""
        record = self.server_record(required=False)
        try:
            count = record.count() if record is not None else None
        except StoreFailure:
            count = None
        if count is None:
            return "the record of known tasks (--known) cannot be read here"
        if count == 0:
            return (
                "no task of this server is recorded here yet (mcptask start records the tasks "
                "it starts; then --known acts on them)"
            )
        plural = "s" if count != 1 else ""
        return f"{count} task{plural} of this server recorded here: add --known to use them"

    @contextmanager
    def hinting(self) -> Iterator[None]:
        """A refusal for want of a task list also names the recorded tasks and `--known`."""
        try:
            yield
        except NoTaskList as exc:
            raise NoTaskList(f"{exc.message}; {self.known_hint()}") from None

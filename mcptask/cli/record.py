"""The record of known tasks as one command uses it: which server it is for, the ids `--known`
acts on, and the hint a refusal for want of a task list gives.

Recording is a side benefit for most commands: a record that cannot be opened or written is
one warning, never a failed command. Commands that need the record (`--known`, `forget`) fail
with its StoreFailure, a StateError (exit 2), instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from mcptask.errors import NoTaskList, StoreFailure, UsageError
from mcptask.store.identity import ServerIdentity
from mcptask.store.known_tasks import KnownTasks


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


def known_ids(record: KnownTasks | None) -> list[str]:
    """Every recorded id of this server (`--known`), most recent first."""
    if record is None:
        raise UsageError("invalid server URL: no record of known tasks to use")
    return record.ids()


@contextmanager
def hinting(record: KnownTasks | None) -> Iterator[None]:
    """A refusal for want of a task list also names the recorded tasks and `--known`."""
    try:
        yield
    except NoTaskList as exc:
        try:
            count = record.count() if record is not None else None
        except StoreFailure:
            count = None
        if count is None:
            hint = "the record of known tasks (--known) cannot be read here"
        elif count == 0:
            hint = (
                "no task of this server is recorded here yet (mcptask start records the tasks "
                "it starts; then --known acts on them)"
            )
        else:
            plural = "s" if count != 1 else ""
            hint = f"{count} task{plural} of this server recorded here: add --known to use them"
        raise NoTaskList(f"{exc.message}; {hint}") from None

"""One command's invocation: its screen, its resolved settings, its connection, the
record of known tasks it feeds, built from the shared options (`mcptask.cli.options`), and
the user's request to stop (`StopSignal`: Ctrl-C and SIGTERM become a flag, so long runs
stop between requests, not inside one).

Recording is a side benefit for most commands: a record that cannot be opened or written is
one warning, never a failed command. Commands that need the record (`--known`, `forget`) fail
with its StoreFailure, a StateError (exit 2), instead.
"""

from __future__ import annotations

import functools
import os
import signal
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from types import FrameType
from typing import TYPE_CHECKING

from mcptask.cli.options import Common, color_wanted, finite
from mcptask.errors import NoTaskList, StoreFailure, UsageError

if TYPE_CHECKING:
    from mcptask.auth.flow import McpAuth
    from mcptask.client.session import McpClient
    from mcptask.output.screen import Screen
    from mcptask.store.identity import ServerIdentity
    from mcptask.store.known_tasks import KnownTasks


def screen_for(output: str | None, *, no_color: bool) -> Screen:
    """The screen of `-o` (default: table on a terminal, else json) and `--no-color`."""
    from mcptask.output.screen import Screen

    try:
        return Screen(output, color=color_wanted(no_color))
    except ValueError as exc:  # an unknown format
        raise UsageError(str(exc)) from None


def identity_of(url: str | None, server_command: str | None, profile: str = "") -> ServerIdentity:
    """The identity a server's tasks are recorded under: its URL or command, and the profile
    it was reached through (a UsageError for a URL that cannot be read, named without its
    credentials)."""
    from mcptask.store.identity import ServerIdentity
    from mcptask.transport.redact import display_command, display_url

    if url:
        try:
            return ServerIdentity.for_url(url, profile)
        except ValueError:
            raise UsageError(f"invalid server URL {display_url(url)!r}") from None
    from mcptask.transport.stdio import split_command

    assert server_command is not None
    return ServerIdentity.for_command(
        server_command,
        label=f"stdio: {display_command(split_command(server_command))}",
        profile=profile,
    )


class StopSignal:
    """While active, the first SIGINT/SIGTERM sets `event`; a second one interrupts at once.
    Outside the main thread (where signals cannot be caught) it only provides the event."""

    def __init__(self, *, on_stop: Callable[[], None] | None = None) -> None:
        self.event = threading.Event()
        self._requested = False
        self.on_stop = on_stop
        """Called once, from another thread, when the user asks to stop (to wake a wait)."""
        self._previous: dict[int, object] = {}

    def __enter__(self) -> StopSignal:
        if threading.current_thread() is threading.main_thread():
            for signum in (signal.SIGINT, signal.SIGTERM):
                self._previous[signum] = signal.signal(signum, self._on_signal)
        return self

    def __exit__(self, *exc_info: object) -> None:
        for signum, handler in self._previous.items():
            signal.signal(signum, handler)  # type: ignore[arg-type]
        self._previous.clear()

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
        self.__exit__()
        try:
            yield
        finally:
            self.__enter__()

    @property
    def stopped(self) -> bool:
        """True once the user asked to stop."""
        return self._requested or self.event.is_set()

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


class Invocation:
    """One command's screen and connection, built from its shared options."""

    def __init__(
        self,
        common: Common,
        *,
        default_output: str | None = None,
        keep_session: bool | None = None,
        remember_session: bool = True,
        force_sign_in: bool = False,
        screen: Screen | None = None,
        stop: StopSignal | None = None,
        on_connected: Callable[[McpClient], None] = lambda client: None,
    ) -> None:
        from mcptask.cli import settings
        from mcptask.store import profiles

        self.common = common
        self.stop = stop or StopSignal()
        """The user's request to stop (Ctrl-C, SIGTERM), caught while a command enters it:
        the client's retries end with it. Several servers' invocations share one."""
        self.screen = screen or screen_for(
            common.output or default_output, no_color=common.no_color
        )
        self.profiles_path = profiles.profiles_path()
        self.resolved = settings.resolve(
            common,
            book=settings.profile_book(common, os.environ),
            keep_session=keep_session,
            force_sign_in=force_sign_in,
        )
        # A --config file's server is not a saved profile: its session is not saved either.
        from_config = settings.config_file(common, os.environ) is not None
        self._remember_session = remember_session and not from_config
        self.settings = self.resolved.settings
        if self.settings.auth is not None:  # a browser sign-in gives up when the user stops
            auth = replace(self.settings.auth, stopped=lambda: self.stop.stopped)
            self.settings = replace(self.settings, auth=auth)
        self.on_connected = on_connected
        """Hears the client once connected (a run over several servers notes its era)."""
        self.hidden: set[str] = set()
        """Text the wire log never shows (the values of an answer's secret fields)."""
        self.log: Callable[[str], None] | None = self._log_line if common.verbose else None
        """Where -v sends the wire log (None without -v)."""
        for warning in self.resolved.warnings:
            self.screen.warn(warning)

    def _log_line(self, line: str) -> None:
        from mcptask.transport.redact import scrub

        self.screen.note(scrub(line, self.hidden))

    @functools.cached_property
    def record(self) -> KnownTasks | None:
        """The record of known tasks of this server (its failures to record are warnings);
        None for a URL that cannot be read, which the transport refuses itself, with the same
        words, right after."""
        from mcptask.store.known_tasks import KnownTasks

        settings, profile = self.settings, self.resolved.profile or ""
        try:
            identity = identity_of(settings.url, settings.server_command, profile)
        except UsageError:
            return None
        return KnownTasks.open(identity, on_failure=self.screen.warn)

    def known_ids(self) -> list[str]:
        """Every recorded id of this server (`--known`), most recent first."""
        if self.record is None:
            raise UsageError("invalid server URL: no record of known tasks to use")
        return self.record.ids()

    @contextmanager
    def client(
        self,
        *,
        needs_list: bool = False,
        patient: bool = False,
        auth: McpAuth | None = None,
        rejoin: Iterable[str] = (),
    ) -> Iterator[McpClient]:
        """A connected client, closed again when the block ends. It reports every task it
        meets to the record of known tasks; a refusal for want of a task list also names the
        recorded tasks and `--known`.

        `patient`: without --retries, retry for as long as --retry-for allows (watch).
        `auth`: a sign-in flow of the caller's, else the settings'.
        `rejoin`: requests about these tasks go in the session recorded for each (if any),
        as --session-id would send them.
        """
        from mcptask.client.connection import connected_client
        from mcptask.client.exchange import DEFAULT_RETRIES, DEFAULT_RETRY_FOR, RetryPolicy

        common = self.common
        finite("--retry-for", common.retry_for)
        retry = RetryPolicy(
            retries=common.retries if common.retries is not None or patient else DEFAULT_RETRIES,
            retry_for=DEFAULT_RETRY_FOR if common.retry_for is None else common.retry_for,
            sleep=self.stop.event.wait,
            stopped=lambda: self.stop.stopped,
            log=self.log,
        )
        wanted = set(rejoin)
        record = self.record
        recorded = record.sessions() if wanted and record is not None else {}
        sessions = {task_id: session for task_id, session in recorded.items() if task_id in wanted}
        try:
            with connected_client(
                self.settings,
                log=self.log,
                needs_list=needs_list,
                on_session_change=self._session_changed,
                retry=retry,
                notice=self.screen.warn,
                auth=auth,
                record=record,
                task_sessions=sessions,
            ) as client:
                self.on_connected(client)
                yield client
        except NoTaskList as exc:  # also name the recorded tasks and --known
            raise NoTaskList(f"{exc.message}; {self._known_hint()}") from None
        finally:
            if record is not None:
                record.close()

    def _known_hint(self) -> str:
        try:
            count = len(self.record.ids()) if self.record is not None else None
        except StoreFailure:
            count = None
        if count is None:
            return "the record of known tasks (--known) cannot be read here"
        if count == 0:
            return (
                "no task of this server is recorded here yet (mcptask start records the "
                "tasks it starts; then --known acts on them)"
            )
        plural = "s" if count != 1 else ""
        return f"{count} task{plural} of this server recorded here: add --known to use them"

    def _session_changed(self, previous: str | None, current: str) -> None:
        """A kept session was opened or renewed: say so, and remember it in the profile."""
        from mcptask.store import profiles

        name = self.resolved.profile if self._remember_session else None
        if previous is not None:
            self.screen.warn(
                f"session {previous} had ended on the server (its tasks ended with it); "
                f"opened session {current}" + (f" and saved it in profile {name!r}" if name else "")
            )
        if name is not None:
            profiles.update_session(self.profiles_path, name, current)

"""Several servers in one run (docs/fleet.md): which saved profiles `-P a,b`, `-P 'prod-*'`
or `--all-profiles` name, and the run itself: one thread per server, at most `--parallel` of
them working at once, each server's outcome kept in its own section (`ServerRun`) so that one
server's failure never stops the others."""

from __future__ import annotations

import fnmatch
import os
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from mcptask.cli.invocation import StopSignal
from mcptask.cli.options import Common
from mcptask.errors import ExitCode, McptaskError, UsageError

if TYPE_CHECKING:
    from mcptask.cli.invocation import Invocation
    from mcptask.client.session import McpClient
    from mcptask.output.screen import Screen
    from mcptask.output.views.fleet import Fleet, FleetView, Report, ServerRun

AllProfilesOption = Annotated[
    bool,
    typer.Option(
        "--all-profiles",
        help="Every saved profile (with --config: every server of the file), in parallel.",
    ),
]
ParallelOption = Annotated[
    int,
    typer.Option(
        "--parallel",
        min=1,
        help="With several servers: at most this many at work at once.",
    ),
]
DEFAULT_PARALLEL = 8


def fleet_names(common: Common, all_profiles: bool) -> list[str] | None:
    """The profiles the line names, each once, in the order its patterns give them (each
    pattern's matches by name); None when it names one server (the run of old)."""
    from mcptask.cli.settings import names_several, profile_book

    if not (all_profiles or names_several(common.profile)):
        return None
    if all_profiles and common.profile:
        raise UsageError("give either --all-profiles or --profile, not both")
    if common.url or common.server:
        raise UsageError("several servers are named by profile: give no --url/--server")
    if common.session_id:
        raise UsageError("a session id belongs to one server: give no --session-id with several")
    book = profile_book(common, os.environ)()
    if not all_profiles and common.profile in book.profiles:
        return None  # a --config file's server whose name holds a comma or a bracket
    known = sorted(book.profiles)
    patterns = ["*"] if all_profiles else (common.profile or "").split(",")
    chosen: list[str] = []
    for pattern in (pattern.strip() for pattern in patterns):
        matched = fnmatch.filter(known, pattern) if pattern else []
        if not matched:
            shown = ", ".join(known) or "none yet"
            raise UsageError(f"--profile {pattern!r} names no profile in {book.path} ({shown})")
        chosen += matched
    return list(dict.fromkeys(chosen))


TASK_LEVEL = (ExitCode.TASK_FAILED, ExitCode.PENDING, ExitCode.OK)
"""The codes of one server's run that are about its tasks, the most telling first; any
other code says the server itself failed."""


def fleet_exit_code(codes: Iterable[int], *, interrupted: bool) -> ExitCode:
    """How the codes of several servers' runs combine (each as that server alone would
    exit): interrupted (130) > a server failed (12) > a task failed (6) > a task still
    pending (7) > all fine (0)."""
    if interrupted:
        return ExitCode.INTERRUPTED
    seen = set(codes)
    if seen - set(TASK_LEVEL):
        return ExitCode.SERVERS_FAILED
    return next((code for code in TASK_LEVEL if code in seen), ExitCode.OK)


class Slots(threading.BoundedSemaphore):
    """At most `parallel` servers at work at once (`with slots:`); a server may give its slot
    back while it waits (for the bulk-cancel prompt) and take one again afterwards."""

    @contextmanager
    def given_back(self) -> Iterator[None]:
        self.release()
        try:
            yield
        finally:
            self.acquire()


def start_servers(
    common: Common,
    names: list[str],
    screen: Screen,
    work: Callable[[ServerRun[Report], Invocation], None],
    slots: Slots,
    *,
    stop: StopSignal,
    on_end: Callable[[ServerRun[Report]], None] = lambda run: None,
) -> tuple[list[ServerRun[Report]], Callable[[], None]]:
    """Call `work` once per server, each on a thread of its own, with that server's
    invocation (its messages labelled with its name, its retries ended by `stop`), once it
    holds one of the `slots`. A server not begun when the user asked to stop is skipped, also
    one still waiting for its slot; an error of one server ends its run only; `on_end` hears
    each run end. Returns the runs, in `names`' order, as they fill in, and the function that
    waits for them all."""
    from mcptask.cli.invocation import Invocation
    from mcptask.output.screen import LabelledScreen
    from mcptask.output.views.fleet import ServerRun

    runs: list[ServerRun[Report]] = [ServerRun(name) for name in names]

    def one(run: ServerRun[Report]) -> None:
        try:
            with slots:
                if stop.stopped:
                    run.skipped, run.exit_code = True, int(ExitCode.INTERRUPTED)
                    return
                invocation = Invocation(
                    replace(common, profile=run.server),
                    screen=LabelledScreen(screen, run.server),
                    stop=stop,
                    on_connected=lambda client: _connected(run, client),
                )
                run.target = _target(invocation)
                work(run, invocation)
        except McptaskError as exc:
            run.error, run.exit_code = exc.message, int(exc.exit_code)
        except Exception as exc:  # a bug: this server fails in one line, the others go on
            run.error = f"internal error ({type(exc).__name__}: {exc}); this is a bug in mcptask"
            run.exit_code = int(ExitCode.UNEXPECTED)
            if os.environ.get("MCPTASK_DEBUG"):
                raise
        finally:
            on_end(run)

    threads = [threading.Thread(target=one, args=(run,), name=run.server) for run in runs]
    for thread in threads:
        thread.start()

    def join() -> None:
        for thread in threads:
            while thread.is_alive():
                try:
                    # Short joins: when the kernel hands Ctrl-C to another thread, its Python
                    # handler waits for the main thread to run again, which a bare join never does.
                    thread.join(timeout=0.5)
                except KeyboardInterrupt:
                    continue  # the runs are stopping (`stop` says so): wait for their reports

    return runs, join


def run_fleet(
    view: FleetView[Report],
    common: Common,
    names: list[str],
    parallel: int,
    work: Callable[[ServerRun[Report], Invocation], None],
    *,
    also: Callable[[list[ServerRun[Report]]], tuple[ExitCode, ...]] = lambda runs: (),
) -> NoReturn:
    """Every server's run, at most `parallel` at work at once, then the merged report; `also`
    adds codes of the whole run to the servers'."""
    with StopSignal() as stop:
        runs, join = start_servers(common, names, view.screen, work, Slots(parallel), stop=stop)
        join()
    finish(view.show, runs, also=also(runs), interrupted=stop.stopped)


def finish(
    show: Callable[[Fleet[Report]], None],
    runs: list[ServerRun[Report]],
    *,
    also: tuple[ExitCode, ...] = (),
    interrupted: bool,
) -> NoReturn:
    """Show the merged report and exit with the servers' combined code."""
    from mcptask.output.views.fleet import Fleet

    code = fleet_exit_code([*(run.exit_code for run in runs), *also], interrupted=interrupted)
    show(Fleet(runs, int(code)))
    raise typer.Exit(int(code))


class Checkpoint:
    """Where each server's run waits, its slot given back, for one decision taken for them
    all once every run has reached it or ended (the bulk-cancel prompt)."""

    def __init__(self) -> None:
        self._reached: set[str] = set()
        self._changed = threading.Condition()
        self._decided = threading.Event()
        self._proceed = False

    def reach(self, server: str) -> None:
        with self._changed:
            self._reached.add(server)
            self._changed.notify_all()

    def wait(self, server: str) -> bool:
        """Reached by `server`'s run: whether to go on, once decided."""
        self.reach(server)
        self._decided.wait()
        return self._proceed

    def all_reached(self, count: int) -> None:
        with self._changed:
            self._changed.wait_for(lambda: len(self._reached) >= count)

    def decide(self, proceed: bool) -> None:
        """The first decision stands."""
        if not self._decided.is_set():
            self._proceed = proceed
            self._decided.set()


def _connected(run: ServerRun[Report], client: McpClient) -> None:
    """Note in the run what the handshake told: its era and where it went."""
    run.era = client.server.protocol_version
    run.target = client.transport.target


def _target(invocation: Invocation) -> str:
    from mcptask.transport.redact import display_command, display_url
    from mcptask.transport.stdio import split_command

    settings = invocation.settings
    if settings.url:
        return display_url(settings.url)
    return display_command(split_command(settings.server_command or ""))

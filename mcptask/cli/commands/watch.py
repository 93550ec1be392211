"""`mcptask watch`: follow tasks live until they settle (also `start --watch`, and each
server's part of `watch -P 'prod-*'`): the watch loop run until settled or Ctrl-C, and the
questions of tasks that wait for input, asked on the terminal with `--answer` (`Questions`),
else named with the command that answers them."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from shlex import join, quote
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from mcptask.cli.fleet import AllProfilesOption, Slots, finish, fleet_names, start_servers
from mcptask.cli.invocation import Invocation, StopSignal, screen_for
from mcptask.cli.options import (
    AnswerOption,
    Common,
    KnownOption,
    StatusOption,
    finite,
    statuses,
    task_ids_argument,
    wait_timeout_option,
    with_server_options,
)
from mcptask.errors import ExitCode, McptaskError, ProtocolViolation, UsageError

if TYPE_CHECKING:
    from mcptask.client.session import McpClient
    from mcptask.operations.watch import WatchedTask, WatchOptions, WatchReport
    from mcptask.output.views.fleet import ServerRun
    from mcptask.output.views.watch import WatchView
    from mcptask.protocol.inputs import InputRequest
    from mcptask.protocol.tasks import Task


@with_server_options
def watch(
    task_ids: Annotated[
        list[str] | None, task_ids_argument(help="Tasks to watch (default: the listed ones).")
    ] = None,
    status: StatusOption = None,
    known: KnownOption = False,
    interval: Annotated[
        float | None,
        typer.Option("--interval", min=0.0, help="Seconds between polls (default: the server's)."),
    ] = None,
    forever: Annotated[
        bool, typer.Option("--forever", help="Keep watching after every task has settled.")
    ] = False,
    watch_timeout: Annotated[
        float | None,
        wait_timeout_option(help="Stop after this many seconds (exit 7 if unsettled)."),
    ] = None,
    exit_status: Annotated[
        bool,
        typer.Option("--exit-status", help="Exit 7 unless every watched task ended completed."),
    ] = False,
    answer: AnswerOption = False,
    all_profiles: AllProfilesOption = False,
    parallel: Annotated[
        int | None,
        typer.Option(
            "--parallel",
            min=1,
            help="With several servers: at most this many watched at once, the others "
            "waiting for a watch to end (default: all).",
        ),
    ] = None,
    *,
    common: Common,
) -> None:
    """Follow tasks live until they settle (completed, failed or cancelled); -P 'prod-*'
    follows several servers' tasks at once."""
    from mcptask.operations.watch import WatchOptions
    from mcptask.output.views.watch import WatchView

    for name, value in (("--interval", interval), ("--wait-timeout", watch_timeout)):
        finite(name, value)
    wanted = statuses(status)
    if wanted is not None and task_ids:
        raise UsageError("--status narrows the listed tasks; it does not apply to given ids")
    if known and task_ids:
        raise UsageError("--known watches the recorded tasks; give either ids or --known")
    options = WatchOptions(
        task_ids=list(dict.fromkeys(task_ids or [])),
        statuses=wanted,
        interval=interval,
        forever=forever,
        timeout=watch_timeout,
        exit_status=exit_status,
    )
    names = fleet_names(common, all_profiles)
    if names is not None:
        if answer:
            raise UsageError(
                "--answer asks on the terminal for one server: give one -P, or answer with "
                "mcptask answer -P NAME ID"
            )
        watch_fleet(common, names, parallel or len(names), options, known=known)
    invocation = Invocation(common, default_output="table")
    require_terminal_for_answer(invocation, answer)
    view = WatchView(invocation.screen)
    report = watch_tasks(invocation, view, options, known=known, answer=answer)
    raise typer.Exit(int(report.exit_code))


def watch_fleet(
    common: Common, names: list[str], parallel: int, options: WatchOptions, *, known: bool
) -> NoReturn:
    """`watch` on every server at once: one live table (or each change as a line, with its
    server) until every server's tasks settle; Ctrl-C stops every watch."""
    from mcptask.operations.watch import WatchReport
    from mcptask.output.views.watch import FleetWatchView

    screen = screen_for(common.output or "table", no_color=common.no_color)
    view = FleetWatchView(screen, names)
    with StopSignal(on_stop=view.wake_all) as stop:

        def work(run: ServerRun[WatchReport], invocation: Invocation) -> None:
            try:
                run.report = watch_tasks(
                    invocation,
                    view.part(run, invocation.screen),
                    options,
                    known=known,
                    alone=False,
                )
            finally:  # a server lost mid-watch: its tasks as last seen, beside its error
                watch = view.watched(run.server)
                if run.report is None and watch is not None:
                    tasks = list(watch.tasks.values())
                    run.report = WatchReport(tasks, stop.stopped, False, options.exit_status)
            run.exit_code = int(run.report.exit_code)

        with view.following():
            runs, join = start_servers(
                common,
                names,
                view.screen,
                work,
                Slots(parallel),
                stop=stop,
                on_end=view.ended,
            )
            join()
    left = screen.reader_left()  # `watch -P ... | head -1`: ended, as one server's watch is
    for run in runs if left else []:
        if run.report is not None and run.error is None:
            run.report = replace(run.report, interrupted=False)
            run.exit_code = int(run.report.exit_code)
        elif run.skipped:
            run.exit_code = int(ExitCode.OK)
    finish(view.show, runs, interrupted=stop.stopped and not left)


HOLD_SECONDS = 600.0
"""How long a 2025-11-25 task's `tasks/result` is held open to hear its questions (then held
anew when it asks again)."""


def require_terminal_for_answer(invocation: Invocation, answer: bool) -> None:
    """--answer asks on a terminal: refuse it without one (scripts answer with `answer`)."""
    if answer and not (sys.stdin.isatty() and invocation.screen.err_is_terminal):
        raise UsageError(
            "--answer asks on a terminal, and stdin or stderr is not one: answer with "
            "mcptask answer ID and the answer as items or --from-file"
        )


def watch_tasks(
    invocation: Invocation,
    view: WatchView,
    options: WatchOptions,
    *,
    known: bool,
    answer: bool = False,
    alone: bool = True,
) -> WatchReport:
    """`watch` on one server: connect, take the recorded tasks (`known`) that are in
    `options.statuses` (default: the active ones), and follow them as `follow` does (not
    `alone`: as one server's watch in a run over several)."""
    from mcptask.operations.listing import refresh_known
    from mcptask.operations.watch import WatchReport

    recorded = invocation.known_ids() if known else None
    rejoin = recorded if recorded is not None else options.task_ids
    needs_list = not options.task_ids and not known
    with invocation.client(needs_list=needs_list, patient=True, rejoin=rejoin) as client:
        if recorded is not None:
            refreshed = refresh_known(client, recorded)
            ids = [task.taskId for task in refreshed.select(options.statuses)]
            options = replace(options, task_ids=ids, statuses=None)
            view.gone(refreshed.gone)
            view.unrefreshed(refreshed.errors)
            if not ids:
                report = WatchReport([], False, False, options.exit_status)
                if alone:
                    view.show(report)
                return report
        return follow(client, view, options, invocation, answer=answer, alone=alone)


def follow(
    client: McpClient,
    view: WatchView,
    options: WatchOptions,
    invocation: Invocation,
    *,
    answer: bool = False,
    alone: bool = True,
) -> WatchReport:
    """Watch until settled (or Ctrl-C), show the end as `view` does; returns the report.
    Tasks that wait for input are asked on the terminal (`answer`), else named with the
    command that answers them. Not `alone`: one server's watch in a run over several, whose
    invocations share the stop signal that the run catches (its `on_stop` wakes every
    watch) and which shows the end itself."""
    from mcptask.operations.watch import Watch

    if answer:
        client.require_answers()
    # `watcher` is bound below, after the callbacks it takes: they run only once it is.
    stop = invocation.stop
    # The hint names the server as the command line did (a profile, a config file); --url and
    # --server are left out, as a server command may carry secrets.
    common = invocation.common
    selection = ["--config", str(common.config)] if common.config else []
    if common.profile:
        selection += ["-P", common.profile]
    answer_with = join(["mcptask", "answer", *selection])
    questions = Questions(client, invocation, view, answer, answer_with, lambda t: watcher.saw(t))
    reader_left = False

    def round_done() -> None:
        nonlocal reader_left
        if questions.meet(watcher.tasks.values()):
            watcher.wake()  # an answer went out: look at the task again at once
        view.redraw(watcher)
        if not reader_left and view.screen.reader_left():
            # `watch | head -1`: nobody reads on, so watching ends (as a list's output does)
            # instead of polling until every task settles.
            reader_left = True
            stop.stop()

    watcher = Watch(
        client,
        options,
        stop=stop.event,
        on_change=view.change,
        on_round=round_done,
        on_problem=view.problem,
    )
    if alone:
        stop.on_stop = watcher.wake
    with stop if alone else nullcontext(), view.following(watcher):
        report = watcher.run()
    report = replace(report, interrupted=stop.stopped and not reader_left)
    if alone:
        view.show(report)
    return report


@dataclass
class Questions:
    """What watched tasks in `input_required` ask, met once per round of questions: asked on
    the terminal with the live table paused and the answer sent (`answer`), else named on
    stderr with the command that answers it. A request met once is not met again while its
    task still shows it (the server takes answers eventually); its key asking something
    else is a new question, as `answer` takes it."""

    client: McpClient
    invocation: Invocation
    view: WatchView
    answer: bool
    answer_with: str
    """The command that answers, as named to the user (several servers: with its -P)."""
    saw: Callable[[Task], None]
    """Hears each task read here: the watch takes it as a poll's answer."""
    met: dict[str, frozenset[str]] = field(default_factory=dict)
    """Task id to the requests (`_asked`) met while it has been waiting for input."""

    def meet(self, tasks: Iterable[WatchedTask]) -> bool:
        """Meet the new questions among `tasks`; True when an answer was sent."""
        from mcptask.protocol.tasks import INPUT_REQUIRED

        if not (self.answer or self.client.server.task_support.update):
            return False  # a server that takes no answers: its tasks ask nothing we can name
        sent = False
        for watched in list(tasks):
            task = watched.task
            if task is None or task.status != INPUT_REQUIRED:
                self.met.pop(watched.task_id, None)
                continue
            try:  # a listed task may not carry its requests: then only a new wait is met
                asked = frozenset(_asked(request) for request in self.client.asks_now(task))
            except McptaskError:
                asked = frozenset()
            before = self.met.get(watched.task_id)
            if before is not None and asked <= before:
                continue
            self.met[watched.task_id] = (before or frozenset()) | asked
            if self.invocation.stop.stopped:
                break
            sent |= self._meet_one(watched.task_id)
        return sent

    def _meet_one(self, task_id: str) -> bool:
        """Read what the task asks now, then name it or ask it; True when answered."""
        from mcptask.cli.commands.answer import ask_on_terminal
        from mcptask.operations import answer as answering
        from mcptask.output.views.answer import AnswerView
        from mcptask.protocol.inputs import task_message

        screen = self.invocation.screen
        try:
            if self.answer:  # 2025-11-25: heard on a tasks/result held open for it
                wait = answering.QUESTION_WAIT_MIN
                task, asked = self.client.read_asked(task_id, wait=wait, hold_for=HOLD_SECONDS)
                self.saw(task)
            else:
                task = self.client.get_task(task_id)
                self.saw(task)
                asked = self.client.asks_now(task)
        except ProtocolViolation:
            return False  # it asks nothing: only a new wait is met
        except McptaskError as exc:
            screen.warn(f"{task_id}: cannot read what it asks: {exc.message}")
            return False
        self.met[task_id] |= {_asked(request) for request in asked}
        if not asked:
            return False
        if not self.answer:
            what = task_message(task) or "waits for input"
            screen.note(f"task {task_id} {what} (answer with: {self.answer_with} {quote(task_id)})")
            return False
        view = AnswerView(screen)
        with self.view.paused():
            view.questions(task_id, asked, always=True)
            try:
                with self.invocation.stop.prompting():
                    responses = ask_on_terminal(view, asked, asked)
            except UsageError as exc:
                screen.warn(f"{task_id}: {exc.message}; nothing was sent")
                return False
            if self.invocation.stop.stopped or responses is None:
                screen.warn(f"{task_id}: nothing was sent")
                return False
            self.invocation.hidden.update(answering.secret_texts(asked, responses))
            try:
                answering.send_answers(self.client, task, asked, responses, wait_timeout=0)
            except McptaskError as exc:
                screen.warn(f"{task_id}: the answer was not sent: {exc.message}")
                return False
            screen.note(f"task {task_id}: the answer was sent; watching on")
        return True


def _asked(request: InputRequest) -> str:
    """A request as met: its key and what it asks, so that the key asking anew is new."""
    return json.dumps([request.key, request.method, request.params], sort_keys=True)

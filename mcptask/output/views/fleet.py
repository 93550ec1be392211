"""The views of a run over several servers (`-P 'prod-*'`, `--all-profiles`): one merged
report. Tables gain a SERVER column; `-o json` holds one section per server (docs/fleet.md,
docs/schemas/fleet.json) whose `report` is what the command prints for that server alone;
`-o jsonl` lines are the command's own lines with `server` added. What went wrong on a
server goes to stderr, labelled with its name."""

from __future__ import annotations

import sys
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, Generic, TypeVar

from mcptask.operations.outcomes import CancelReport, CancelResult, Selection
from mcptask.output.sanitize import clean
from mcptask.output.screen import Screen
from mcptask.output.views import View
from mcptask.output.views.connection import Connection, ConnectView, task_support
from mcptask.output.views.tasks import CancelView, DryRunView
from mcptask.protocol.jsonrpc import JsonObject
from mcptask.protocol.tasks import Task

if TYPE_CHECKING:
    from rich.console import Console

    from mcptask.operations.watch import WatchReport

Report = TypeVar("Report")


@dataclass
class ServerRun(Generic[Report]):
    """One server's part of the run: where it went, and its report or what stopped it."""

    server: str
    """The profile's name."""
    target: str | None = None
    era: str | None = None
    """The protocol version spoken, once connected."""
    report: Report | None = None
    error: str | None = None
    """What stopped this server's run (it may still have a report: the tasks it touched)."""
    exit_code: int = 0
    """The code this server alone would have given (`mcptask.cli` decides it)."""
    skipped: bool = False
    """Not begun: the run was stopped first."""
    selection: Selection | None = None
    """cancel: what this server's run would cancel."""

    @property
    def outcome(self) -> str:
        return "skipped" if self.skipped else "failed" if self.error is not None else "ok"

    def section(self, report: object) -> JsonObject:
        return {
            "server": self.server,
            "target": self.target,
            "era": self.era,
            "outcome": self.outcome,
            "error": self.error,
            "exitCode": self.exit_code,
            "report": report,
        }


@dataclass(frozen=True)
class Fleet(Generic[Report]):
    """Every server's run, in the order named, and the exit code they combine into."""

    runs: list[ServerRun[Report]]
    exit_code: int


class FleetView(View[Fleet[Report]]):
    """The shape the fleet views share: sections in JSON, failures on stderr."""

    formats = ("table", "json", "jsonl")
    alone: ClassVar[type[View[Any]]]
    """The command's view of one server: a section's report is its document of the run's."""

    def __init__(self, screen: Screen) -> None:
        if screen.format == "ids":  # an id alone does not say which server it is on
            from mcptask.errors import UsageError

            raise UsageError("several servers have no ids output; use -o table, json or jsonl")
        super().__init__(screen)
        self._lock = threading.Lock()

    def show(self, shown: Fleet[Report]) -> None:
        super().show(shown)
        self.failures(shown)

    def failures(self, shown: Fleet[Report]) -> None:
        for run in shown.runs:
            if run.error is not None:
                self.screen.error(f"{run.server}: {run.error}")

    def document(self, shown: Fleet[Report]) -> JsonObject:
        return {"servers": self.sections(shown), "exitCode": shown.exit_code}

    def sections(self, shown: Fleet[Report]) -> list[JsonObject]:
        return [
            run.section(None if run.report is None else self.report_document(run))
            for run in shown.runs
        ]

    def report_document(self, run: ServerRun[Report]) -> object:
        return self.alone(self.screen).document(run.report)

    def line(self, run: ServerRun[Report], line: JsonObject) -> None:
        """One jsonl line of `run`'s server, whole even when servers write at once."""
        with self._lock:
            self.screen.json_line({**line, "server": run.server})


def interrupted(shown: Fleet[CancelReport] | Fleet[WatchReport]) -> bool:
    return any(run.skipped or (run.report and run.report.interrupted) for run in shown.runs)


class FleetListView(FleetView[list[Task]]):
    command = "list"

    def table(self, shown: Fleet[list[Task]]) -> None:
        from mcptask.output import tables

        tasks = [(run.server, task) for run in shown.runs for task in run.report or []]
        if tasks:
            servers, listed = zip(*tasks, strict=True)
            tables.print_tasks(self.screen.out, listed, servers)
        elif not any(run.error for run in shown.runs):
            self.screen.warn("no tasks on any of these servers")

    def report_document(self, run: ServerRun[list[Task]]) -> JsonObject:
        wire = [task.to_wire() for task in run.report or []]
        return {"tasks": wire, "count": len(wire)}

    def jsonl(self, shown: Fleet[list[Task]]) -> None:
        for run in shown.runs:
            for task in run.report or []:
                self.line(run, task.to_wire())


class FleetGetView(FleetListView):
    """`get` on several servers: the task (a list of one) where it was found."""

    command = "get"

    def report_document(self, run: ServerRun[list[Task]]) -> JsonObject:
        return run.report[0].to_wire() if run.report else {}


class FleetConnectView(FleetView[Connection]):
    command = "connect"
    alone = ConnectView

    def table(self, shown: Fleet[Connection]) -> None:
        from mcptask.output import tables

        rows = []
        for run in shown.runs:
            name, tasks = run.outcome, "-"
            if run.report is not None:
                name = run.report.server.name
                offered = task_support([run.report.server, *run.report.others])
                tasks = ", ".join(kind for kind, offers in offered.items() if offers) or "none"
            rows.append((run.server, run.target or "-", run.era or "-", name, tasks))
        columns = ("SERVER", "TARGET", "ERA", "NAME", "TASKS")
        self.screen.out.print(tables.grid(columns, rows, overflow="fold"))

    def jsonl(self, shown: Fleet[Connection]) -> None:
        for run, section in zip(shown.runs, self.sections(shown), strict=True):
            self.line(run, section)


class FleetCancelView(FleetView[CancelReport]):
    """`cancel` over several servers: the per-server prompt, then the merged report."""

    command = "cancel"
    alone = CancelView

    def result_ready(self, run: ServerRun[CancelReport]) -> Callable[[CancelResult], None]:
        """Where `run`'s results go as they come: streamed at once in jsonl."""
        if self.screen.format != "jsonl":
            return lambda result: None
        return lambda result: self.line(run, result.to_json())

    def confirmed(self, runs: list[ServerRun[CancelReport]]) -> bool:
        """Ask before a bulk cancel, with how many tasks where, only when a person is at
        the terminal."""
        if not (sys.stdin.isatty() and self.screen.err_is_terminal):
            return True
        from rich.prompt import Confirm

        from mcptask.output import tables

        rows, total, servers = [], 0, 0
        for run in runs:
            listed = run.selection.listed if run.selection is not None else []
            by_status = Counter(task.status for task in listed)
            shown = ", ".join(f"{count} {status}" for status, count in sorted(by_status.items()))
            count = str(len(listed)) if run.selection is not None else "-"
            rows.append((run.server, count, shown or run.error or "-"))  # names from --config
            total, servers = total + len(listed), servers + bool(listed)
        self.screen.err.print(tables.grid(("SERVER", "TASKS", "BY STATUS"), rows))
        question = f"Cancel these {total} tasks on {servers} servers?"
        return Confirm.ask(question, console=self.screen.err, default=False)

    def dry_run(self, shown: Fleet[CancelReport]) -> None:
        """What each server's run would cancel; nothing was sent."""
        dry = DryRunView(self.screen)
        picks = [(run, run.selection) for run in shown.runs if run.selection is not None]
        if self.screen.format == "json":
            sections = [
                run.section(None if run.selection is None else dry.document(run.selection))
                for run in shown.runs
            ]
            self.screen.json({"dryRun": True, "servers": sections, "exitCode": shown.exit_code})
        elif self.screen.format == "jsonl":
            for run, pick in picks:
                for line in dry.lines(pick):
                    self.line(run, line)
        else:
            from mcptask.output import tables

            tasks = [(run.server, task) for run, pick in picks for task in pick.listed]
            if tasks:
                servers, listed = zip(*tasks, strict=True)
                tables.print_tasks(self.screen.out, listed, servers)
            for run, pick in picks:
                self.screen.plain_lines(f"{run.server} {task_id}" for task_id in pick.unlisted)
        self.failures(shown)
        count = sum(len(pick.listed) + len(pick.unlisted) for _, pick in picks)
        self.screen.warn(f"dry run: {count} task(s) would be cancelled; nothing was sent")

    def table(self, shown: Fleet[CancelReport]) -> None:
        from mcptask.output import tables

        results = [(run.server, r) for run in shown.runs if run.report for r in run.report.results]
        if results:
            servers, listed = zip(*results, strict=True)
            tables.print_cancels(self.screen.out, listed, servers)
        self._summaries(self.screen.out, shown)

    def jsonl(self, shown: Fleet[CancelReport]) -> None:
        """The lines went out as results came; the summaries go to stderr."""
        self._summaries(self.screen.err, shown)

    def _summaries(self, console: Console, shown: Fleet[CancelReport]) -> None:
        from rich.text import Text

        from mcptask.output import tables

        for run in shown.runs:
            line = Text(f"{clean(run.server)}: ")
            line.append(tables.cancel_summary(run.report) if run.report else Text(run.outcome))
            console.print(line)
        everything = _merged(shown)
        failed = sum(run.outcome != "ok" for run in shown.runs)
        line = Text(f"{len(shown.runs)} servers ({failed} not ok), ", style="bold")
        console.print(line.append(tables.cancel_summary(everything)))

    def document(self, shown: Fleet[CancelReport]) -> JsonObject:
        """Each server's section, then the outcomes counted over every server."""
        everything = _merged(shown)
        return {
            "servers": self.sections(shown),
            "summary": everything.counts(),
            "interrupted": everything.interrupted,
            "exitCode": shown.exit_code,
        }


def _merged(shown: Fleet[CancelReport]) -> CancelReport:
    """Every server's results in one report, interrupted when any server's run was."""
    results = [r for run in shown.runs if run.report for r in run.report.results]
    return CancelReport(results, interrupted(shown))

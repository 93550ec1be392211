"""Cancel tasks one request at a time, confirm each by `tasks/get`, and report every task's
outcome."""

from __future__ import annotations

import bisect
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from mcptask.client.session import McpClient
from mcptask.errors import (
    AnswerLost,
    AuthError,
    CancelRefused,
    EndpointNotFound,
    McptaskError,
    NotDelivered,
    RpcError,
    ServerBusy,
    SessionGone,
    TaskNotFound,
    TlsFailure,
    UnsupportedError,
    UsageError,
)
from mcptask.operations.confirmations import Confirmations
from mcptask.operations.outcomes import CancelReport, CancelResult, Outcome, Target
from mcptask.operations.polling import PollLoop, poll_delay
from mcptask.protocol.tasks import CANCELLED, Task, is_terminal

DEFAULT_WAIT_TIMEOUT_SECONDS = 5.0
MAX_RESENDS = 4


@dataclass
class _Awaiting:
    """A task whose cancel was accepted, whose final status is still to be seen."""

    target: Target
    last_seen: Task | None  # None until a task is seen: the cancel was acknowledged only


@dataclass
class CancelRun:
    """One bulk cancel: sequential `tasks/cancel`, each confirmed by `tasks/get` at once
    (maybe beside the next cancel); tasks still settling are then polled until `wait_timeout`.
    `on_result` hears each final result once, in the targets' order. After `stop`, the
    request in flight completes, and nothing more is sent."""

    client: McpClient
    wait: bool = True
    wait_timeout: float = DEFAULT_WAIT_TIMEOUT_SECONDS
    stop: Callable[[], bool] = lambda: False
    sleep: Callable[[float], object] = time.sleep
    on_result: Callable[[CancelResult], None] = lambda result: None
    on_progress: Callable[[], None] = lambda: None
    rate: float | None = None  # at most this many cancel requests a second (`--rate`)
    overlap: bool | None = None  # confirm while the next cancels go out; None: where it pays
    _results: dict[str, CancelResult] = field(default_factory=dict)
    _awaiting: dict[str, _Awaiting] = field(default_factory=dict)
    _confirmations: Confirmations = field(init=False)
    _order: dict[str, int] = field(default_factory=dict)
    _held: list[CancelResult] = field(default_factory=list)

    def run(self, targets: Iterable[Target]) -> CancelReport:
        """Whatever happens, every target is in the report exactly once."""
        ordered = list(targets)
        self._order = {target.task_id: index for index, target in enumerate(ordered)}
        self._confirmations = Confirmations(self.client, overlap=self.overlap, stopped=self.stop)
        report = CancelReport(results=[])
        try:
            self._cancel_each(ordered)
            self._settle(wait=True)
            self._end_confirmations(wait=True)
            if self.wait and not self.stop():
                PollLoop(
                    fetch=self.client.get_task,
                    pending=lambda: list(self._awaiting),
                    observe=self._observe,
                    delay=lambda: poll_delay(seen.last_seen for seen in self._awaiting.values()),
                    wait=self.sleep,
                    stop=self.stop,
                ).run(deadline=time.monotonic() + self.wait_timeout)
        except McptaskError as exc:
            report.fatal = exc
        except KeyboardInterrupt:
            report.interrupted = True
        try:
            # Confirmations in flight end with what they learn; unsent ones are not sent.
            self._end_confirmations(wait=not report.interrupted)
        except KeyboardInterrupt:
            report.interrupted = True
            self._end_confirmations(wait=False)
        report.interrupted = report.interrupted or self.stop()
        for awaiting in list(self._awaiting.values()):
            self._finish_from(awaiting, awaiting.last_seen)
        why = ": interrupted" if report.interrupted else ": the run stopped on an error"
        skipped = "not attempted" + (why if report.interrupted or report.fatal else "")
        for target in ordered:
            if target.task_id not in self._results:
                self._finish(target, Outcome.SKIPPED, None, skipped)
        report.results = [self._results[target.task_id] for target in ordered]
        return report

    def _cancel_each(self, targets: list[Target]) -> None:
        # A cancel whose answer was lost is sent again as often as the client retries (a
        # bound, even when the client's retries are bounded by time alone).
        retries = self.client.retry.retries
        resends = MAX_RESENDS if retries is None else retries
        due = 0.0  # --rate: when the next cancel may go (the clock is read only then)
        for target in targets:
            if self.rate is not None:
                if (wait := due - time.monotonic()) > 0:
                    self.sleep(wait)  # a stop ends the wait at once
                due = max(due, time.monotonic()) + 1 / self.rate
            if self.stop():
                return
            if self._confirmations.full:
                self._settle(wait=True, count=1)
            self._cancel_one(target, resends=resends)
            self.on_progress()
            self._settle(wait=False)

    def _cancel_one(self, target: Target, *, resends: int) -> None:
        """A task whose cancel was sent is never "not attempted": `tasks/get` learns its
        effect, else it is `unknown`. Failures that end the run are raised after the task
        has its outcome."""
        try:
            answer = self.client.cancel_task(target.task_id)
        except CancelRefused as exc:
            self._classify_refusal(target, exc)
        except TaskNotFound as exc:
            # Known before the request was sent: a recorded task whose session ended.
            self._finish(target, Outcome.NOT_FOUND, None, exc.message)
        except RpcError as exc:
            self._finish(target, Outcome.ERROR, None, exc.server_message)
        except _UNSENT as exc:
            self._finish(target, Outcome.SKIPPED, None, f"not sent: {exc.message}")
            raise
        except _REFUSED as exc:
            self._finish(target, Outcome.ERROR, None, exc.message)
            raise
        except AnswerLost as exc:
            self._resolve(target, exc, resends=resends)
        except McptaskError as exc:
            # Sent, and then the answer broke the protocol or the server went away.
            self._resolve(target, exc, resends=0)
            raise
        else:
            self._after_accepted_cancel(target, answer)

    def _resolve(self, target: Target, failure: McptaskError, *, resends: int) -> None:
        """The cancel's answer was lost: ask the task. Still active: cancel again, up to
        `resends` times (safe: a repeat of a cancel that took effect is refused with invalid
        params, which `tasks/get` classifies). No answer, or no resend left: `unknown`."""
        lost = f"the answer to the cancel was lost ({failure.message})"
        try:
            task = self.client.get_task(target.task_id)
        except TaskNotFound:
            self._finish(target, Outcome.NOT_FOUND, None, f"{lost}; now the task is not found")
            return
        except McptaskError as exc:
            # The same failure twice (a dead server, say) is said once.
            why = " the same way" if exc.message == failure.message else f": {exc.message}"
            self._finish(target, Outcome.UNKNOWN, None, f"{lost}; tasks/get failed{why}")
            raise
        if task.status == CANCELLED:
            self._finish(target, Outcome.CANCELLED, task.status, f"{lost}; tasks/get shows it")
        elif is_terminal(task.status):
            self._finish(target, Outcome.ALREADY_FINISHED, task.status, task.statusMessage)
        elif resends <= 0:
            self._finish(target, Outcome.UNKNOWN, task.status, f"{lost}; the task is still active")
        else:
            self._cancel_one(target, resends=resends - 1)

    def _after_accepted_cancel(self, target: Target, answer: Task | None) -> None:
        status, message = (answer.status, answer.statusMessage) if answer else (None, None)
        if status is not None and is_terminal(status) and status != CANCELLED:
            # Some servers "succeed" on a finished task and leave it as it was.
            self._finish(target, Outcome.ALREADY_FINISHED, status, message)
            return
        if not self.wait and status == CANCELLED:
            self._finish(target, Outcome.CANCELLED, status, message)
        elif not self.wait:
            # Accepted, and the user chose not to wait for the outcome: not a failure.
            accepted = "cancel accepted; not confirmed (--no-wait)"
            self._finish(target, Outcome.REQUESTED, status, accepted)
        else:
            # Confirm at once, so that results stream out task by task; a task still settling
            # is polled again after the last cancel is sent.
            self._awaiting[target.task_id] = _Awaiting(target, answer)
            last = self._order[target.task_id] == len(self._order) - 1  # nothing to go beside
            confirmed = self._confirmations.ask(target.task_id, last=last)
            if confirmed is not None:
                self._observe(target.task_id, confirmed)
            self._settle(wait=False)

    def _classify_refusal(self, target: Target, refusal: CancelRefused) -> None:
        """An invalid params error's message is not standardised: `tasks/get` decides whether
        the task is finished or unknown."""
        try:
            task = self.client.get_task(target.task_id)
        except RpcError as exc:
            outcome = Outcome.NOT_FOUND if isinstance(exc, TaskNotFound) else Outcome.ERROR
            self._finish(target, outcome, None, refusal.server_message)
            return
        except McptaskError:
            # The refusal was heard: the task keeps it, and the failure ends the run.
            self._finish(target, Outcome.ERROR, None, refusal.server_message)
            raise
        if is_terminal(task.status):
            # Refused because it had already ended, `cancelled` included: not our doing.
            self._finish(target, Outcome.ALREADY_FINISHED, task.status, refusal.server_message)
        else:
            self._finish(target, Outcome.ERROR, task.status, refusal.server_message)

    def _settle(self, *, wait: bool, count: int | None = None) -> None:
        """Apply the confirmations in (`wait`: all, or `count` of them)."""
        for task_id, answer in self._confirmations.settled(wait=wait, count=count):
            self._observe(task_id, answer)
        self._release()

    def _end_confirmations(self, *, wait: bool) -> None:
        """Stop the confirmations (`wait`: the one in flight first), apply what came in, and
        drop the rest (their tasks end with what their cancel's answer said)."""
        confirmations = self._confirmations
        confirmations.close(wait=wait)
        while True:
            try:
                self._settle(wait=False)
                break
            except McptaskError:
                continue  # the run has already stopped: this task ends with what is known
        confirmations.abandon()
        self._release()

    def _observe(self, task_id: str, answer: Task | RpcError) -> None:
        awaiting = self._awaiting.get(task_id)
        if awaiting is None:
            return  # finished meanwhile (a result is final)
        if isinstance(answer, TaskNotFound):
            # Gone after an accepted cancel: purged right after cancelling, or expired.
            self._finish_from(awaiting, awaiting.last_seen, gone=True)
            return
        if isinstance(answer, RpcError):
            self._finish(awaiting.target, Outcome.ERROR, None, answer.server_message)
            return
        awaiting.last_seen = answer
        if is_terminal(answer.status):
            self._finish_from(awaiting, answer)

    def _finish_from(self, awaiting: _Awaiting, task: Task | None, *, gone: bool = False) -> None:
        target = awaiting.target
        status = task.status if task is not None else None
        message = task.statusMessage if task is not None else "cancel acknowledged"
        if status == CANCELLED:
            self._finish(target, Outcome.CANCELLED, status, message)
        elif status is not None and is_terminal(status):
            self._finish(target, Outcome.ALREADY_FINISHED, status, message)
        elif gone:
            self._finish(target, Outcome.NOT_FOUND, status, "the task vanished after its cancel")
        else:
            self._finish(target, Outcome.PENDING, status, message)

    def _finish(
        self, target: Target, outcome: Outcome, status: str | None, message: str | None
    ) -> None:
        self._awaiting.pop(target.task_id, None)
        if target.task_id in self._results:
            return
        result = CancelResult(target.task_id, outcome, status, message, target.named)
        self._results[target.task_id] = result
        bisect.insort(self._held, result, key=lambda held: self._order[held.task_id])
        self._release()

    def _release(self) -> None:
        """Pass on the results held back, in the targets' order, up to the first task whose
        overlapped confirmation is still out."""
        oldest = self._confirmations.oldest
        while self._held and (
            oldest is None or self._order[self._held[0].task_id] < self._order[oldest]
        ):
            self.on_result(self._held.pop(0))


_UNSENT = (NotDelivered, ServerBusy, TlsFailure, UsageError)
"""Failures, once the retries gave up, that prove the cancel never reached the server, or was
not acted on (a UsageError here is a header httpx refused to send)."""

_REFUSED = (AuthError, UnsupportedError, EndpointNotFound, SessionGone)
"""Answers that refuse the request: the server did not act on it."""

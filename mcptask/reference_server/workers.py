"""The calls with which a tool running as a worker moves its task (part of TaskStore).

A tool whose task is driven by code (a ToolSet's, see tools.py) runs in a thread of its own
and moves its task with these calls. They never raise for a task that ended or vanished
meanwhile (cancelled, expired): they report it, and the worker stops. Waits run on the
store's clock.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping

from mcptask.reference_server.clock import Clock
from mcptask.reference_server.records import INPUT_REQUIRED, TaskRecord
from mcptask.reference_server.rpc import JsonObject
from mcptask.reference_server.scripting import TERMINAL_STATUSES


class WorkerCalls:
    """Mixed into TaskStore, whose lock, clock and transitions these calls use."""

    clock: Clock
    _cond: threading.Condition

    def _worker_record(self, task_id: str) -> TaskRecord | None:
        """The task a worker drives, if still there and not terminal (lock held)."""
        raise NotImplementedError

    def _transition(
        self,
        record: TaskRecord,
        status: str,
        message: str | None,
        *,
        result: JsonObject | None = None,
        error: JsonObject | None = None,
        input_requests: dict[str, JsonObject] | None = None,
    ) -> None:
        raise NotImplementedError

    def wait_active(self, task_id: str, until: float) -> bool:
        """Wait until the clock's monotonic time `until` while the task is not terminal.

        True when that time came with the task still active; False as soon as it ended,
        vanished, or the store closed (the worker should stop).
        """
        with self._cond:
            while True:
                if self._worker_record(task_id) is None:
                    return False
                remaining = until - self.clock.monotonic()
                if remaining <= 0:
                    return True
                self.clock.wait(self._cond, remaining)

    def request_input(
        self, task_id: str, requests: Mapping[str, JsonObject], message: str
    ) -> dict[str, object] | None:
        """Move the task to input_required with `requests` (name -> input request) and wait
        until every one is answered by `provide_input`; return the answers by name.

        On the wire each request gets a key of its own (`NAME-N`, N counting the task's
        input rounds), so that keys are never reused over the task's life. Returns None when
        the task ends, vanishes or the store closes before all answers arrived.
        """
        if not requests:
            raise ValueError("request_input needs at least one request")
        with self._cond:
            record = self._worker_record(task_id)
            if record is None:
                return None
            record.input_seq += 1
            keys = {f"{name}-{record.input_seq}": name for name in requests}
            record.input_names = dict(keys)
            record.input_responses = {}
            pending = {key: requests[name] for key, name in keys.items()}
            self._transition(record, INPUT_REQUIRED, message, input_requests=pending)
            while True:
                current = self._worker_record(task_id)
                if current is None:
                    return None
                if not current.input_requests:
                    return dict(current.input_responses)
                self.clock.wait(self._cond, None)

    def finish(
        self,
        task_id: str,
        status: str,
        message: str | None,
        *,
        result: JsonObject | None = None,
        error: JsonObject | None = None,
    ) -> bool:
        """End the task in `status` (completed with `result`, failed with `error`, or
        cancelled); False when it had already ended (say, cancelled) or vanished."""
        if status not in TERMINAL_STATUSES:
            raise ValueError(f"finish needs a terminal status, got {status!r}")
        with self._cond:
            record = self._worker_record(task_id)
            if record is None:
                return False
            self._transition(record, status, message, result=result, error=error)
            return True

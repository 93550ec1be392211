"""Tasks on the wire: the statuses (the one place they are declared), the Task model, a page
of `tasks/list` and the answer to `tasks/cancel`.

Plain classes with hand-written tolerant readers rather than pydantic models: importing
pydantic and building its schemas cost about 100 ms at every start of mcptask, for the few
fields a task has (see bench/one_shot.py).

Reading is tolerant (flat or `task`-wrapped results, missing `ttl`, unknown fields kept);
writing is exact (only what the specification defines).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from mcptask.errors import ProtocolViolation
from mcptask.protocol.jsonrpc import JsonObject

WORKING = "working"
INPUT_REQUIRED = "input_required"
COMPLETED = "completed"
FAILED = "failed"
CANCELLED = "cancelled"
ACTIVE_STATUSES: tuple[str, ...] = (WORKING, INPUT_REQUIRED)
TERMINAL_STATUSES: tuple[str, ...] = (COMPLETED, FAILED, CANCELLED)
ALL_STATUSES: tuple[str, ...] = ACTIVE_STATUSES + TERMINAL_STATUSES


def is_terminal(status: str) -> bool:
    """True for a status that never changes again."""
    return status in TERMINAL_STATUSES


def parse_statuses(text: str) -> tuple[str, ...]:
    """Parse a comma-separated status filter such as `working,input_required`.

    Raises ValueError naming the unknown status, so callers can turn it into a usage error.
    """
    wanted = tuple(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))
    unknown = [status for status in wanted if status not in ALL_STATUSES]
    if unknown:
        raise ValueError(f"unknown status {unknown[0]!r}; choose from {', '.join(ALL_STATUSES)}")
    if not wanted:
        raise ValueError("empty status filter")
    return wanted


_TEXT_FIELDS = ("statusMessage", "createdAt", "lastUpdatedAt")
# The 2025-11-25 names, then the 2026-07-28 names of the same two values.
_NUMBER_FIELDS = ("ttl", "pollInterval", "ttlMs", "pollIntervalMs")


class Task:
    """A task as the server describes it: the known fields read and typed, unknown fields
    kept and written back out as they came (`to_wire`).

    Reading is tolerant of what the specifications leave open (a missing `ttl`, vendor
    fields, integral numbers written as floats) and strict about what makes a task: a
    string `taskId` and `status`, text where text belongs, integers where integers do.
    """

    __slots__ = (
        "_wire",
        "createdAt",
        "lastUpdatedAt",
        "pollInterval",
        "pollIntervalMs",
        "status",
        "statusMessage",
        "taskId",
        "ttl",
        "ttlMs",
    )

    _wire: JsonObject
    taskId: str
    status: str
    statusMessage: str | None
    createdAt: str | None
    lastUpdatedAt: str | None
    ttl: int | None
    pollInterval: int | None
    ttlMs: int | None
    pollIntervalMs: int | None

    def __init__(self, taskId: str, status: str, **fields: Any) -> None:  # noqa: N803
        wire: JsonObject = {"taskId": taskId, "status": status, **fields}
        problem = _task_problem(wire)
        if problem is not None:
            raise ValueError(problem)
        self._set(wire)

    @classmethod
    def from_result(cls, result: object, *, method: str) -> Task:
        """Read a Task from a result that is flat (the spec) or wrapped in `task`.

        The modern era's `resultType` discriminator is kept like any other unknown field.
        """
        if (
            isinstance(result, dict)
            and "taskId" not in result
            and isinstance(result.get("task"), dict)
        ):
            result = result["task"]
        task = cls.read(result)
        if task is None:
            raise ProtocolViolation(
                f"the server's answer to {method} is not a task ({_task_problem(result)})"
            )
        return task

    @classmethod
    def read(cls, value: object) -> Task | None:
        """The task `value` describes, or None when it does not describe one.

        A value whose known fields have exactly their types (the usual case) becomes the
        task's wire form as it is, not copied: it is a decoded answer, which nothing
        changes, and a page of tasks/list reads hundreds of tasks.
        """
        if _is_plain_task(value):
            assert isinstance(value, dict)
            task = cls.__new__(cls)
            task._fill(value)
            return task
        if _task_problem(value) is not None:
            return None
        assert isinstance(value, dict)
        task = cls.__new__(cls)
        task._set(value)
        return task

    def _set(self, wire: JsonObject) -> None:
        wire = dict(wire)
        get = wire.get
        for name in _NUMBER_FIELDS:
            if type(get(name)) is float:
                wire[name] = int(wire[name])  # integral: _task_problem said so
        self._fill(wire)

    def _fill(self, wire: JsonObject) -> None:
        # The slots' own setters: object.__setattr__ by name costs twice as much.
        _SET_WIRE(self, wire)
        get = wire.get
        for name, setter in _FIELD_SETTERS:
            setter(self, get(name))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("a Task does not change; read a new one")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Task) and other._wire == self._wire

    def __hash__(self) -> int:
        return hash((self.taskId, self.status, self.lastUpdatedAt))

    def __repr__(self) -> str:
        return f"Task({self._wire!r})"

    def to_wire(self) -> JsonObject:
        """The task as the server sent it: its own fields, camelCase, unknown fields kept."""
        return dict(self._wire)

    @property
    def extra(self) -> JsonObject:
        """The fields this model does not know (what the modern era inlines, vendor fields)."""
        known = {"taskId", "status", *_TEXT_FIELDS, *_NUMBER_FIELDS}
        return {name: value for name, value in self._wire.items() if name not in known}

    @property
    def poll_interval_seconds(self) -> float | None:
        """The server's requested poll interval in seconds, if it gave one (either era)."""
        interval = self.pollInterval if self.pollInterval is not None else self.pollIntervalMs
        return interval / 1000 if interval is not None else None

    @property
    def ttl_milliseconds(self) -> int | None:
        """The task's time to live in milliseconds (either era); None is unlimited or unsaid."""
        return self.ttl if self.ttl is not None else self.ttlMs

    @property
    def created(self) -> datetime | None:
        """`createdAt` as a timezone-aware datetime, or None when absent or unreadable."""
        return parse_timestamp(self.createdAt)

    @property
    def updated(self) -> datetime | None:
        """`lastUpdatedAt` as a timezone-aware datetime, or None when absent or unreadable."""
        return parse_timestamp(self.lastUpdatedAt)


_SET_WIRE = Task.__dict__["_wire"].__set__
_FIELD_SETTERS = tuple(
    (name, Task.__dict__[name].__set__)
    for name in ("taskId", "status", *_TEXT_FIELDS, *_NUMBER_FIELDS)
)


_TEXT_TYPES = (str, type(None))
_INTEGER_TYPES = (int, type(None))


def _is_plain_task(value: object) -> bool:
    """Whether `value` is a task whose known fields have exactly their types (text a `str`,
    numbers an `int`, or absent): decided in one pass, before `_task_problem` would."""
    if type(value) is not dict:
        return False
    get = value.get
    if type(get("taskId")) is not str or type(get("status")) is not str:
        return False
    for name in _TEXT_FIELDS:
        if type(get(name)) not in _TEXT_TYPES:
            return False
    # A loop, not all(): a generator costs a third more here, on every task of a page.
    for name in _NUMBER_FIELDS:  # noqa: SIM110
        if type(get(name)) not in _INTEGER_TYPES:
            return False
    return True


def _task_problem(value: object) -> str | None:
    """What keeps `value` from being a Task (where: why), or None when it is one."""
    if not isinstance(value, dict):
        return "result: not an object"
    get = value.get
    for name in ("taskId", "status"):
        if not isinstance(get(name), str):
            return f"{name}: {'missing' if name not in value else 'not a string'}"
    for name in _TEXT_FIELDS:
        text = get(name)
        if text is not None and not isinstance(text, str):
            return f"{name}: not a string"
    for name in _NUMBER_FIELDS:
        number = get(name)
        if number is None or type(number) is int:
            continue  # the usual case, decided at once
        if isinstance(number, bool) or not isinstance(number, int | float):
            return f"{name}: not an integer"
        if isinstance(number, float) and not (math.isfinite(number) and number.is_integer()):
            return f"{name}: not an integer"
    return None


def parse_timestamp(text: str | None) -> datetime | None:
    """Parse an ISO 8601 timestamp leniently; None when it cannot be read."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    if moment.tzinfo is None:
        return None
    return moment


@dataclass(frozen=True)
class TaskPage:
    """One page of `tasks/list`."""

    tasks: list[Task]
    next_cursor: str | None

    @classmethod
    def from_result(cls, result: object) -> TaskPage:
        """Read a `tasks/list` result, rejecting shapes that are not a list of tasks."""
        if not isinstance(result, dict) or not isinstance(result.get("tasks"), list):
            raise ProtocolViolation("the server's answer to tasks/list has no list of tasks")
        read = Task.read
        tasks = [
            read(item) or Task.from_result(item, method="tasks/list") for item in result["tasks"]
        ]
        cursor = result.get("nextCursor")
        if cursor is not None and not isinstance(cursor, str):
            raise ProtocolViolation("the server's tasks/list nextCursor is not a string")
        return cls(tasks=tasks, next_cursor=cursor or None)


@dataclass(frozen=True)
class CancelAnswer:
    """What the server answered to one accepted `tasks/cancel`, in either era.

    `task` is the task as the answer reports it (2025-11-25 answers with the Task), or None
    when the answer is an acknowledgement only (2026-07-28), whose outcome polling tells.
    """

    task_id: str
    task: Task | None

    @property
    def status(self) -> str | None:
        """The status the answer reports, if it reports one."""
        return self.task.status if self.task is not None else None

    @property
    def message(self) -> str | None:
        """The status message the answer reports, if any."""
        return self.task.statusMessage if self.task is not None else None

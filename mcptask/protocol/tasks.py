"""Tasks on the wire: the statuses (the one place they are declared), tasks, pages, tools and
outcomes. Plain dataclasses, not pydantic (importing it cost about 100 ms at every start:
bench/one_shot.py)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import TypeVar

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
    return status in TERMINAL_STATUSES


def parse_statuses(text: str) -> tuple[str, ...]:
    """A status filter such as `working,input_required`; ValueError names what is wrong."""
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
_FIELDS = ("taskId", "status", *_TEXT_FIELDS, *_NUMBER_FIELDS)
_KNOWN_FIELDS = frozenset(_FIELDS)


@dataclass(frozen=True, slots=True)
class Task:
    """A task: the known fields typed, and `wire`, the task as sent (unknown fields and their
    order kept). Reading tolerates what the specifications leave open (a missing `ttl`, vendor
    fields, integral floats); built directly, its wire form is its set fields."""

    taskId: str
    status: str
    statusMessage: str | None = None
    createdAt: str | None = None
    lastUpdatedAt: str | None = None
    ttl: int | None = None
    pollInterval: int | None = None
    ttlMs: int | None = None
    pollIntervalMs: int | None = None
    wire: JsonObject = field(default_factory=dict, repr=False, hash=False)

    def __post_init__(self) -> None:
        if not self.wire:
            wire = {name: value for name in _FIELDS if (value := getattr(self, name)) is not None}
            # The documented way for a frozen dataclass to set a field it derives.
            object.__setattr__(self, "wire", _checked(wire))

    @classmethod
    def from_wire(cls, value: object) -> Task:
        """ValueError (`field: why`) when `value` is not a task."""
        wire = _checked(value)
        return cls(**{name: wire[name] for name in _FIELDS if name in wire}, wire=wire)

    @classmethod
    def read(cls, value: object) -> Task | None:
        """None when `value` is not a task."""
        try:
            return cls.from_wire(value)
        except ValueError:
            return None

    @classmethod
    def from_result(cls, result: object, *, method: str) -> Task:
        """A result that is a task, flat (the spec) or wrapped in `task`."""
        if (
            isinstance(result, dict)
            and "taskId" not in result
            and isinstance(result.get("task"), dict)
        ):
            result = result["task"]
        try:
            return cls.from_wire(result)
        except ValueError as problem:
            raise ProtocolViolation(
                f"the server's answer to {method} is not a task ({problem})"
            ) from None

    def to_wire(self) -> JsonObject:
        return dict(self.wire)

    @property
    def extra(self) -> JsonObject:
        """The fields this model does not know (what the modern era inlines, vendor fields)."""
        return {name: value for name, value in self.wire.items() if name not in _KNOWN_FIELDS}

    @property
    def poll_interval_seconds(self) -> float | None:
        """The poll interval the server asked for, if any (either era)."""
        interval = self.pollInterval if self.pollInterval is not None else self.pollIntervalMs
        return interval / 1000 if interval is not None else None

    @property
    def ttl_milliseconds(self) -> int | None:
        """The task's time to live in milliseconds (either era); None is unlimited or unsaid."""
        return self.ttl if self.ttl is not None else self.ttlMs

    @property
    def created(self) -> datetime | None:
        return parse_timestamp(self.createdAt)

    @property
    def updated(self) -> datetime | None:
        return parse_timestamp(self.lastUpdatedAt)


def _checked(value: object) -> JsonObject:
    """`value` as a task's wire form: itself, or a copy with integral floats made ints;
    ValueError (`field: why`) when it is not a task."""
    if not isinstance(value, dict):
        raise ValueError("result: not an object")
    for name in ("taskId", "status"):
        if not isinstance(value.get(name), str):
            raise ValueError(f"{name}: {'missing' if name not in value else 'not a string'}")
    for name in _TEXT_FIELDS:
        if not isinstance(value.get(name), str | None):
            raise ValueError(f"{name}: not a string")
    integral: JsonObject = {}
    for name in _NUMBER_FIELDS:
        number = value.get(name)
        if isinstance(number, float) and math.isfinite(number) and number.is_integer():
            integral[name] = int(number)
        elif number is not None and (isinstance(number, bool) or not isinstance(number, int)):
            raise ValueError(f"{name}: not an integer")
    return {**value, **integral} if integral else value


def parse_timestamp(text: str | None) -> datetime | None:
    """An ISO 8601 timestamp, timezone-aware; None when absent or unreadable."""
    if not text:
        return None
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else None


Item = TypeVar("Item")


def read_page(
    result: object, method: str, read: Callable[[object], Item]
) -> tuple[list[Item], str | None]:
    """A page of `tasks/list` or `tools/list`: its items, read by `read`, and the next cursor
    (None on the last page)."""
    key = method.partition("/")[0]  # the list is named like the method: tasks, tools
    if not isinstance(result, dict) or not isinstance(result.get(key), list):
        raise ProtocolViolation(f"the server's answer to {method} has no list of {key}")
    cursor = result.get("nextCursor")
    if cursor is not None and not isinstance(cursor, str):
        raise ProtocolViolation(f"the server's {method} nextCursor is not a string")
    return [read(item) for item in result[key]], cursor or None


MAX_PAGES = 5_000
"""Pages of one listing followed at most (250,000 tasks at 50 a page): a server that hands
out fresh cursors forever must not grow memory and the record forever."""


@dataclass(frozen=True)
class ToolInfo:
    """One tool of `tools/list`: what `start` needs to gate and validate a call."""

    name: str
    input_schema: JsonObject | None
    task_support: str | None
    """`execution.taskSupport` as sent, None when absent."""

    @classmethod
    def from_wire(cls, value: object) -> ToolInfo:
        if not isinstance(value, dict) or not isinstance(value.get("name"), str):
            raise ProtocolViolation("the server's tools/list has a tool without a name")
        schema = value.get("inputSchema")
        execution = value.get("execution")
        support = execution.get("taskSupport") if isinstance(execution, dict) else None
        return cls(
            name=value["name"],
            input_schema=schema if isinstance(schema, dict) else None,
            task_support=support if isinstance(support, str) else None,
        )


@dataclass(frozen=True)
class ToolCallAnswer:
    """What a task-augmented `tools/call` came back with: `task`, or else `result`, the
    CallToolResult of a call the server ran at once."""

    task: Task | None
    result: JsonObject | None


@dataclass(frozen=True)
class TaskOutcome:
    """How a finished task ended: its CallToolResult, or the JSON-RPC error object its request
    ended in, exactly as sent (None when the server gave none)."""

    task_id: str
    status: str
    result: JsonObject | None
    error: JsonObject | None

    @property
    def kind(self) -> str:
        """`completed`, `tool-error`, `failed` or `cancelled`: what the exit codes
        distinguish (docs/reference/exit-codes.md), the same in both eras."""
        if self.status == CANCELLED:
            return "cancelled"
        # `isError: true`: 2025-11-25 ends such a task `failed`, 2026-07-28 `completed`.
        if self.result is not None and self.result.get("isError") is True:
            return "tool-error"
        if self.status == FAILED or self.error is not None:
            return "failed"
        return "completed"

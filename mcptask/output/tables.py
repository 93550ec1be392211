"""Rich renderables of tasks and cancel results, shared by the command views. Server text is
always passed through `sanitize.clean` and shown as Rich `Text`, never parsed as markup."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from mcptask.operations.outcomes import CancelReport, CancelResult, Outcome
from mcptask.output.sanitize import clean, clean_block
from mcptask.protocol.inputs import task_message
from mcptask.protocol.jsonrpc import JsonObject
from mcptask.protocol.tasks import Task

STATUS_STYLES = {
    "working": "yellow",
    "input_required": "magenta",
    "completed": "green",
    "failed": "red",
    "cancelled": "blue",
}
OUTCOME_STYLES = {
    Outcome.CANCELLED: "green",
    Outcome.ALREADY_FINISHED: "cyan",
    Outcome.NOT_FOUND: "red",
    Outcome.PENDING: "yellow",
    Outcome.REQUESTED: "yellow",
    Outcome.UNKNOWN: "bold red",
    Outcome.ERROR: "bold red",
    Outcome.SKIPPED: "dim",
}


def status_text(status: str | None) -> Text:
    if status is None:
        return Text("-", style="dim")
    return Text(clean(status), style=STATUS_STYLES.get(status, ""))


def age(moment: datetime | None, now: datetime | None = None) -> str:
    """How long ago, compactly: `12s`, `5m`, `3h`, `2d`."""
    if moment is None:
        return "-"
    seconds = max(0, int(((now or datetime.now(UTC)) - moment).total_seconds()))
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def milliseconds(value: int | None, *, none: str = "-") -> str:
    if value is None:
        return none
    return f"{value / 1000:g}s" if value >= 1000 else f"{value}ms"


ROOM_BESIDE_IDS = 44
"""Columns kept for what stands beside an id longer than the screen allows (status, ages,
ttl, a few characters of message)."""


def print_tasks(console: Console, tasks: Sequence[Task], servers: Sequence[str] = ()) -> None:
    """The task list as a table: id, status, message, age, last change, ttl; with `servers`
    (one name per task), a SERVER column first."""
    now = datetime.now(UTC)
    rows = [
        (
            Text(clean(task.taskId)),
            status_text(task.status),
            Text(clean(task_message(task))),
            age(task.created, now),
            age(task.updated, now),
            milliseconds(task.ttl_milliseconds, none="none"),
        )
        for task in tasks
    ]
    print_id_table(console, ("STATUS", "MESSAGE", "AGE", "UPDATED", "TTL"), rows, servers)


def grid(
    columns: Sequence[str], rows: Iterable[Iterable[str | Text]] = (), **options: Any
) -> Table:
    """A borderless table with a bold header, each column given `options`; text in `rows` is
    cleaned (and never read as markup)."""
    table = Table(box=None, header_style="bold", pad_edge=False)
    for column in columns:
        table.add_column(column, **options)
    for row in rows:
        table.add_row(*cleaned(row))
    return table


def print_id_table(
    console: Console,
    columns: tuple[str, ...],
    rows: Sequence[Sequence[str | Text]],
    servers: Sequence[str] = (),
) -> None:
    """Print a table of tasks whose first column, TASK ID, is as wide as the longest id,
    never wrapped nor cut (an id is copied and pasted whole): wider than the screen when the
    id needs it, never cropped; the other columns give way. With `servers` (one per row), a
    SERVER column stands first, never wrapped."""
    table = grid(["SERVER"] if servers else [], no_wrap=True)
    widest = max((cell_len(str(row[0])) for row in rows), default=0)
    table.add_column("TASK ID", no_wrap=True, overflow="ignore", min_width=widest)
    for column in columns:
        table.add_column(column, overflow="ellipsis")
    for index, row in enumerate(rows):
        table.add_row(*([Text(clean(servers[index]))] if servers else []), *row)
    if widest + ROOM_BESIDE_IDS > console.width:
        # Rich widens a table past the console only when told its width.
        table.width = widest + ROOM_BESIDE_IDS
    console.print(table, crop=False)


def field_table(rows: Iterable[tuple[str | Text, str | Text]]) -> Table:
    """A two-column table of names (bold) and values (folded when long); text is cleaned."""
    table = Table(box=None, show_header=False, pad_edge=False)
    table.add_column(style="bold")
    table.add_column(overflow="fold")
    for row in rows:
        table.add_row(*cleaned(row))
    return table


def cleaned(row: Iterable[str | Text]) -> list[Text]:
    return [cell if isinstance(cell, Text) else Text(clean(cell)) for cell in row]


def task_detail(task: Task) -> Table:
    """One task in full, as a two-column table (unknown fields included)."""
    table = field_table([])
    now = datetime.now(UTC)
    table.add_row("Task ID", Text(clean(task.taskId)))
    table.add_row("Status", status_text(task.status))
    if task.statusMessage:
        table.add_row("Message", Text(clean(task.statusMessage)))
    table.add_row("Created", Text(f"{clean(task.createdAt or '-')} ({age(task.created, now)} ago)"))
    table.add_row(
        "Updated", Text(f"{clean(task.lastUpdatedAt or '-')} ({age(task.updated, now)} ago)")
    )
    table.add_row("TTL", milliseconds(task.ttl_milliseconds, none="none (kept until purged)"))
    interval = task.poll_interval_seconds
    table.add_row("Poll interval", milliseconds(None if interval is None else int(interval * 1000)))
    # What the modern era inlines (result, error, inputRequests) and any vendor fields.
    for name, value in task.extra.items():
        if name != "resultType":
            table.add_row(Text(clean(name)), Text(clean(json.dumps(value))))
    return table


def print_cancels(
    console: Console, results: Sequence[CancelResult], servers: Sequence[str] = ()
) -> None:
    """Per-task outcomes of a cancel run; with `servers` (one per result), a SERVER column."""
    rows = [
        (
            Text(clean(result.task_id)),
            Text(result.outcome.value, style=OUTCOME_STYLES[result.outcome]),
            status_text(result.status),
            Text(clean(result.message or "")),
        )
        for result in results
    ]
    print_id_table(console, ("OUTCOME", "STATUS", "MESSAGE"), rows, servers)


def cancel_summary(report: CancelReport) -> Text:
    """One line: how many tasks ended with each outcome (zeros left out)."""
    counts = report.counts()
    parts = [f"{count} {outcome}" for outcome, count in counts.items() if count]
    total = len(report.results)
    line = Text(f"{total} task{'s' if total != 1 else ''}: ", style="bold")
    line.append(", ".join(parts) if parts else "nothing to do")
    if report.interrupted:
        line.append(" (interrupted)", style="yellow")
    return line


def tool_result_text(result: JsonObject) -> Text:
    """A CallToolResult for a person: each text block as text (sanitized, lines kept), other
    blocks named by kind; `structuredContent` as JSON when there is no text at all."""
    text = Text()
    content = result.get("content")
    blocks = content if isinstance(content, list) else []
    for block in blocks:
        if text:
            text.append("\n")
        text.append(_block_text(block))
    structured = result.get("structuredContent")
    if not text and structured is not None:
        text.append(clean_block(json.dumps(structured, indent=2)))
    return text


def _block_text(block: object) -> Text:
    if not isinstance(block, dict):
        return Text(clean(json.dumps(block)), style="dim")
    kind = block.get("type")
    if kind == "text":
        return Text(clean_block(block.get("text", "")))
    if kind in ("image", "audio"):
        size = len(str(block.get("data", ""))) * 3 // 4
        return Text(f"[{clean(kind)}: {clean(block.get('mimeType', '?'))}, ~{size} bytes]", "dim")
    if kind == "resource" and isinstance(block.get("resource"), dict):
        resource = block["resource"]
        shown = Text(f"[resource: {clean(resource.get('uri', '?'))}]", style="dim")
        if isinstance(resource.get("text"), str):
            shown.append("\n").append(clean_block(resource["text"]))
        return shown
    if kind == "resource_link":
        return Text(f"[link: {clean(block.get('uri', '?'))}]", style="dim")
    return Text(f"[{clean(kind or 'unknown')} content]", style="dim")

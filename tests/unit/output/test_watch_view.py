"""watch's change lines never pass server text through unsanitized; its live table is redrawn
when what it shows changes, and when only its ages do, every few seconds."""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import cast

import pytest

from mcptask.operations.watch import Change, Watch, WatchedTask
from mcptask.output.screen import Screen
from mcptask.output.views import watch as watch_view
from mcptask.output.views.watch import WatchView
from mcptask.protocol.tasks import Task


def test_change_lines_strip_escape_sequences_from_every_server_field() -> None:
    out = io.StringIO()
    screen = Screen("table", color=False, stdout=out, stderr=io.StringIO())
    hostile = "weird\x1b]0;TITLE\x07\x1b[31mRED\u202e"
    WatchView(screen).change(Change(datetime.now(UTC), "id\x1b[2J", hostile, hostile, "msg\x9b31m"))
    line = out.getvalue()
    assert "\x1b" not in line
    assert "\x07" not in line
    assert "\x9b" not in line
    assert "\u202e" not in line
    assert "weirdRED -> weirdRED" in line


@dataclass
class Watched:
    """What the live table reads of a `Watch`."""

    tasks: dict[str, WatchedTask] = field(default_factory=dict)
    pushes_seen: int = 0

    def poll_interval(self) -> float:
        return 1.0


def test_the_live_table_is_redrawn_when_what_it_shows_changes_and_ages_every_few_seconds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # Rich takes the StringIO for a terminal
    clock = [1000.0]
    monkeypatch.setattr(watch_view, "time", SimpleNamespace(monotonic=lambda: clock[0]))
    out = io.StringIO()
    view = WatchView(Screen("table", color=False, stdout=out, stderr=io.StringIO()))
    long_ago = datetime.now(UTC) - timedelta(minutes=90)  # every age reads 1h throughout
    task = Task.read({"taskId": "t1", "status": "working", "createdAt": long_ago.isoformat()})
    assert task is not None
    watched = Watched({"t1": WatchedTask("t1", task, changed_at=long_ago)})
    watch = cast(Watch, watched)

    def drawn() -> str:
        """What this redraw wrote."""
        before = len(out.getvalue())
        view.redraw(watch)
        return out.getvalue()[before:]

    with view.following(watch):
        first = drawn()
        assert "t1" in first
        assert "1 working" in first
        assert drawn() == ""  # nothing changed
        watched.tasks["t1"].changed_at = long_ago - timedelta(hours=2)
        assert drawn() == ""  # only an age, and too soon
        clock[0] += watch_view.AGES_EVERY_SECONDS
        assert "3h" in drawn()
        watched.pushes_seen = 1
        assert "status pushes: 1" in drawn()  # at once

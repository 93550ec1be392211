"""watch's change lines never pass server text through unsanitized; its live table is redrawn
only when what it shows changes."""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import cast

import pytest

from mcptask.operations.watch import Change, Watch, WatchedTask
from mcptask.output.screen import Screen
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


def test_the_live_table_is_redrawn_only_when_what_it_shows_changes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # Rich takes the StringIO for a terminal
    out = io.StringIO()
    view = WatchView(Screen("table", color=False, stdout=out, stderr=io.StringIO()))
    long_ago = datetime.now(UTC) - timedelta(minutes=90)  # every age reads 1h throughout
    task = Task.read({"taskId": "t1", "status": "working", "createdAt": long_ago.isoformat()})
    assert task is not None
    watched = Watched({"t1": WatchedTask("t1", task, changed_at=long_ago)})
    watch = cast(Watch, watched)
    with view.following(watch):
        view.redraw(watch)
        drawn = out.getvalue()
        assert "t1" in drawn
        assert "1 working" in drawn
        view.redraw(watch)
        assert out.getvalue() == drawn
        watched.pushes_seen = 1
        view.redraw(watch)
        assert "status pushes: 1" in out.getvalue()[len(drawn) :]

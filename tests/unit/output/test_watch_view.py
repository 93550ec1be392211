"""watch's change lines never pass server text through unsanitized."""

from __future__ import annotations

import io
from datetime import UTC, datetime

from mcptask.operations.watch import Change
from mcptask.output.screen import Screen
from mcptask.output.views.watch import WatchView


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

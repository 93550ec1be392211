"""The views of start, result and forget: server text sanitized and never read as markup,
the result's content as text, JSON exactly as sent, notes on stderr."""

from __future__ import annotations

import io
import json

import pytest

from mcptask.errors import UsageError
from mcptask.operations.polling import ResultReport
from mcptask.operations.start import StartReport
from mcptask.output.screen import Screen
from mcptask.output.views.saved import ForgetView, Forgotten
from mcptask.output.views.tasks import ResultView, StartView
from mcptask.protocol.tasks import Task, TaskOutcome

HOSTILE = "line one\x1b[31m [bold]not markup[/bold]\x1b]0;TITLE\x07\r\nline two\u202e\ttab"


def screen(output: str) -> tuple[Screen, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return Screen(output, color=False, stdout=out, stderr=err), out, err


def report(status: str, result: object = None, error: object = None) -> ResultReport:
    task = Task(taskId="t1", status=status)
    return ResultReport(task, TaskOutcome("t1", status, result, error))  # type: ignore[arg-type]


def test_result_table_is_the_content_as_sanitized_text_with_its_lines() -> None:
    shown, out, err = screen("table")
    content = [
        {"type": "text", "text": HOSTILE},
        {"type": "image", "mimeType": "image/png", "data": "AAAA"},
        {"type": "resource", "resource": {"uri": "file:///x", "text": "inside"}},
    ]
    ResultView(shown).show(report("completed", {"content": content}))
    text = out.getvalue()
    assert "\x1b" not in text
    assert "\x07" not in text
    assert "\r" not in text
    assert "\u202e" not in text
    assert "[bold]not markup[/bold]" in text  # shown, not interpreted
    assert "line one" in text.splitlines()[0]
    assert text.splitlines()[1].startswith("line two")
    assert "[image: image/png, ~3 bytes]" in text
    assert "[resource: file:///x]" in text
    assert "inside" in text
    assert err.getvalue() == ""


def test_result_json_is_the_result_as_sent() -> None:
    shown, out, _ = screen("json")
    sent = {"content": [{"type": "text", "text": HOSTILE}], "isError": True, "_meta": {"k": 1}}
    ResultView(shown).show(report("completed", sent))
    document = json.loads(out.getvalue())
    assert document == {
        "taskId": "t1",
        "status": "completed",
        "outcome": "tool-error",
        "result": sent,
        "error": None,
    }


def test_result_of_a_failure_shows_its_error_and_says_so() -> None:
    shown, out, err = screen("table")
    ResultView(shown).show(report("failed", None, {"code": -32603, "message": "boom\x1b[2J"}))
    assert out.getvalue().strip() == "error -32603: boom"
    assert "failed" in err.getvalue()


def test_structured_content_shows_when_there_is_no_text() -> None:
    shown, out, _ = screen("table")
    ResultView(shown).show(report("completed", {"content": [], "structuredContent": {"n": 1}}))
    assert json.loads(out.getvalue()) == {"n": 1}


def test_start_shows_the_task_and_its_notes() -> None:
    shown, out, err = screen("ids")
    started = StartReport("tool", Task(taskId="abc", status="working"), None, notes=["a note"])
    StartView(shown).show(started)
    assert out.getvalue() == "abc\n"
    assert "a note" in err.getvalue()


def test_start_of_a_call_run_at_once_says_so_and_prints_the_result() -> None:
    shown, out, err = screen("table")
    ran = StartReport("greet", None, {"content": [{"type": "text", "text": "Hello!"}]})
    StartView(shown).show(ran)
    assert out.getvalue().strip() == "Hello!"
    assert "without making a task" in err.getvalue()


def test_start_watch_refuses_json_before_anything_is_sent() -> None:
    shown, _, _ = screen("json")
    with pytest.raises(UsageError, match="use -o jsonl"):
        StartView(shown, watching=True)


def test_forget_lists_what_it_dropped() -> None:
    shown, out, err = screen("table")
    ForgetView(shown).show(Forgotten(["a\x1b[31m"], ["zz"], "http://x/mcp"))
    assert out.getvalue() == "a\n"
    assert "forgot 1 task of http://x/mcp" in err.getvalue()
    assert "not recorded here: zz" in err.getvalue()


def test_forget_prints_each_id_whole_and_as_it_is() -> None:
    """No `:name:` read as an emoji code, no long id wrapped at the terminal's width."""
    shown, out, _ = screen("table")
    long_id = ":smile:" + "x" * 200
    ForgetView(shown).show(Forgotten([long_id], [], None))
    assert out.getvalue() == long_id + "\n"

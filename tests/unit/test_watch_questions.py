"""A watch reads what a task waiting for input asks with one tasks/get of its own: what that
read shows is the watch's too (a change it shows is reported, not lost to the next poll)."""

from __future__ import annotations

import io
import json

from mcptask.cli.commands.watch import follow
from mcptask.cli.invocation import Invocation
from mcptask.cli.options import Common
from mcptask.client.session import McpClient
from mcptask.operations.watch import WatchOptions
from mcptask.output.screen import Screen
from mcptask.output.views.watch import WatchView
from mcptask.protocol.jsonrpc import JsonObject
from tests.unit.fake_server import FakeServer

ASKS = {
    "confirm-1": {
        "method": "elicitation/create",
        "params": {
            "message": "Sure?",
            "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
        },
    }
}


class MovingServer(FakeServer):
    """The task asks at the first tasks/get; the second (the question's read) shows it
    working again, its question answered elsewhere; the third, completed."""

    gets = 0

    def _handle(self, method: str, params: JsonObject, session: str | None) -> JsonObject:
        if method == "tasks/get":
            self.gets += 1
            current = self.tasks["t1"]
            if self.gets == 2:
                current.update(status="working", statusMessage="answered elsewhere")
                current.pop("inputRequests", None)
            elif self.gets >= 3:
                current.update(status="completed", statusMessage="done")
        return super()._handle(method, params, session)


def test_the_read_of_a_question_is_the_watchs_too() -> None:
    server = MovingServer(modern=True)
    server.add("t1", "input_required", inputRequests=ASKS)
    client = McpClient(server)
    client.connect()
    stdout, stderr = io.StringIO(), io.StringIO()
    screen = Screen("jsonl", stdout=stdout, stderr=stderr)
    invocation = Invocation(Common(url="http://127.0.0.1:9/mcp"), screen=screen)
    options = WatchOptions(task_ids=["t1"], interval=0.01)
    report = follow(client, WatchView(screen), options, invocation)
    moves = [
        (line["previous"], line["status"], line["statusMessage"])
        for line in map(json.loads, stdout.getvalue().splitlines())
    ]
    assert moves == [
        (None, "input_required", None),
        ("input_required", "working", "answered elsewhere"),  # the question's read
        ("working", "completed", "done"),
    ]
    assert report.all_completed
    assert server.gets == 3

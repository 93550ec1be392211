"""The server's requests about 2025-11-25 tasks: routed by the task they name, the same
question sent twice asked once and answered on both, a request about no task refused."""

from __future__ import annotations

from typing import Any

from mcptask.client.asking import (
    MAX_ASKING_TASKS,
    MAX_OPEN_QUESTIONS,
    RELATED_TASK,
    AskedTasks,
)
from mcptask.protocol.jsonrpc import JsonObject


class Wire:
    """A transport's request handler slot, and the replies sent."""

    def __init__(self) -> None:
        self.handler: Any = None
        self.sent: list[JsonObject] = []

    def set_request_handler(self, handler: Any) -> None:
        self.handler = handler

    def deliver(self, msg_id: str, task_id: str | None, message: str) -> None:
        params: JsonObject = {"mode": "form", "message": message, "requestedSchema": {}}
        if task_id is not None:
            params["_meta"] = {RELATED_TASK: {"taskId": task_id}}
        request = {"jsonrpc": "2.0", "id": msg_id, "method": "elicitation/create"}
        self.handler({**request, "params": params}, self.sent.append)


def test_requests_are_routed_by_task_and_duplicates_answered_on_both() -> None:
    wire = Wire()
    asked = AskedTasks(wire)  # type: ignore[arg-type]
    wire.deliver("a-1", "t1", "Which branch?")
    wire.deliver("b-1", "t2", "Other task")
    wire.deliver("a-2", "t1", "Which branch?")  # the same question on another stream
    questions = asked.of("t1").unanswered()
    assert [(q.key, q.message) for q in questions] == [("a-1", "Which branch?")]
    assert "_meta" not in questions[0].params
    asked.of("t1").answer({"a-1": {"action": "decline"}})
    assert wire.sent == [
        {"jsonrpc": "2.0", "id": "a-1", "result": {"action": "decline"}},
        {"jsonrpc": "2.0", "id": "a-2", "result": {"action": "decline"}},
    ]
    assert asked.of("t1").unanswered() == []
    assert [q.key for q in asked.of("t2").unanswered()] == ["b-1"]


def test_a_request_about_no_task_is_refused() -> None:
    wire = Wire()
    AskedTasks(wire)  # type: ignore[arg-type]
    wire.deliver("x", None, "Unrelated")
    assert wire.sent[0]["id"] == "x"
    assert wire.sent[0]["error"]["code"] == -32601


def test_a_server_that_floods_mcptask_with_questions_is_refused_past_the_bounds() -> None:
    """A hostile server naming endless tasks, or asking one task endless (or the same)
    questions, holds at most the bounds' worth; the rest are answered with an error."""
    wire = Wire()
    asked = AskedTasks(wire)  # type: ignore[arg-type]
    for n in range(MAX_OPEN_QUESTIONS + 5):
        wire.deliver(f"q-{n}", "t1", f"Question {n}")
    for n in range(MAX_OPEN_QUESTIONS + 5):
        wire.deliver(f"d-{n}", "t2", "The same question")
    for n in range(MAX_ASKING_TASKS + 5):
        wire.deliver(f"t-{n}", f"task-{n}", "One each")
    assert len(asked.of("t1").unanswered()) == MAX_OPEN_QUESTIONS
    assert asked.known(f"task-{MAX_ASKING_TASKS}") is None
    refused = [reply["id"] for reply in wire.sent if "error" in reply]
    assert refused[:5] == [f"q-{n}" for n in range(MAX_OPEN_QUESTIONS, MAX_OPEN_QUESTIONS + 5)]
    assert refused[5:10] == [f"d-{n}" for n in range(MAX_OPEN_QUESTIONS, MAX_OPEN_QUESTIONS + 5)]
    # 5 + 5 questions, and the 7 tasks past the bound (t1 and t2 hold two of its places).
    assert len(refused) == 17
    assert {reply["error"]["code"] for reply in wire.sent} == {-32603}

"""A 2025-11-25 task that waits for input asks the client (elicitation/create, tagged with
the related task) on the stream of a tasks/result call and, once, on the session's GET
stream; the client's JSON-RPC response moves the task on. Only a client that declared
`elicitation` in initialize is asked."""

from __future__ import annotations

import json
import threading
from typing import Any

import httpx

from tests.reference_server.conftest import MakeServer
from tests.reference_server.harness import DEADLINE, JsonObject, in_thread
from tests.reference_server.wire_harness import (
    ACCEPT,
    HttpServer,
    http_server,
    request,
    sse_data,
    stdio_server,
    tasks_request,
)

RELATED = "io.modelcontextprotocol/related-task"
ASKING_JOB = {
    "awaitInput": True,
    "steps": [[0, "input_required", "Which branch?"], [5, "completed", "deployed"]],
}


class Asked(list[JsonObject]):
    """The requests the server sent to the client, in order; `wait(n)` for the nth."""

    def __init__(self) -> None:
        super().__init__()
        self._cond = threading.Condition()

    def append(self, message: JsonObject) -> None:
        with self._cond:
            super().append(message)
            self._cond.notify_all()

    def wait(self, count: int) -> JsonObject:
        with self._cond:
            assert self._cond.wait_for(lambda: len(self) >= count, DEADLINE), list(self)
            return self[count - 1]


def initialize(elicitation: JsonObject | None) -> JsonObject:
    capabilities: JsonObject = {"tasks": {}}
    if elicitation is not None:
        capabilities["elicitation"] = elicitation
    return {
        "protocolVersion": "2025-11-25",
        "capabilities": capabilities,
        "clientInfo": {"name": "test", "version": "0"},
    }


def call(arguments: JsonObject) -> JsonObject:
    return {"name": "long_job", "arguments": arguments, "task": {}}


def answer(question: JsonObject, text: str) -> JsonObject:
    result = {"action": "accept", "content": {"answer": text}}
    return {"jsonrpc": "2.0", "id": question["id"], "result": result}


def check_question(question: JsonObject, task_id: str, message: str) -> None:
    assert question["method"] == "elicitation/create"
    assert isinstance(question["id"], str)
    params = question["params"]
    assert params["mode"] == "form"
    assert params["message"] == message
    assert params["requestedSchema"]["required"] == ["answer"]
    assert params["_meta"][RELATED] == {"taskId": task_id}


def test_tasks_result_asks_and_the_answer_moves_the_task_on(make: MakeServer) -> None:
    server = make()
    server.legacy.result("initialize", initialize({}))
    task_id = server.legacy.result("tools/call", call(ASKING_JOB))["task"]["taskId"]
    server.advance(0)
    asked = Asked()
    waiter, answers = in_thread(
        lambda: server.legacy.dispatcher.handle(
            request("tasks/result", {"taskId": task_id}), "s1", asked.append
        )
    )
    asked.wait(1)
    check_question(asked[0], task_id, "Which branch?")
    # An answer from another session does not count; the asked session's does.
    assert server.legacy.dispatcher.handle(answer(asked[0], "main"), "s2").response is None
    assert server.legacy.get(task_id)["status"] == "input_required"
    assert server.legacy.dispatcher.handle(answer(asked[0], "main"), "s1").response is None
    assert server.legacy.get(task_id)["status"] == "working"
    server.advance(5)
    waiter.join(DEADLINE)
    assert answers[0].response["result"]["content"][0]["text"] == "deployed"
    assert len(asked) == 1


def test_a_task_that_asks_again_is_asked_again_on_the_same_stream(make: MakeServer) -> None:
    server = make()
    server.legacy.result("initialize", initialize({"form": {}, "url": {}}))
    job = {
        "awaitInput": True,
        "steps": [
            [0, "input_required", "First?"],
            [1, "input_required", "Second?"],
            [1, "completed", "done"],
        ],
    }
    task_id = server.legacy.result("tools/call", call(job))["task"]["taskId"]
    server.advance(0)
    asked = Asked()
    waiter, answers = in_thread(
        lambda: server.legacy.dispatcher.handle(
            request("tasks/result", {"taskId": task_id}), "s1", asked.append
        )
    )
    asked.wait(1)
    check_question(asked[0], task_id, "First?")
    server.legacy.dispatcher.handle(answer(asked[0], "a"), "s1")
    server.advance(1)
    asked.wait(2)
    check_question(asked[1], task_id, "Second?")
    assert asked[1]["id"] != asked[0]["id"]
    # A late answer to the first question changes nothing.
    server.legacy.dispatcher.handle(answer(asked[0], "late"), "s1")
    assert server.legacy.get(task_id)["status"] == "input_required"
    server.legacy.dispatcher.handle(answer(asked[1], "b"), "s1")
    server.advance(1)
    waiter.join(DEADLINE)
    assert answers[0].response["result"]["content"][0]["text"] == "done"


def test_a_client_that_did_not_declare_elicitation_is_not_asked(make: MakeServer) -> None:
    server = make()
    server.legacy.result("initialize", initialize(None))
    task_id = server.legacy.result("tools/call", call(ASKING_JOB))["task"]["taskId"]
    server.advance(0)
    asked = Asked()
    waiter, answers = in_thread(
        lambda: server.legacy.dispatcher.handle(
            request("tasks/result", {"taskId": task_id}), "s1", asked.append
        )
    )
    assert server.clock.wait_for_waiting(1, DEADLINE), "tasks/result did not wait"
    assert asked == []
    assert answers == []
    server.legacy.result("tasks/cancel", {"taskId": task_id})
    waiter.join(DEADLINE)
    assert asked == []


def test_an_error_response_leaves_the_task_waiting(make: MakeServer) -> None:
    server = make()
    server.legacy.result("initialize", initialize({}))
    task_id = server.legacy.result("tools/call", call(ASKING_JOB))["task"]["taskId"]
    server.advance(0)
    asked = Asked()
    in_thread(
        lambda: server.legacy.dispatcher.handle(
            request("tasks/result", {"taskId": task_id}), "s1", asked.append
        )
    )
    asked.wait(1)
    refusal = {"jsonrpc": "2.0", "id": asked[0]["id"], "error": {"code": -1, "message": "no"}}
    server.legacy.dispatcher.handle(refusal, "s1")
    assert server.legacy.get(task_id)["status"] == "input_required"
    server.legacy.result("tasks/cancel", {"taskId": task_id})


# -- over HTTP ------------------------------------------------------------------------------


def open_session(server: HttpServer) -> str:
    answer_ = server.post(request("initialize", initialize({"form": {}})))
    assert answer_.status_code == 200, answer_.text
    return answer_.headers["Mcp-Session-Id"]


def stream_messages(response: httpx.Response) -> Any:
    """The JSON-RPC messages of an SSE stream, as they arrive."""
    return stream_messages_from(response.iter_lines())


def test_http_tasks_result_stream_carries_the_question_before_the_result() -> None:
    with http_server() as server:
        session = open_session(server)
        created = server.post(request("tools/call", call(ASKING_JOB)), session)
        task_id = sse_data(created.text)[-1]["result"]["task"]["taskId"]
        server.store.clock.advance(0)  # type: ignore[attr-defined]
        seen: list[JsonObject] = []
        question_seen = threading.Event()

        def read_result() -> None:
            with (
                httpx.Client(timeout=DEADLINE) as client,
                client.stream(
                    "POST",
                    server.url,
                    content=json.dumps(tasks_request("tasks/result", task_id)),
                    headers=server.headers(session),
                ) as response,
            ):
                assert response.headers["content-type"].startswith("text/event-stream")
                for message in stream_messages(response):
                    seen.append(message)
                    if message.get("method") == "elicitation/create":
                        question_seen.set()

        reader = threading.Thread(target=read_result, daemon=True)
        reader.start()
        assert question_seen.wait(DEADLINE), "no question on the tasks/result stream"
        question = seen[-1]
        check_question(question, task_id, "Which branch?")
        posted = server.post(answer(question, "main"), session)
        assert posted.status_code == 202
        assert server.status(task_id) == "working"
        server.store.clock.advance(5)  # type: ignore[attr-defined]
        reader.join(DEADLINE)
        assert seen[-1]["result"]["content"][0]["text"] == "deployed"


def test_http_get_stream_is_asked_once_while_it_listens() -> None:
    with http_server() as server:
        session = open_session(server)
        job = {"awaitInput": True, "steps": [[1, "input_required", "Over GET?"]]}
        created = server.post(request("tools/call", call(job)), session)
        task_id = sse_data(created.text)[-1]["result"]["task"]["taskId"]
        headers = {"Accept": ACCEPT, "Mcp-Session-Id": session}
        with (
            httpx.Client(timeout=DEADLINE) as client,
            client.stream("GET", server.url, headers=headers) as response,
        ):
            lines = response.iter_lines()
            while next(lines) != "":  # the priming event: the stream is open
                pass
            server.store.clock.advance(1)  # type: ignore[attr-defined]
            question = next(stream_messages_from(lines))
        check_question(question, task_id, "Over GET?")
        assert server.post(answer(question, "ok"), session).status_code == 202
        assert server.status(task_id) == "working"


def stream_messages_from(lines: Any) -> Any:
    """The JSON-RPC messages of the SSE lines still to come."""
    data: list[str] = []
    for line in lines:
        if line.startswith("data:"):
            data.append(line[5:].strip())
        elif not line and data:
            text, data = "\n".join(data), []
            if text:
                yield json.loads(text)


# -- over stdio -----------------------------------------------------------------------------


def test_stdio_tasks_result_asks_in_a_line_of_its_own() -> None:
    with stdio_server() as server:
        server.write(request("initialize", initialize({})))
        assert "result" in server.read()
        server.write(request("tools/call", call(ASKING_JOB)))
        task_id = server.read()["result"]["task"]["taskId"]
        server.store.clock.advance(0)  # type: ignore[attr-defined]
        server.write(tasks_request("tasks/result", task_id))
        question = server.read()
        check_question(question, task_id, "Which branch?")
        server.write(answer(question, "main"))
        server.write(tasks_request("tasks/get", task_id))
        assert server.read()["result"]["status"] == "working"
        server.store.clock.advance(5)  # type: ignore[attr-defined]
        assert server.read()["result"]["content"][0]["text"] == "deployed"

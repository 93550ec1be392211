"""The client's one retry loop: backoff, Retry-After, the time budget, and what may be sent
again (httpx.MockTransport; no sleeping: the retry policy's sleep is recorded)."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from mcptask.client.exchange import RetryPolicy
from mcptask.client.session import McpClient
from mcptask.errors import (
    AnswerLost,
    GatewayFailure,
    HttpTimeout,
    NotDelivered,
    ServerBusy,
    TransientError,
)
from tests.unit.mock_http import Handler, answer, body, transport_for


class Clock:
    """Sleeps that only record how long they would have been."""

    def __init__(self) -> None:
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)


def failing(times: int, failure: TransientError, result: str = "ok") -> Callable[[], str]:
    calls = iter(range(times + 1))

    def attempt() -> str:
        if next(calls) < times:
            raise failure
        return result

    return attempt


def test_backoff_grows_exponentially_with_jitter_and_is_bounded_in_count() -> None:
    clock = Clock()
    policy = RetryPolicy(retries=4, retry_for=60, sleep=clock.sleep, jitter=lambda: 1.0)
    assert policy.run(failing(4, NotDelivered("refused")), what="x") == "ok"
    assert clock.slept == [0.25, 0.5, 1.0, 2.0]
    with pytest.raises(NotDelivered):
        policy.run(failing(5, NotDelivered("refused")), what="x")
    halves = RetryPolicy(retries=2, sleep=(lambda seconds: None), jitter=lambda: 0.0)
    assert halves._delay(3, NotDelivered("x")) == 0.5  # never a near-zero burst


def test_retry_after_is_honoured_and_the_time_budget_ends_retrying() -> None:
    clock = Clock()
    policy = RetryPolicy(retries=10, retry_for=10, sleep=clock.sleep)
    assert policy.run(failing(2, ServerBusy("busy", retry_after=3.0)), what="x") == "ok"
    assert clock.slept == [3.0, 3.0]
    with pytest.raises(ServerBusy, match=r"^busy$"):  # the failure itself, not a wrapper
        policy.run(failing(1, ServerBusy("busy", retry_after=11.0)), what="x")


def test_no_retry_once_the_user_asked_to_stop() -> None:
    policy = RetryPolicy(retries=5, sleep=(lambda seconds: None), stopped=lambda: True)
    with pytest.raises(NotDelivered, match=r"^refused$"):
        policy.run(failing(1, NotDelivered("refused")), what="x")


def test_every_retry_is_logged_with_its_reason() -> None:
    lines: list[str] = []
    policy = RetryPolicy(
        retries=3, sleep=(lambda seconds: None), log=lines.append, jitter=lambda: 1.0
    )
    policy.run(failing(2, GatewayFailure("gateway said 502")), what="tasks/get")
    assert lines == [
        "retry 1/3 of tasks/get in 0.25s: gateway said 502",
        "retry 2/3 of tasks/get in 0.50s: gateway said 502",
    ]


def scripted_server(failures: dict[str, list[Exception | int]]) -> tuple[Handler, list[str]]:
    """A 2025-11-25 server whose answers to a method fail as scripted, then succeed."""
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        message = body(request)
        method = message.get("method", "")
        calls.append(method)
        planned = failures.get(method)
        if planned:
            failure = planned.pop(0)
            if isinstance(failure, int):
                return httpx.Response(failure)
            raise failure
        if method == "server/discover":
            return httpx.Response(404)
        if method == "initialize":
            return answer(
                request,
                {
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tasks": {"list": {}, "cancel": {}}},
                    "serverInfo": {"name": "s", "version": "1"},
                },
            )
        if "id" not in message:
            return httpx.Response(202)
        task = {"taskId": "t", "status": "cancelled" if method == "tasks/cancel" else "working"}
        return answer(request, task)

    return handler, calls


def client_for(handler: Handler) -> McpClient:
    client = McpClient(
        transport_for(handler), retry=RetryPolicy(retries=3, sleep=(lambda seconds: None))
    )
    client.connect()
    return client


def test_an_idempotent_request_is_sent_again_after_a_lost_answer() -> None:
    closed = httpx.RemoteProtocolError("closed without an answer")
    handler, calls = scripted_server({"tasks/get": [closed, 504]})
    assert client_for(handler).get_task("t").status == "working"
    assert calls.count("tasks/get") == 3


@pytest.mark.parametrize("timeout", [httpx.ReadTimeout("slow"), httpx.WriteTimeout("slow")])
def test_no_request_is_sent_again_after_an_http_timeout(timeout: httpx.TimeoutException) -> None:
    # --timeout bounds the wait: a server that held tasks/get that long is not asked again.
    handler, calls = scripted_server({"tasks/get": [timeout]})
    with pytest.raises(HttpTimeout, match="did not answer in time"):
        client_for(handler).get_task("t")
    assert calls.count("tasks/get") == 1


def test_handshake_requests_are_retried_too() -> None:
    handler, calls = scripted_server({"initialize": [httpx.ConnectError("refused"), 503]})
    client_for(handler)
    assert calls.count("initialize") == 3


def test_a_cancel_is_resent_only_when_it_provably_never_arrived() -> None:
    handler, calls = scripted_server({"tasks/cancel": [httpx.ConnectError("refused"), 429]})
    answer = client_for(handler).cancel_task("t")
    assert answer is not None
    assert answer.status == "cancelled"
    assert calls.count("tasks/cancel") == 3
    handler, calls = scripted_server({"tasks/cancel": [httpx.ReadTimeout("slow")]})
    with pytest.raises(AnswerLost):
        client_for(handler).cancel_task("t")
    assert calls.count("tasks/cancel") == 1


def test_each_attempt_has_a_fresh_request_id() -> None:
    ids: list[object] = []
    inner, _ = scripted_server({"tasks/get": [503]})

    def handler(request: httpx.Request) -> httpx.Response:
        if body(request).get("method") == "tasks/get":
            ids.append(body(request)["id"])
        return inner(request)

    client_for(handler).get_task("t")
    assert len(ids) == 2
    assert ids[0] != ids[1]


def test_a_discover_answered_with_an_empty_result_falls_back_to_initialize() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        message = body(request)
        if message["method"] == "server/discover":
            return answer(request, {})  # a lenient legacy server: any method "succeeds"
        if message["method"] == "initialize":
            return answer(
                request,
                {"protocolVersion": "2025-11-25", "capabilities": {"tasks": {}}, "serverInfo": {}},
            )
        return httpx.Response(202)

    client = McpClient(transport_for(handler))
    assert client.connect().protocol_version == "2025-11-25"

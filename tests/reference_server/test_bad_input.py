"""What a client cannot do to the reference server: a message nested past Python's stack, a
method that is not a string, numbers JSON allows but no clock does, a signature in any
text. Each is answered with an error, and the server goes on answering."""

from __future__ import annotations

import math
import os

import pytest

from mcptask.reference_server.scripting import bounded, parse_long_job, parse_seconds
from mcptask.reference_server.wire import JsonRpcError
from tests.conformance.fixtures.toolkit import RequestStateSeal
from tests.reference_server.wire_harness import http_server, request, stdio_server

NESTED = b"[" * 100_000  # deeper than the interpreter's recursion limit


def test_http_answers_a_message_nested_past_the_stack_with_a_parse_error() -> None:
    with http_server() as server:
        answer = server.client.post(
            server.url, content=NESTED, headers=server.headers(None)
        )  # fmt: skip
        assert answer.status_code == 400
        assert answer.json()["error"]["code"] == -32700
        assert server.initialize()  # still serving


def test_stdio_answers_nesting_and_a_non_string_method_then_goes_on() -> None:
    with stdio_server() as server:
        os.write(server._stdin.fileno(), NESTED + b"\n")
        assert server.read()["error"]["code"] == -32700
        server.write({"jsonrpc": "2.0", "id": 4, "method": ["tasks/get"]})
        assert server.read() == {
            "jsonrpc": "2.0",
            "id": 4,
            "error": {"code": -32600, "message": "Invalid JSON-RPC message"},
        }
        server.write(request("ping"))
        assert "result" in server.read()


@pytest.mark.parametrize("value", [math.nan, math.inf, -1.0, True, "1", 1e300, 86_401])
def test_seconds_are_finite_non_negative_numbers_of_at_most_a_day(value: object) -> None:
    with pytest.raises(ValueError, match=r"^seconds must "):
        parse_seconds(value, "seconds")
    with pytest.raises(ValueError, match=r"^seconds must "):
        parse_long_job({"seconds": value})


def test_a_fault_rate_of_nan_is_refused() -> None:
    parse = bounded(float, 0.0, 1.0, "number from 0 to 1")
    with pytest.raises(ValueError, match="nan"):
        parse("nan")
    assert parse("0.5") == 0.5


def test_a_request_state_signed_in_any_text_is_refused_not_crashed() -> None:
    seal = RequestStateSeal()
    token = seal.seal("tool", {"n": 1})
    assert seal.open("tool", token) == {"n": 1}
    payload = token.rpartition(".")[0]
    with pytest.raises(JsonRpcError, match=r"^Invalid requestState"):
        seal.open("tool", f"{payload}.é")  # was a TypeError from compare_digest

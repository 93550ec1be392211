"""What an input_required task asks, read from its `inputRequests`: fields typed, choices,
secrets, URL requests, and a hostile or malformed map refused."""

from __future__ import annotations

from typing import Any

import pytest

from mcptask.errors import ProtocolViolation
from mcptask.protocol.inputs import FormField, read_input_requests, task_message
from mcptask.protocol.tasks import Task


def asking(requests: Any, **fields: Any) -> Task:
    return Task.from_wire(
        {"taskId": "t1", "status": "input_required", "inputRequests": requests, **fields}
    )


FORM = {
    "method": "elicitation/create",
    "params": {
        "mode": "form",
        "message": "Deploy?",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "env": {"type": "string", "enum": ["staging", "prod"], "default": "staging"},
                "count": {"type": "integer", "minimum": 1},
                "token": {"type": "string", "format": "password"},
                "go": {"type": "boolean"},
            },
            "required": ["env", "go"],
        },
    },
}


def test_a_form_reads_as_fields_in_the_servers_order() -> None:
    (request,) = read_input_requests(asking({"k1": FORM}))
    assert (request.key, request.message, request.is_url) == ("k1", "Deploy?", False)
    fields = {f.name: f for f in request.fields}
    assert list(fields) == ["env", "count", "token", "go"]
    assert fields["env"].choices == ["staging", "prod"]
    assert fields["env"].required
    assert fields["env"].default == "staging"
    assert fields["count"].constraints() == ["min 1"]
    assert not fields["count"].required
    assert fields["token"].secret
    assert not fields["env"].secret


@pytest.mark.parametrize(
    ("schema", "text", "value"),
    [
        ({"type": "integer"}, "3", 3),
        ({"type": "number"}, "2.5", 2.5),
        ({"type": "number"}, "2", 2),
        ({"type": "boolean"}, "yes", True),
        ({"type": "boolean"}, "False", False),
        ({"type": "string"}, "007", "007"),
        ({"enum": ["a", "b"]}, "a", "a"),
    ],
)
def test_typed_text_becomes_the_fields_type(schema: Any, text: str, value: Any) -> None:
    converted = FormField("f", schema, required=False).coerce(text)
    assert converted == value
    assert type(converted) is type(value)


@pytest.mark.parametrize(
    ("kind", "text"),
    [
        ("integer", "3.5"),
        ("number", "x"),
        ("number", "inf"),  # Python's float() takes these; JSON has no such numbers
        ("number", "nan"),
        ("number", "1e999"),
        ("boolean", "maybe"),
    ],
)
def test_text_that_is_not_the_fields_type_is_refused_by_name(kind: str, text: str) -> None:
    with pytest.raises(ValueError, match=f"^f: '{text}' is not"):
        FormField("f", {"type": kind}, required=True).coerce(text)


def test_one_of_consts_are_choices() -> None:
    schema = {"type": "string", "oneOf": [{"const": "x", "title": "X"}, {"const": "y"}]}
    assert FormField("f", schema, required=False).choices == ["x", "y"]


def test_a_url_request_names_its_host() -> None:
    url = {
        "method": "elicitation/create",
        "params": {"mode": "url", "url": "https://auth.example.com/x?y=1", "message": "Sign in"},
    }
    (request,) = read_input_requests(asking({"u": url}))
    assert request.is_url
    assert request.url_host == "auth.example.com"
    assert request.fields == []


@pytest.mark.parametrize(
    "requests", [["not", "a", "map"], {"k": "text"}, {"k": {"params": {}}}, {"k": {"method": 3}}]
)
def test_malformed_input_requests_are_a_protocol_violation(requests: Any) -> None:
    with pytest.raises(ProtocolViolation):
        read_input_requests(asking(requests))


def test_a_task_that_does_not_ask_has_no_requests() -> None:
    assert read_input_requests(Task("t", "working")) == []


def test_a_silent_input_required_task_shows_what_it_asks() -> None:
    assert task_message(asking({"k1": FORM})) == "asks: Deploy?"
    assert task_message(asking({"k1": FORM}, statusMessage="Waiting")) == "Waiting"
    assert task_message(asking("broken")) == ""
    assert task_message(Task("t", "working")) == ""


def test_a_secret_that_is_not_the_fields_type_is_refused_without_showing_it() -> None:
    pin = FormField("pin", {"type": "integer", "writeOnly": True}, required=True)
    with pytest.raises(ValueError, match=r"^pin: the value \(hidden\) is not a integer") as info:
        pin.coerce("12x9")
    assert "12x9" not in str(info.value)

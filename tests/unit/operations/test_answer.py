"""The answer `mcptask answer` builds from the command line, checked against what the task
asks before anything is sent: items typed by field, keys, actions, files, schema mismatches
named by field, and secrets never shown."""

from __future__ import annotations

from typing import Any

import pytest

from mcptask.errors import UsageError
from mcptask.operations.answer import build_responses, check_responses
from mcptask.output.views.answer import HIDDEN, _masked
from mcptask.protocol.inputs import InputRequest


def form(key: str, properties: dict[str, Any], required: list[str] | None = None) -> InputRequest:
    schema = {"type": "object", "properties": properties, "required": required or []}
    return InputRequest(key, "elicitation/create", {"message": "?", "requestedSchema": schema})


APPROVAL = form(
    "approval",
    {
        "go": {"type": "boolean"},
        "count": {"type": "integer", "maximum": 5},
        "pw": {"type": "string", "format": "password"},
    },
    ["go"],
)
NAME = form("name", {"name": {"type": "string", "minLength": 2}}, ["name"])
URL = InputRequest("visit", "elicitation/create", {"mode": "url", "url": "https://x.example"})
SAMPLING = InputRequest("llm", "sampling/createMessage", {"messages": []})


WARNINGS: list[str] = []


def build(asked: list[InputRequest], *items: tuple[str, Any, bool], **options: Any) -> Any:
    options.setdefault("key", None)
    options.setdefault("action", None)
    options.setdefault("from_file", None)
    options.setdefault("warn", WARNINGS.append)
    return build_responses(asked, items=list(items), **options)


def test_items_are_typed_as_their_fields_ask() -> None:
    answer = build([APPROVAL], ("go", "yes", False), ("count", "3", False))
    assert answer == {"approval": {"action": "accept", "content": {"go": True, "count": 3}}}


def test_a_raw_json_item_is_taken_as_given() -> None:
    answer = build([APPROVAL], ("go", True, True), ("count", 2, True))
    assert answer["approval"]["content"] == {"go": True, "count": 2}


@pytest.mark.parametrize(
    ("items", "message"),
    [
        (
            (("count", "9", False), ("go", "1", False)),
            "field 'count': 9 is greater than the maximum of 5",
        ),
        ((("count", "1", False),), "'go' is a required property"),
        ((("go", "perhaps", False),), "'perhaps' is not true or false"),
        ((("nope", "1", False),), "has no field 'nope' (its fields: go, count, pw)"),
    ],
)
def test_an_answer_that_does_not_fit_names_the_field(items: Any, message: str) -> None:
    with pytest.raises(UsageError, match="approval") as caught:
        build([APPROVAL], *items)
    assert message in caught.value.message


def test_several_requests_need_a_key_or_a_file() -> None:
    with pytest.raises(UsageError, match=r"asks 2 things at once.*--key KEY"):
        build([APPROVAL, NAME], ("name", "bob", False))
    answer = build([APPROVAL, NAME], ("name", "bob", False), key="name")
    assert answer == {"name": {"action": "accept", "content": {"name": "bob"}}}
    with pytest.raises(UsageError, match="nothing under key 'other'"):
        build([APPROVAL, NAME], ("name", "bob", False), key="other")


def test_decline_and_cancel_answer_every_elicitation_unless_a_key_is_named() -> None:
    assert build([APPROVAL, NAME, SAMPLING], action="decline") == {
        "approval": {"action": "decline"},
        "name": {"action": "decline"},
    }
    assert build([APPROVAL, NAME], action="cancel", key="name") == {"name": {"action": "cancel"}}


def test_a_file_gives_one_response_or_responses_by_key() -> None:
    one = {"action": "accept", "content": {"name": "al"}}
    assert build([NAME], from_file=one) == {"name": one}
    both = {"name": one, "llm": {"role": "assistant", "content": {"type": "text", "text": "x"}}}
    assert build([NAME, SAMPLING], from_file=both) == both
    with pytest.raises(UsageError, match=r"field 'name': 'a' is too short"):
        build([NAME], from_file={"action": "accept", "content": {"name": "a"}})
    with pytest.raises(UsageError, match="needs an action"):
        build([NAME], from_file={"name": {"content": {}}})


def test_a_url_request_is_accepted_without_fields_and_never_with_items() -> None:
    assert build([URL], action="accept") == {"visit": {"action": "accept"}}
    with pytest.raises(UsageError, match="a URL to visit, not a form"):
        build([URL], ("x", "1", False))


def test_a_sampling_request_takes_only_a_file() -> None:
    with pytest.raises(UsageError, match=r"sampling/createMessage, not a form.*--from-file"):
        build([SAMPLING], ("x", "1", False))


def test_no_answer_at_all_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="no answer given"):
        build([NAME])
    with pytest.raises(UsageError, match="answers none"):
        check_responses([NAME], {}, warn=WARNINGS.append)


def test_secret_fields_are_hidden_in_what_is_shown() -> None:
    sent: dict[str, Any] = {
        "approval": {"action": "accept", "content": {"go": True, "pw": "hunter2"}}
    }
    assert _masked([APPROVAL], sent) == {
        "approval": {"action": "accept", "content": {"go": True, "pw": HIDDEN}}
    }
    assert sent["approval"]["content"]["pw"] == "hunter2"  # what is sent is left untouched


def test_a_secret_that_does_not_fit_is_refused_without_showing_it() -> None:
    pin = form("pin", {"pin": {"type": "string", "format": "password", "pattern": "^[0-9]+$"}})
    with pytest.raises(UsageError, match=r"field 'pin': the value \(hidden\) does not match"):
        build([pin], ("pin", "hunter2", False))
    with pytest.raises(UsageError) as refused:
        build([pin], ("pin", "hunter2", False))
    assert "hunter2" not in refused.value.message


def test_a_form_whose_schema_cannot_be_used_is_sent_with_a_warning() -> None:
    broken = form("broken", {"x": {"type": "no-such-type"}})
    WARNINGS.clear()
    answer = build([broken], ("x", "1", False))
    assert answer["broken"]["content"] == {"x": "1"}
    [warning] = WARNINGS
    assert warning.startswith("the form of 'broken' cannot be used (")
    assert warning.endswith("): its answer was not checked")


def test_a_rule_of_the_whole_form_does_not_quote_its_secret() -> None:
    pin = form("pin", {"pin": {"type": "string", "writeOnly": True}, "n": {"type": "integer"}})
    pin.schema["maxProperties"] = 1
    with pytest.raises(UsageError) as refused:
        build([pin], ("pin", "hunter2", False), ("n", "1", False))
    assert "has too many properties" in refused.value.message
    assert "hunter2" not in refused.value.message

"""The cheap checks on every answer say what the thorough ones said: which SSE event ids can
be sent back, and which answers nest too deeply."""

from __future__ import annotations

import json

import pytest
from httpx_sse import ServerSentEvent

from mcptask.errors import ProtocolViolation
from mcptask.transport.answers import MAX_DEPTH, parse_json
from mcptask.transport.sse import resumable_id


def test_resumable_ids_are_exactly_the_printable_ascii_ones() -> None:
    for code in range(0x110):
        event_id = f"e{chr(code)}1"
        printable = all(0x20 <= ord(char) <= 0x7E for char in event_id)
        assert (resumable_id(ServerSentEvent(id=event_id)) == event_id) is printable, code
    assert resumable_id(ServerSentEvent(id="")) is None


@pytest.mark.parametrize("opener", ["[", '{"a":'])
def test_nesting_is_bounded_with_or_without_many_brackets(opener: str) -> None:
    closer = "]" if opener == "[" else "}"
    within = opener * MAX_DEPTH + "1" + closer * MAX_DEPTH
    assert parse_json(within, context="x") is not None
    assert parse_json(within.encode(), context="x") is not None
    deeper = opener * (MAX_DEPTH + 1) + "1" + closer * (MAX_DEPTH + 1)
    for text in (deeper, deeper.encode()):
        with pytest.raises(ProtocolViolation, match="nested deeper than 128 levels"):
            parse_json(text, context="x")


def test_brackets_inside_strings_only_cost_the_walk() -> None:
    text = json.dumps({"statusMessage": "[" * (2 * MAX_DEPTH)})
    assert parse_json(text, context="x") == {"statusMessage": "[" * (2 * MAX_DEPTH)}

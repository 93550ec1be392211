"""The cheap checks on every answer say what the thorough ones said: which SSE event ids can
be sent back, and which answers nest too deeply (the walk against a recursive count)."""

from __future__ import annotations

import json
import zlib
from collections.abc import Iterator

import httpx
import pytest
from httpx_sse import ServerSentEvent
from hypothesis import given
from hypothesis import strategies as st

from mcptask.errors import ProtocolViolation
from mcptask.transport.limits import (
    MAX_DEPTH,
    BoundedStream,
    StreamPosition,
    _depth_exceeds,
    parse_json,
)


def resumable_id(event: ServerSentEvent) -> str | None:
    position = StreamPosition()
    position.saw(event)
    return position.last_id


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


def nesting(value: object) -> int:
    """How deep containers nest in `value` (a scalar: 0), recursively: the reference."""
    if isinstance(value, dict):
        return 1 + max(map(nesting, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(nesting, value), default=0)
    return 0


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=3),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=2), inner, max_size=4)
    ),
    max_leaves=30,
)


@given(value=json_values, limit=st.integers(0, 8))
def test_the_depth_walk_agrees_with_a_recursive_count(value: object, limit: int) -> None:
    assert _depth_exceeds(value, limit) is (nesting(value) > limit)


def _layers(body: bytes, *encodings: str) -> bytes:
    """`body` encoded in the order Content-Encoding lists `encodings`."""
    for encoding in encodings:
        wbits = {"gzip": zlib.MAX_WBITS | 16, "deflate": zlib.MAX_WBITS, "raw": -zlib.MAX_WBITS}
        compressor = zlib.compressobj(9, zlib.DEFLATED, wbits[encoding])
        body = compressor.compress(body) + compressor.flush()
    return body


class Chunks(httpx.SyncByteStream):
    """`body` in chunks of `size`, as a network delivers it."""

    def __init__(self, body: bytes, size: int) -> None:
        self._chunks = [body[start : start + size] for start in range(0, len(body), size)]

    def __iter__(self) -> Iterator[bytes]:
        yield from self._chunks


@pytest.mark.parametrize(
    ("encodings", "header"),
    [
        (("gzip",), ["gzip"]),
        (("deflate",), ["deflate"]),
        (("raw",), ["deflate"]),  # a deflate body without its zlib header, as httpx takes it
        (("gzip", "deflate"), ["gzip", "deflate"]),
        ((), ["identity"]),
        ((), ["x-unknown"]),  # left alone by httpx: no decoding to count
    ],
)
def test_inflation_counts_what_httpx_decodes_to(
    encodings: tuple[str, ...], header: list[str]
) -> None:
    body = json.dumps({"pad": "A" * 300_000}).encode()
    wire = _layers(body, *encodings)
    decoded = httpx.Response(200, headers=[("Content-Encoding", ", ".join(header))], content=wire)
    assert decoded.content == body  # httpx agrees on what the bytes decode to
    stream = BoundedStream(Chunks(wire, 1000), len(body), header, None)
    for _ in stream:
        pass
    assert stream.decoded == len(body)


def test_a_bounded_stream_refuses_a_body_that_inflates_past_the_bound() -> None:
    wire = _layers(b"A" * (10 * 1024 * 1024), "gzip")
    stream = BoundedStream(httpx.ByteStream(wire), 1024 * 1024, ["gzip"], None)
    with pytest.raises(ProtocolViolation, match="larger than 1048576 bytes"):
        for _ in stream:
            pass

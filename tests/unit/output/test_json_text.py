"""A JSON line is what `json.dumps(value, separators=(",", ":"))` writes, for any JSON value a
server can send."""

from __future__ import annotations

import io
import json

from hypothesis import given
from hypothesis import strategies as st

from mcptask.output.screen import Screen

texts = st.text(alphabet=st.characters(codec=None, categories=None, exclude_characters=None))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=25,
)


@given(json_values)
def test_a_json_line_is_json_dumps_with_compact_separators(value: object) -> None:
    screen = Screen("jsonl", stdout=io.StringIO(), stderr=io.StringIO())
    screen.json_line(value)
    assert isinstance(screen.stdout, io.StringIO)
    assert screen.stdout.getvalue() == json.dumps(value, separators=(",", ":")) + "\n"

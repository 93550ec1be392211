"""A JSON line is what `json.dumps(value, separators=(",", ":"))` writes, for any JSON value a
server can send; `indented_object` writes what `json.dumps(value, indent=2)` does."""

from __future__ import annotations

import io
import json

from hypothesis import given
from hypothesis import strategies as st

from mcptask.output.screen import Screen
from mcptask.output.views.list_tasks import indented_object

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


scalars = st.none() | st.booleans() | st.integers() | st.floats() | texts


@given(
    st.dictionaries(texts, scalars, max_size=6) | st.dictionaries(texts, json_values, max_size=4),
    st.sampled_from(["", "    ", "\t"]),
)
def test_indented_object_is_json_dumps_indented(value: dict[str, object], margin: str) -> None:
    expected = json.dumps(value, indent=2).replace("\n", "\n" + margin)
    assert indented_object(value, margin) == expected

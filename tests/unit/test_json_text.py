"""`compact` writes what `json.dumps(value, separators=(",", ":"))` writes, for any JSON value
a server can send; `indented_object` writes what `json.dumps(value, indent=2)` does."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from mcptask.output.json_text import compact, indented_object

texts = st.text(alphabet=st.characters(codec=None, categories=None, exclude_characters=None))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=25,
)


@given(json_values)
def test_compact_is_json_dumps_with_compact_separators(value: object) -> None:
    assert compact(value) == json.dumps(value, separators=(",", ":"))


scalars = st.none() | st.booleans() | st.integers() | st.floats() | texts


@given(
    st.dictionaries(texts, scalars, max_size=6) | st.dictionaries(texts, json_values, max_size=4),
    st.sampled_from(["", "    ", "\t"]),
)
def test_indented_object_is_json_dumps_indented(value: dict[str, object], margin: str) -> None:
    expected = json.dumps(value, indent=2).replace("\n", "\n" + margin)
    assert indented_object(value, margin) == expected

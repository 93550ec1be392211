"""`compact` writes what `json.dumps(value, separators=(",", ":"))` writes, for any JSON value
a server can send, and falls back to the encoder's own method where json's C encoder is
missing or different; `indented_object` writes what `json.dumps(value, indent=2)` does."""

from __future__ import annotations

import json
from json import encoder as json_encoder

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcptask.output import json_text
from mcptask.output.json_text import compact, indented_object

texts = st.text(alphabet=st.characters(codec=None, categories=None, exclude_characters=None))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=25,
)


def test_the_c_encoder_is_used_where_there_is_one() -> None:
    assert getattr(json_encoder, "c_make_encoder", None) is not None  # CPython
    assert compact is not json_text._ENCODER.encode
    assert compact(json_text._PROBE) == json.dumps(json_text._PROBE, separators=(",", ":"))
    assert json.dumps(json_text._PROBE, separators=(",", ":")) == json_text._PROBE_TEXT


@given(json_values)
def test_compact_is_json_dumps_with_compact_separators(value: object) -> None:
    assert compact(value) == json.dumps(value, separators=(",", ":"))


def test_without_the_c_encoder_the_encoders_own_method_is_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(json_encoder, "c_make_encoder", None)
    assert json_text._c_compact() is None


def refusing(*args: object) -> object:
    raise TypeError("takes 10 arguments")


def indenting(*args: object) -> object:
    return lambda value, level: [json.dumps(value, indent=1)]


@pytest.mark.parametrize("maker", [refusing, indenting])
def test_a_c_encoder_that_differs_is_not_used(
    monkeypatch: pytest.MonkeyPatch, maker: object
) -> None:
    monkeypatch.setattr(json_encoder, "c_make_encoder", maker)
    assert json_text._c_compact() is None


scalars = st.none() | st.booleans() | st.integers() | st.floats() | texts


@given(
    st.dictionaries(texts, scalars, max_size=6) | st.dictionaries(texts, json_values, max_size=4),
    st.sampled_from(["", "    ", "\t"]),
)
def test_indented_object_is_json_dumps_indented(value: dict[str, object], margin: str) -> None:
    expected = json.dumps(value, indent=2).replace("\n", "\n" + margin)
    assert indented_object(value, margin) == expected

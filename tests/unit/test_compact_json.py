"""`compact` writes what `json.dumps(value, separators=(",", ":"))` writes, for any JSON value
a server can send, and falls back to the encoder's own method where json's C encoder is
missing or different."""

from __future__ import annotations

import json
from json import encoder as json_encoder

import pytest
from hypothesis import given
from hypothesis import strategies as st

from mcptask.output import compact_json
from mcptask.output.compact_json import compact

texts = st.text(alphabet=st.characters(codec=None, categories=None, exclude_characters=None))
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=25,
)


def test_the_c_encoder_is_used_where_there_is_one() -> None:
    assert getattr(json_encoder, "c_make_encoder", None) is not None  # CPython
    assert compact is not compact_json._ENCODER.encode
    assert compact(compact_json._PROBE) == json.dumps(compact_json._PROBE, separators=(",", ":"))
    assert json.dumps(compact_json._PROBE, separators=(",", ":")) == compact_json._PROBE_TEXT


@given(json_values)
def test_compact_is_json_dumps_with_compact_separators(value: object) -> None:
    assert compact(value) == json.dumps(value, separators=(",", ":"))


def test_without_the_c_encoder_the_encoders_own_method_is_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(json_encoder, "c_make_encoder", None)
    assert compact_json._c_compact() is None


def refusing(*args: object) -> object:
    raise TypeError("takes 10 arguments")


def indenting(*args: object) -> object:
    return lambda value, level: [json.dumps(value, indent=1)]


@pytest.mark.parametrize("maker", [refusing, indenting])
def test_a_c_encoder_that_differs_is_not_used(
    monkeypatch: pytest.MonkeyPatch, maker: object
) -> None:
    monkeypatch.setattr(json_encoder, "c_make_encoder", maker)
    assert compact_json._c_compact() is None

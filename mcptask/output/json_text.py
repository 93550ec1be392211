"""JSON text as `json.dumps` writes it, at a fraction of its cost: compact lines (`-o jsonl`)
and indented objects (the tasks of `list -o json`).

`compact` is `json.dumps(value, separators=(",", ":"))`. `JSONEncoder.encode` builds json's
C encoder anew on every call, which is about half of what a task's line costs (1.2 of 2.4
µs); `compact` builds it once. Where json has no C encoder (another Python), or builds it
with other arguments (a later one), `compact` is the encoder's own method: which one is
chosen at import, by encoding a probe and comparing it with the text json.dumps writes.

`indented_object` is `json.dumps(value, indent=2)`, whose indenting encoder is json's pure
Python one (some 8 µs a task); an object of scalars is joined from its members' texts
instead (some 2.5 µs).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from json import encoder as json_encoder

_ENCODER = json.JSONEncoder(separators=(",", ":"))
_PROBE = {"id": "t-1", "n": [1, -2.5, None, True, False], "text": 'é\u2028\ud800"\\\n', "o": {}}
_PROBE_TEXT = r'{"id":"t-1","n":[1,-2.5,null,true,false],"text":"\u00e9\u2028\ud800\"\\\n","o":{}}'
"""What `json.dumps(_PROBE, separators=(",", ":"))` writes, written out: the encoder's own
method would use a replaced C encoder too."""


def _c_compact() -> Callable[[object], str] | None:
    """json's C encoder for `_ENCODER`'s settings, made once; None where it is not there or
    does not write what `_ENCODER` writes."""
    make = getattr(json_encoder, "c_make_encoder", None)
    if make is None:
        return None
    try:
        # The arguments JSONEncoder.iterencode passes (CPython 3.11 to 3.13), but no
        # circular check: what is written is decoded JSON, or a report built of it, and
        # neither refers to itself.
        encode_chunks = make(
            None,
            _ENCODER.default,
            json_encoder.encode_basestring_ascii,
            None,
            _ENCODER.key_separator,
            _ENCODER.item_separator,
            _ENCODER.sort_keys,
            _ENCODER.skipkeys,
            _ENCODER.allow_nan,
        )

        def compact(value: object) -> str:
            return "".join(encode_chunks(value, 0))

        if compact(_PROBE) != _PROBE_TEXT:
            return None
    except (TypeError, ValueError):
        return None
    return compact


compact: Callable[[object], str] = _c_compact() or _ENCODER.encode
"""`value` as compact JSON text: `json.dumps(value, separators=(",", ":"))`."""


_SCALARS = (int, float, bool, type(None))
_string = json_encoder.encode_basestring_ascii  # what json.dumps writes a str with


def indented_object(value: Mapping[str, object], margin: str) -> str:
    """`json.dumps(value, indent=2)`, each line after the first after `margin`."""
    members = []
    for key, member in value.items():
        kind = type(member)
        if type(key) is not str or not (kind is str or kind in _SCALARS):
            # a container, or a key that is not text: json.dumps itself (JSON text holds no
            # raw newline inside a string, so indenting every line is exact)
            return json.dumps(value, indent=2).replace("\n", "\n" + margin)
        text = _string(member) if isinstance(member, str) else compact(member)
        members.append(_string(key) + ": " + text)
    if not members:
        return "{}"
    inner = "\n" + margin + "  "
    return "{" + inner + ("," + inner).join(members) + "\n" + margin + "}"

"""Compact JSON text, one value per line (`-o jsonl`): exactly what
`json.dumps(value, separators=(",", ":"))` writes, at half its cost.

`JSONEncoder.encode` builds json's C encoder anew on every call, which is about half of what
a task's line costs (1.2 of 2.4 µs); `compact` builds it once. Where json has no C encoder
(another Python), or builds it with other arguments (a later one), `compact` is the
encoder's own method: which one is chosen at import, by encoding a probe both ways.
"""

from __future__ import annotations

import json
from collections.abc import Callable
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
        # The arguments JSONEncoder.iterencode passes (CPython 3.11 to 3.13): no circular
        # check (decoded JSON cannot refer to itself), no indent, the separators, no key
        # sorting, no skipped keys, NaN allowed, ASCII output.
        encode_chunks = make(
            None,
            _ENCODER.default,
            json_encoder.encode_basestring_ascii,
            None,
            ":",
            ",",
            False,
            False,
            True,
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

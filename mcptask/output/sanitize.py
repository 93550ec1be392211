"""Make untrusted server text safe to print: no escape sequences, no control characters."""

from __future__ import annotations

import re

# CSI and OSC sequences first (so their parameters do not survive as visible junk), then any
# other C0/C1 control character, DEL included. Newlines and tabs become spaces: one value, one
# line, so that line-oriented output (ids, logs) cannot be forged by a server.
_ESCAPE_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"  # CSI ... final byte
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"  # OSC ... BEL or ST
    r"|\x9b[0-?]*[ -/]*[@-~]"  # 8-bit CSI
    r"|\x1b[@-Z\\-_]?"  # other two-byte escapes, or a lone ESC
)
# Control characters; lone surrogates (a JSON `\udc9b` can come out as a raw 8-bit CSI byte);
# and bidirectional/format controls, which can make one id or status look like another.
_CONTROLS = r"\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff"
_CONTROL = re.compile(f"[{_CONTROLS}]")
_LINE_BREAKS = re.compile(r"[\t\n\r\u2028\u2029]+")


def clean(text: object) -> str:
    """`text` as one printable line: escape sequences and control characters removed."""
    value = str(text)
    value = _ESCAPE_SEQUENCE.sub("", value)
    value = _LINE_BREAKS.sub(" ", value)
    return _CONTROL.sub("", value)


_BLOCK_CONTROL = re.compile(f"[{_CONTROLS}\u2028\u2029]")  # line and paragraph separators


def clean_block(text: object) -> str:
    """`text` as printable lines, for a tool's text output shown to a person: like `clean`,
    but newlines and tabs are kept (carriage returns, which could overwrite a line, are not)."""
    value = _ESCAPE_SEQUENCE.sub("", str(text))
    value = value.replace("\r\n", "\n").replace("\r", "\n")
    return _BLOCK_CONTROL.sub("", value)


# What the shell does to an unquoted `$(mcptask list -o ids)` (word splitting, globbing), what
# xargs does to its input (quotes, backslashes), and what makes a word an option.
_UNSAFE_WORD = re.compile(r"^-|[\s*?\[\]'\"\\]")


def safe_word(text: str) -> bool:
    """True when `text` (already `clean`) passes through `cmd $(...)`, `xargs cmd` and
    `while read` as one word that no command takes for an option."""
    return text != "" and _UNSAFE_WORD.search(text) is None

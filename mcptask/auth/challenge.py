"""The `WWW-Authenticate` header of a 401 or 403 (RFC 9110 §11.6.1, RFC 6750 §3)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

# auth-param: token "=" ( token / quoted-string ), separated by commas.
_PARAM = re.compile(r'\s*([!#$%&\'*+.^_`|~0-9A-Za-z-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s,]*)\s*,?')
_SCHEME = re.compile(r"\s*([!#$%&\'*+.^_`|~0-9A-Za-z-]+)(?=\s|,|$)")


@dataclass(frozen=True)
class Challenge:
    """The Bearer challenge's parameters (names lower-cased)."""

    params: dict[str, str] = field(default_factory=dict)

    @property
    def resource_metadata(self) -> str | None:
        """The Protected Resource Metadata URL the server names (RFC 9728 §5.1)."""
        return self.params.get("resource_metadata") or None

    @property
    def scope(self) -> str | None:
        """The scopes the server asks for."""
        scope = " ".join(self.params.get("scope", "").split())
        return scope or None

    @property
    def error(self) -> str | None:
        """`invalid_token`, `insufficient_scope`, ... (RFC 6750 §3.1)."""
        return self.params.get("error") or None


def parse_challenge(header: str | None) -> Challenge:
    """The Bearer challenge of a `WWW-Authenticate` value (empty when there is none).

    A header may hold several challenges (`Basic realm="x", Bearer scope="y"`); the
    parameters that follow the `Bearer` scheme, up to the next scheme, are returned.
    """
    if not header:
        return Challenge()
    params: dict[str, str] = {}
    position = 0
    in_bearer = False
    while position < len(header):
        parameter = _PARAM.match(header, position)
        if parameter is not None and parameter.end() > position:
            if in_bearer:
                name = parameter.group(1).lower()
                params.setdefault(name, _unquote(parameter.group(2)))
            position = parameter.end()
            continue
        scheme = _SCHEME.match(header, position)
        if scheme is None:
            break
        if in_bearer:
            break  # the next challenge begins
        in_bearer = scheme.group(1).lower() == "bearer"
        position = scheme.end()
        # token68 form (`Bearer abc==`) carries no parameters we use.
    return Challenge(params)


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return re.sub(r"\\(.)", r"\1", value[1:-1])
    return value

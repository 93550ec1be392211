"""Find who issues tokens for an MCP server, starting from the refusal's challenge.

1. Protected Resource Metadata (RFC 9728), at the URLs of `prm_urls`. Its `resource` must be
   the MCP server or a parent path on its origin (`resource_matches`); tokens are asked for
   the server itself unless the parent is the origin the root document describes
   (`token_resource`).
2. Authorization Server metadata of its first `authorization_servers`, at the URLs of
   `metadata_urls`. Its `issuer` must be the one asked for.
3. A 2025-03-26 server has no PRM: its origin is the authorization server, with RFC 8414
   metadata at the root. Without that either, the server publishes no OAuth metadata:
   nothing is guessed, nothing is sent.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import SplitResult, urlsplit, urlunsplit

import httpx

from mcptask.auth.config import canonical_resource, require_secure
from mcptask.errors import AuthDiscoveryError, AuthError, ProtocolViolation, UnreachableError
from mcptask.transport.limits import Deadline, bound, max_answer_bytes, parse_json_or_none
from mcptask.transport.redact import display_url

PRM_WELL_KNOWN = "/.well-known/oauth-protected-resource"
OAUTH_WELL_KNOWN = "/.well-known/oauth-authorization-server"
OIDC_WELL_KNOWN = "/.well-known/openid-configuration"
# `1`: ask for tokens for the wider resource a server's metadata names (a parent path).
ENV_WIDE_RESOURCE = "MCPTASK_WIDE_RESOURCE"

Trace = Callable[[str], None]

# auth-param: token "=" ( token / quoted-string ), separated by commas.
_PARAM = re.compile(r'\s*([!#$%&\'*+.^_`|~0-9A-Za-z-]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s,]*)\s*,?')
_SCHEME = re.compile(r"\s*([!#$%&\'*+.^_`|~0-9A-Za-z-]+)(?=\s|,|$)")


@dataclass(frozen=True)
class Challenge:
    """The Bearer challenge's parameters (names lower-cased)."""

    params: dict[str, str] = field(default_factory=dict)

    @property
    def resource_metadata(self) -> str | None:
        return self.params.get("resource_metadata") or None

    @property
    def scope(self) -> str | None:
        scope = " ".join(self.params.get("scope", "").split())
        return scope or None

    @property
    def error(self) -> str | None:
        return self.params.get("error") or None


def parse_challenge(header: str | None) -> Challenge:
    """The parameters of the Bearer challenge in a `WWW-Authenticate` value, which may hold
    several challenges (`Basic realm="x", Bearer scope="y"`; RFC 9110 §11.6.1)."""
    if not header:
        return Challenge()
    params: dict[str, str] = {}
    position = 0
    in_bearer = False
    while position < len(header):
        parameter = _PARAM.match(header, position)
        if parameter is not None and parameter.end() > position:
            if in_bearer:
                value = parameter.group(2)
                if len(value) >= 2 and value[0] == value[-1] == '"':
                    value = re.sub(r"\\(.)", r"\1", value[1:-1])
                params.setdefault(parameter.group(1).lower(), value)
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


@dataclass(frozen=True)
class ServerMetadata:
    """What an authorization server says about itself (RFC 8414), the fields mcptask uses."""

    issuer: str
    authorization_endpoint: str | None
    token_endpoint: str
    registration_endpoint: str | None = None
    token_endpoint_auth_methods: tuple[str, ...] | None = None
    signing_algorithms: tuple[str, ...] | None = None
    grant_types: tuple[str, ...] | None = None
    code_challenge_methods: tuple[str, ...] | None = None
    scopes_supported: tuple[str, ...] | None = None
    client_id_metadata_documents: bool = False
    iss_parameter: bool = False  # RFC 9207: its redirects carry `iss` (then checked)


@dataclass(frozen=True)
class Discovered:
    """Where to get a token for one MCP server, and what to ask for."""

    resource: str  # the RFC 8707 `resource` of authorize and token requests
    metadata: ServerMetadata
    scopes_supported: tuple[str, ...] | None = None  # the PRM's (None: no PRM, or none listed)
    legacy: bool = False  # 2025-03-26: no PRM, the authorization server at the server's origin


def discover(
    http: httpx.Client, server_url: str, challenge: Challenge, *, trace: Trace | None = None
) -> Discovered | None:
    """Where to sign in for `server_url`; None when it publishes no OAuth metadata at all. The
    2025-03-26 default endpoints (`/authorize`, `/token`, `/register`) are not guessed: a
    registration or a secret would go wherever a server without OAuth points."""
    log = trace or (lambda line: None)
    named = challenge.resource_metadata
    if named and not _same_origin(named, server_url):
        log(f"  ignoring the challenge's resource_metadata on another origin: {display_url(named)}")
    found = _first_json(http, prm_urls(server_url, challenge), log, "authorization_servers")
    if found is None:
        # 2025-03-26: the authorization server at the server's origin (without user info: it
        # appears in sign-in URLs).
        origin = _at(urlsplit(canonical_resource(server_url)), "")
        document = get_json(http, origin + OAUTH_WELL_KNOWN, log)
        if document is None:
            log(f"  no OAuth metadata for {display_url(server_url)}: no authorization server")
            return None
        metadata = _parse_metadata(origin + OAUTH_WELL_KNOWN, document)
        # There is no issuer to compare with (the server named none): its endpoints must at
        # least stay on the server's own origin.
        if not _same_origin(metadata.issuer, origin):
            raise AuthDiscoveryError(
                f"the authorization server metadata at {display_url(origin)} names the issuer "
                f"{_shown(metadata.issuer)}, another origin: refusing it"
            )
        return Discovered(canonical_resource(server_url), metadata, legacy=True)
    prm_url, prm = found
    resource = prm.get("resource")
    if not isinstance(resource, str) or not resource_matches(resource, server_url):
        raise AuthDiscoveryError(
            f"the server's protected resource metadata names the resource "
            f"{_shown(resource)}, not {display_url(server_url)}: refusing to sign in "
            "(a token for it could be used elsewhere)"
        )
    servers = prm.get("authorization_servers")
    if not isinstance(servers, list) or not servers or not isinstance(servers[0], str):
        raise AuthDiscoveryError(
            f"the protected resource metadata of {display_url(server_url)} names no "
            "authorization server"
        )
    issuer = servers[0]
    try:
        urls = metadata_urls(issuer)
    except ValueError:
        raise AuthDiscoveryError(
            f"the protected resource metadata of {display_url(server_url)} names an "
            "authorization server that is not a valid URL"
        ) from None
    found = _first_json(http, urls, log)
    if found is None:
        raise AuthDiscoveryError(
            f"no authorization server metadata for {display_url(issuer)} (tried "
            + ", ".join(display_url(url) for url in urls)
            + ")"
        )
    metadata = _parse_metadata(*found)
    # RFC 8414 wants them identical; a trailing slash is the one difference tolerated
    # (some servers normalize issuer URLs that way).
    if metadata.issuer.rstrip("/") != issuer.rstrip("/"):
        raise AuthDiscoveryError(
            f"the authorization server metadata of {display_url(issuer)} names the issuer "
            f"{_shown(metadata.issuer)}: refusing it (RFC 8414 §3.3)"
        )
    resource = token_resource(resource, server_url, prm_url, log)
    return Discovered(resource, metadata, _strings(prm.get("scopes_supported")))


def prm_urls(server_url: str, challenge: Challenge) -> list[str]:
    """The challenge's `resource_metadata`, `/.well-known/oauth-protected-resource/<path>`,
    then at the root. The challenge's URL only on the server's own origin: a server must not
    make mcptask fetch from any host (an internal service, a cloud metadata address)."""
    parts = urlsplit(server_url)
    named = challenge.resource_metadata
    urls = [named] if named and _same_origin(named, server_url) else []
    urls += [_at(parts, PRM_WELL_KNOWN + parts.path.rstrip("/")), _at(parts, PRM_WELL_KNOWN)]
    return list(dict.fromkeys(urls))


def metadata_urls(issuer: str) -> list[str]:
    """RFC 8414's path-inserted URL, OpenID's path-inserted, then OpenID's appended (ValueError
    for an issuer that is not a URL)."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    paths = (OAUTH_WELL_KNOWN + path, OIDC_WELL_KNOWN + path, path + OIDC_WELL_KNOWN)
    return list(dict.fromkeys(_at(parts, well_known) for well_known in paths))


def resource_matches(resource: str, server_url: str) -> bool:
    """Whether `resource` is on the origin of `server_url`, at its path or a parent's."""
    try:
        wanted, actual = urlsplit(resource), urlsplit(server_url)
        if wanted.fragment or _origin(wanted) != _origin(actual):
            return False
    except ValueError:
        return False
    prefix = wanted.path.rstrip("/")
    path = actual.path.rstrip("/")
    return path == prefix or path.startswith(prefix + "/")


def token_resource(resource: str, server_url: str, prm_url: str, log: Trace) -> str:
    """The RFC 8707 `resource` to ask tokens for: the PRM's when it names the server itself, or
    the origin in the root document (RFC 9728 §3.3); else the server's canonical URL, as RFC
    8707 asks for the most specific URI (a parent's token is good on every path below it)."""
    named, server = urlsplit(resource), urlsplit(server_url)
    root = not named.path.strip("/") and prm_url == _at(server, PRM_WELL_KNOWN)
    if root or named.path.rstrip("/") == server.path.rstrip("/"):
        return resource
    if os.environ.get(ENV_WIDE_RESOURCE) == "1":
        log(f"  {ENV_WIDE_RESOURCE}: asking for tokens for the wider {display_url(resource)}")
        return resource
    canonical = canonical_resource(server_url)
    log(
        f"  the protected resource metadata names the wider resource {display_url(resource)}: "
        f"asking for tokens for {display_url(canonical)} ({ENV_WIDE_RESOURCE}=1 asks for the "
        "wider one)"
    )
    return canonical


def _first_json(
    http: httpx.Client, urls: list[str], log: Trace, key: str | None = None
) -> tuple[str, dict[str, Any]] | None:
    """The first JSON object one of `urls` serves (one with `key`, if given), and its URL."""
    for url in urls:
        document = get_json(http, url, log)
        if document is not None and (key is None or key in document):
            return url, document
    return None


def fetch_json(
    http: httpx.Client,
    method: str,
    url: str,
    trace: Trace,
    error: type[AuthError],
    *,
    unreachable: str,
    invalid: str,
    refused: str,
    note: str = "",
    only_ok: bool = False,
    **request: Any,
) -> tuple[int, Any]:
    """The status of a request to an authorization server and its JSON body, read within
    bounds (None when not JSON or nested too deep; unread unless 200 when `only_ok`). The
    messages name what failed: `unreachable` (UnreachableError), an `invalid` URL and a
    `refused` body (`error`); `{shown}` and `{status}` are filled in."""
    shown, status = display_url(url), 0
    try:
        with http.stream(method, url, **request) as response:
            status = response.status_code
            trace(f"< {status} {method} {shown}{note}")
            if only_ok and status != 200:
                return status, None
            # Within the bound, and in all within the read timeout: a trickle is cut off.
            read = http.timeout.read
            deadline = None if read is None else Deadline.after(read, shown)
            bound(response, max_answer_bytes(), deadline)
            return status, parse_json_or_none(response.read(), context="the answer")
    except httpx.HTTPError as exc:
        message = unreachable.format(shown=shown)
        raise UnreachableError(f"{message}: {type(exc).__name__}") from None
    except httpx.InvalidURL:
        # Not an HTTPError: the URL came from a server's metadata or challenge.
        raise error(invalid) from None
    except ProtocolViolation as exc:
        raise error(f"{refused.format(shown=shown, status=status)}: {exc.message}") from None


def get_json(http: httpx.Client, url: str, log: Trace) -> dict[str, Any] | None:
    """GET a JSON object; None for an error status or a body that is not a JSON object."""
    require_secure(url, "its OAuth metadata")
    _, document = fetch_json(
        http,
        "GET",
        url,
        log,
        AuthDiscoveryError,
        unreachable="cannot fetch OAuth metadata from {shown}",
        invalid="the server's OAuth metadata or challenge leads to a metadata URL that is not "
        "a valid URL",
        refused="the OAuth metadata at {shown} is refused",
        only_ok=True,
        headers={"Accept": "application/json"},
    )
    return document if isinstance(document, dict) else None


_LISTS = {  # ServerMetadata's lists, and their RFC 8414 names
    "token_endpoint_auth_methods": "token_endpoint_auth_methods_supported",
    "signing_algorithms": "token_endpoint_auth_signing_alg_values_supported",
    "grant_types": "grant_types_supported",
    "code_challenge_methods": "code_challenge_methods_supported",
    "scopes_supported": "scopes_supported",
}


def _parse_metadata(url: str, document: dict[str, Any]) -> ServerMetadata:
    issuer = document.get("issuer")
    token_endpoint = document.get("token_endpoint")
    if not isinstance(issuer, str) or not isinstance(token_endpoint, str):
        raise AuthDiscoveryError(
            f"the authorization server metadata at {display_url(url)} lacks issuer or "
            "token_endpoint"
        )
    authorize = document.get("authorization_endpoint")
    registration = document.get("registration_endpoint")
    return ServerMetadata(
        issuer=issuer,
        authorization_endpoint=authorize if isinstance(authorize, str) else None,
        token_endpoint=token_endpoint,
        registration_endpoint=registration if isinstance(registration, str) else None,
        client_id_metadata_documents=document.get("client_id_metadata_document_supported") is True,
        iss_parameter=document.get("authorization_response_iss_parameter_supported") is True,
        **{name: _strings(document.get(key)) for name, key in _LISTS.items()},
    )


def _strings(value: object) -> tuple[str, ...] | None:
    if not isinstance(value, list):
        return None
    items = tuple(item for item in value if isinstance(item, str))
    return items or None


def _at(parts: SplitResult, path: str) -> str:
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _origin(parts: Any) -> tuple[str, str, int | None]:
    scheme = parts.scheme.lower()
    port = parts.port or {"http": 80, "https": 443}.get(scheme)
    return scheme, (parts.hostname or "").lower(), port


def _same_origin(a: str, b: str) -> bool:
    try:
        return _origin(urlsplit(a)) == _origin(urlsplit(b))
    except ValueError:
        return False


def _shown(value: object) -> str:
    return display_url(value) if isinstance(value, str) else "nothing"

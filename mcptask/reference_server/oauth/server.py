"""The authorization server and the protected resource's bearer check: requests in,
responses out, no sockets (the HTTP handler adapts them).

Paths, on the MCP server's own origin (its issuer):

    GET  /.well-known/oauth-protected-resource/mcp   RFC 9728 metadata of /mcp
    GET  /.well-known/oauth-authorization-server     RFC 8414 metadata
    POST /oauth/register                             RFC 7591 dynamic registration
    GET  /oauth/authorize                            approves at once (a demo: no user, no
                                                     consent), redirects back
    POST /oauth/token                                authorization_code, refresh_token,
                                                     client_credentials

Tokens are opaque random strings kept in memory, bound to the resource and scopes they were
issued for; refresh tokens rotate on use. An authorization code is single-use, short-lived,
and redeemed only by its client, with its redirect_uri and the verifier of its PKCE
challenge. The client a token was issued to is its principal: the owner of the tasks it
creates.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import secrets
import threading
import time
from base64 import urlsafe_b64encode
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from mcptask.reference_server.config import OAuthConfig
from mcptask.reference_server.oauth.clients import AUTH_METHODS, OAuthError, Registry

READ_SCOPE = "tasks:read"
WRITE_SCOPE = "tasks:write"
OFFLINE_SCOPE = "offline_access"
SCOPES = (READ_SCOPE, WRITE_SCOPE, OFFLINE_SCOPE)
# Methods that change tasks need the write scope; everything else the read scope.
WRITE_METHODS = frozenset({"tasks/cancel", "tasks/update", "tools/call"})

PRM_PATH = "/.well-known/oauth-protected-resource/mcp"
METADATA_PATH = "/.well-known/oauth-authorization-server"
AUTHORIZE_PATH = "/oauth/authorize"
TOKEN_PATH = "/oauth/token"
REGISTER_PATH = "/oauth/register"
PATHS = frozenset({PRM_PATH, METADATA_PATH, AUTHORIZE_PATH, TOKEN_PATH, REGISTER_PATH})
ALL_SCOPES = f"{READ_SCOPE} {WRITE_SCOPE}"
# RFC 7636 §4.1, §4.2: the verifier's alphabet and length, and an S256 challenge.
VERIFIER = re.compile(r"[A-Za-z0-9._~-]{43,128}")
CHALLENGE = re.compile(r"[A-Za-z0-9_-]{43}")
# Owners of tasks created with a token are named so, apart from (hex) session ids.
PRINCIPAL_PREFIX = "client:"


@dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: str = ""
    body: bytes = b""
    content_type: str = ""
    authorization: str | None = None


@dataclass(frozen=True)
class Response:
    status: int
    headers: dict[str, str]
    body: bytes = b""


@dataclass(frozen=True)
class Refusal:
    """A refused MCP request: 401 or 403 with its challenge."""

    status: int
    challenge: str
    message: str


@dataclass(frozen=True)
class _Grant:
    client_id: str
    scope: str
    resource: str
    expires_at: float


@dataclass(frozen=True)
class _Code:
    grant: _Grant
    redirect_uri: str
    challenge: str


@dataclass
class AuthorizationServer:
    """The authorization server of one reference server, and its bearer check."""

    config: OAuthConfig
    clock: Callable[[], float] = time.time
    registry: Registry = field(init=False)
    _codes: dict[str, _Code] = field(default_factory=dict)
    _access: dict[str, _Grant] = field(default_factory=dict)
    _refresh: dict[str, _Grant] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __post_init__(self) -> None:
        self.registry = Registry({client.client_id: client for client in self.config.clients})

    def check_bearer(
        self, authorization: str | None, base: str, method: str | None
    ) -> Refusal | None:
        """Whether an MCP request may pass: a live token for this resource, with the scope
        its method needs (`method` None: only the token is checked)."""
        metadata = f'resource_metadata="{base}{PRM_PATH}"'
        grant = self._bearer(authorization)
        if grant is None or grant.resource != f"{base}/mcp":
            error = ', error="invalid_token"' if (authorization or "").partition(" ")[2] else ""
            return Refusal(
                401,
                f'Bearer {metadata}, scope="{ALL_SCOPES}"{error}',
                "Missing, expired or invalid bearer token",
            )
        needed = WRITE_SCOPE if method in WRITE_METHODS else READ_SCOPE
        if method is not None and needed not in grant.scope.split():
            return Refusal(
                403,
                f'Bearer error="insufficient_scope", scope="{ALL_SCOPES}", {metadata}',
                f"{method} needs the scope {needed}",
            )
        return None

    def principal(self, authorization: str | None) -> str | None:
        """Who a live bearer token speaks for (`client:` and its client's id), the owner of
        the tasks it creates."""
        grant = self._bearer(authorization)
        return None if grant is None else PRINCIPAL_PREFIX + grant.client_id

    def _bearer(self, authorization: str | None) -> _Grant | None:
        scheme, _, token = (authorization or "").partition(" ")
        return self._live(self._access, token.strip()) if scheme.lower() == "bearer" else None

    def handle(self, request: Request, base: str) -> Response:
        """Answer a request to one of PATHS; `base` is the origin (`http://host:port`)."""
        routes: dict[tuple[str, str], Callable[[Request, str], Response]] = {
            ("GET", PRM_PATH): self._resource_metadata,
            ("GET", METADATA_PATH): self._server_metadata,
            ("POST", REGISTER_PATH): self._register,
            ("GET", AUTHORIZE_PATH): self._authorize,
            ("POST", TOKEN_PATH): self._token,
        }
        route = routes.get((request.method, request.path))
        if route is None:
            return _json(405, {"error": "method_not_allowed"})
        try:
            return route(request, base)
        except OAuthError as error:
            return _json(error.status, error.document())

    def _resource_metadata(self, request: Request, base: str) -> Response:
        return _json(
            200,
            {
                "resource": f"{base}/mcp",
                "authorization_servers": [base],
                "scopes_supported": [READ_SCOPE, WRITE_SCOPE],
                "bearer_methods_supported": ["header"],
                "resource_name": "mcptask reference server",
            },
        )

    def _server_metadata(self, request: Request, base: str) -> Response:
        return _json(
            200,
            {
                "issuer": base,
                "authorization_endpoint": base + AUTHORIZE_PATH,
                "token_endpoint": base + TOKEN_PATH,
                "registration_endpoint": base + REGISTER_PATH,
                "response_types_supported": ["code"],
                "grant_types_supported": [
                    "authorization_code",
                    "refresh_token",
                    "client_credentials",
                ],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": list(AUTH_METHODS),
                "token_endpoint_auth_signing_alg_values_supported": ["ES256", "RS256"],
                "scopes_supported": list(SCOPES),
                "authorization_response_iss_parameter_supported": True,
            },
        )

    def _register(self, request: Request, base: str) -> Response:
        try:
            document = json.loads(request.body or b"null")
        except ValueError:
            document = None
        return _json(201, self.registry.register(document))

    def _authorize(self, request: Request, base: str) -> Response:
        query = dict(parse_qsl(request.query))
        client = self.registry.get(query.get("client_id", ""))
        redirect = query.get("redirect_uri", "")
        if client is None or not client.allows_redirect(redirect):
            # Never redirect to a URI that is not the client's (RFC 6749 §4.1.2.1).
            return _page(400, "unknown client or redirect_uri")
        state = query.get("state")

        def back(**params: str) -> Response:
            answer = {**params, "iss": base, **({"state": state} if state else {})}
            separator = "&" if urlsplit(redirect).query else "?"
            return Response(302, {"Location": redirect + separator + urlencode(answer)})

        if query.get("response_type") != "code":
            return back(error="unsupported_response_type")
        if query.get("code_challenge_method") != "S256" or not query.get("code_challenge"):
            return back(error="invalid_request", error_description="PKCE S256 is required")
        if not CHALLENGE.fullmatch(query["code_challenge"]):
            # An S256 challenge is the unpadded Base64url of a SHA-256 (RFC 7636 §4.2).
            return back(error="invalid_request", error_description="malformed code_challenge")
        resource = query.get("resource", f"{base}/mcp")
        if resource != f"{base}/mcp":
            return back(error="invalid_target", error_description="unknown resource")
        code = secrets.token_urlsafe(24)
        grant = _Grant(
            client.client_id,
            _granted(query.get("scope")),
            resource,
            self.clock() + self.config.code_ttl_seconds,
        )
        with self._lock:
            self._codes[code] = _Code(grant, redirect, query["code_challenge"])
        return back(code=code)

    def _token(self, request: Request, base: str) -> Response:
        form = dict(parse_qsl(request.body.decode("utf-8", "replace")))
        now = self.clock()
        client = self.registry.authenticate(
            form, request.authorization, audiences=(base, base + TOKEN_PATH), now=now
        )
        kind = form.get("grant_type")
        resource = form.get("resource", f"{base}/mcp")
        if resource != f"{base}/mcp":
            raise OAuthError(400, "invalid_target", "unknown resource")
        if kind == "authorization_code":
            grant = self._redeem(form, client.client_id)
            return self._issue(grant, refresh=True)
        if kind == "refresh_token":
            with self._lock:
                old = self._refresh.pop(form.get("refresh_token", ""), None)
            if old is None or old.client_id != client.client_id or old.expires_at < now:
                raise OAuthError(400, "invalid_grant", "unknown or expired refresh token")
            return self._issue(old, refresh=True)
        if kind == "client_credentials":
            if not client.preregistered or (client.secret is None and not client.public_key_pem):
                raise OAuthError(400, "unauthorized_client", "only confidential clients")
            scope = _granted(form.get("scope")).replace(OFFLINE_SCOPE, "").strip()
            grant = _Grant(client.client_id, scope or ALL_SCOPES, resource, 0)
            return self._issue(grant, refresh=False)
        raise OAuthError(400, "unsupported_grant_type", f"grant_type {kind!r}")

    def _redeem(self, form: dict[str, str], client_id: str) -> _Grant:
        with self._lock:
            code = self._codes.pop(form.get("code", ""), None)
        if code is None or code.grant.client_id != client_id:
            raise OAuthError(400, "invalid_grant", "unknown or used authorization code")
        if code.grant.expires_at < self.clock():
            raise OAuthError(400, "invalid_grant", "the authorization code expired")
        if form.get("redirect_uri") != code.redirect_uri:
            raise OAuthError(400, "invalid_grant", "redirect_uri differs from the authorize one")
        verifier = form.get("code_verifier", "")
        if not VERIFIER.fullmatch(verifier):
            raise OAuthError(400, "invalid_grant", "code_verifier must be 43-128 characters")
        digest = urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=")
        if not hmac.compare_digest(digest, code.challenge.encode()):
            raise OAuthError(400, "invalid_grant", "code_verifier does not match (PKCE)")
        return code.grant

    def _issue(self, grant: _Grant, *, refresh: bool) -> Response:
        ttl = self.config.token_ttl_seconds
        live = replace(grant, expires_at=self.clock() + ttl)
        access = secrets.token_urlsafe(32)
        answer: dict[str, Any] = {
            "access_token": access,
            "token_type": "Bearer",
            "expires_in": ttl,
            "scope": grant.scope,
        }
        with self._lock:
            self._access[access] = live
            if refresh:
                token = secrets.token_urlsafe(32)
                self._refresh[token] = replace(grant, expires_at=self.clock() + 30 * 86400)
                answer["refresh_token"] = token
        return _json(200, answer, no_store=True)

    def _live(self, table: dict[str, _Grant], token: str) -> _Grant | None:
        with self._lock:
            grant = table.get(token)
        return grant if grant is not None and grant.expires_at > self.clock() else None


def _granted(requested: str | None) -> str:
    """The known scopes asked for, else all but offline_access."""
    asked = [scope for scope in (requested or "").split() if scope in SCOPES]
    return " ".join(dict.fromkeys(asked)) or ALL_SCOPES


def _json(status: int, document: object, *, no_store: bool = False) -> Response:
    headers = {"Content-Type": "application/json"}
    if no_store:
        headers["Cache-Control"] = "no-store"
    return Response(status, headers, json.dumps(document).encode())


def _page(status: int, text: str) -> Response:
    body = f"<!doctype html><title>mcptask reference</title><p>{text}</p>".encode()
    return Response(status, {"Content-Type": "text/html; charset=utf-8"}, body)

"""Client registrations, and how a client proves itself at the token endpoint."""

from __future__ import annotations

import base64
import binascii
import hmac
import json
import secrets
import threading
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

JWT_BEARER = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
AUTH_METHODS = ("client_secret_basic", "client_secret_post", "private_key_jwt", "none")
LOOPBACK_HOSTS = frozenset({"127.0.0.1", "::1", "localhost"})


@dataclass(frozen=True)
class OAuthError(Exception):
    """An OAuth error answer (RFC 6749 §5.2): HTTP status, error code, description."""

    status: int
    error: str
    description: str

    def document(self) -> dict[str, str]:
        return {"error": self.error, "error_description": self.description}


@dataclass(frozen=True)
class Client:
    client_id: str
    auth_method: str
    secret: str | None = None
    public_key_pem: str | None = None
    redirect_uris: tuple[str, ...] = ()
    preregistered: bool = False

    def __repr__(self) -> str:
        return f"Client(client_id={self.client_id!r}, auth_method={self.auth_method!r}, ...)"

    def allows_redirect(self, uri: str) -> bool:
        """Exactly a registered URI, or, for a loopback one, the same but for the port
        (RFC 8252 §7.3: native apps pick a free port at run time)."""
        if uri in self.redirect_uris:
            return True
        try:
            wanted = urlsplit(uri)
            if wanted.scheme != "http" or wanted.hostname not in LOOPBACK_HOSTS:
                return False
            key = (wanted.scheme, wanted.hostname, wanted.path)
            return any(
                (r.scheme, r.hostname, r.path) == key for r in map(urlsplit, self.redirect_uris)
            )
        except ValueError:
            return False


@dataclass
class Registry:
    """Every client the server knows: pre-registered ones and those registered at run time."""

    clients: dict[str, Client] = field(default_factory=dict)
    _seen_assertions: set[str] = field(default_factory=set)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def register(self, document: object) -> dict[str, Any]:
        """Dynamic Client Registration (RFC 7591 §3.1): the registered client's metadata."""
        if not isinstance(document, dict):
            raise OAuthError(400, "invalid_client_metadata", "the body must be a JSON object")
        uris = document.get("redirect_uris")
        if not isinstance(uris, list) or not uris or not all(isinstance(u, str) for u in uris):
            raise OAuthError(400, "invalid_redirect_uri", "redirect_uris must list URIs")
        for uri in uris:
            try:
                parts = urlsplit(uri)
            except ValueError:
                raise OAuthError(400, "invalid_redirect_uri", f"not a URI: {uri}") from None
            if parts.fragment or not (
                parts.scheme == "https"
                or (parts.scheme == "http" and parts.hostname in LOOPBACK_HOSTS)
            ):
                raise OAuthError(400, "invalid_redirect_uri", f"not allowed: {uri}")
        method = document.get("token_endpoint_auth_method", "client_secret_basic")
        if method not in ("client_secret_basic", "client_secret_post", "none"):
            raise OAuthError(
                400, "invalid_client_metadata", f"token_endpoint_auth_method {method!r}"
            )
        client = Client(
            client_id=f"dyn-{secrets.token_urlsafe(12)}",
            auth_method=method,
            secret=None if method == "none" else secrets.token_urlsafe(24),
            redirect_uris=tuple(uris),
        )
        with self._lock:
            self.clients[client.client_id] = client
        answer: dict[str, Any] = {
            "client_id": client.client_id,
            "redirect_uris": list(client.redirect_uris),
            "token_endpoint_auth_method": method,
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "client_name": str(document.get("client_name", "")),
        }
        if client.secret is not None:
            answer["client_secret"] = client.secret
            answer["client_secret_expires_at"] = 0
        return answer

    def get(self, client_id: str) -> Client | None:
        with self._lock:
            return self.clients.get(client_id)

    def authenticate(
        self,
        form: dict[str, str],
        authorization: str | None,
        *,
        audiences: tuple[str, ...],
        now: float,
    ) -> Client:
        """The client of a token request, authenticated by its registered method."""
        if authorization and authorization.lower().startswith("basic "):
            client_id, secret = _basic(authorization)
            return self._by_secret(client_id, secret, "client_secret_basic")
        if form.get("client_assertion_type") == JWT_BEARER:
            return self._by_assertion(form.get("client_assertion", ""), audiences, now)
        client_id = form.get("client_id", "")
        if "client_secret" in form:
            return self._by_secret(client_id, form["client_secret"], "client_secret_post")
        client = self.get(client_id)
        if client is None or client.auth_method != "none":
            raise OAuthError(401, "invalid_client", "client authentication failed")
        return client

    def _by_secret(self, client_id: str, secret: str, method: str) -> Client:
        client = self.get(client_id)
        if client is None or client.secret is None:
            raise OAuthError(401, "invalid_client", "client authentication failed")
        if not hmac.compare_digest(client.secret.encode(), secret.encode()):
            raise OAuthError(401, "invalid_client", "client authentication failed")
        if not client.preregistered and client.auth_method != method:
            raise OAuthError(401, "invalid_client", f"this client authenticates by {method}")
        return client

    def _by_assertion(self, assertion: str, audiences: tuple[str, ...], now: float) -> Client:
        from joserfc import jwt
        from joserfc.errors import JoseError
        from joserfc.jwk import import_key

        client = self.get(_unverified_issuer(assertion))
        if client is None or client.public_key_pem is None:
            raise OAuthError(401, "invalid_client", "no client with a key for this assertion")
        try:
            key = import_key(client.public_key_pem, _key_type(client.public_key_pem))
            token = jwt.decode(assertion, key, algorithms=["ES256", "ES384", "RS256", "PS256"])
        except (JoseError, ValueError) as exc:
            raise OAuthError(401, "invalid_client", f"the assertion is not valid: {exc}") from None
        claims = token.claims
        audience = claims.get("aud")
        audience_list = audience if isinstance(audience, list) else [audience]
        problems = [
            name
            for name, bad in (
                ("iss", claims.get("iss") != client.client_id),
                ("sub", claims.get("sub") != client.client_id),
                ("aud", not any(a in audiences for a in audience_list)),
                ("exp", not isinstance(claims.get("exp"), int) or claims["exp"] < now),
                ("jti", not isinstance(claims.get("jti"), str)),
            )
            if bad
        ]
        if problems:
            raise OAuthError(401, "invalid_client", f"assertion claims wrong: {problems}")
        with self._lock:
            if claims["jti"] in self._seen_assertions:
                raise OAuthError(401, "invalid_client", "the assertion was used before")
            self._seen_assertions.add(claims["jti"])
        return client


def _basic(authorization: str) -> tuple[str, str]:
    try:
        decoded = base64.b64decode(authorization[6:].strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        raise OAuthError(401, "invalid_client", "malformed Basic credentials") from None
    client_id, separator, secret = decoded.partition(":")
    if not separator:
        raise OAuthError(401, "invalid_client", "malformed Basic credentials")
    # RFC 6749 §2.3.1: both are form-urlencoded before encoding.
    return unquote(client_id.replace("+", " ")), unquote(secret.replace("+", " "))


def _unverified_issuer(assertion: str) -> str:
    try:
        payload = assertion.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    except (IndexError, ValueError, binascii.Error):
        raise OAuthError(401, "invalid_client", "client_assertion is not a JWT") from None
    issuer = claims.get("iss") if isinstance(claims, dict) else None
    if not isinstance(issuer, str):
        raise OAuthError(401, "invalid_client", "client_assertion names no issuer")
    return issuer


def _key_type(pem: str) -> Any:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    try:
        key = serialization.load_pem_public_key(pem.encode())
    except ValueError:
        return "RSA" if "RSA" in pem.split("-----")[1] else "EC"
    return "RSA" if isinstance(key, rsa.RSAPublicKey) else "EC"

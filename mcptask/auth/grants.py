"""Token requests (client credentials, authorization code, refresh), each with the RFC 8707
`resource`. authlib's framework-free OAuth 2 core builds them and authenticates the client
(none, client_secret_basic, client_secret_post, private_key_jwt signed with joserfc); httpx
sends them, as every request of mcptask (authlib's own httpx client is deprecated).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import httpx

from mcptask.auth import clients
from mcptask.auth.clients import JWT_METHOD, ClientIdentity, require_credential
from mcptask.auth.config import CLIENT_CREDENTIALS, AuthSettings, HttpOptions, require_secure
from mcptask.auth.discovery import Discovered
from mcptask.errors import (
    AuthDiscoveryError,
    ProtocolViolation,
    SignInRequired,
    TokenRequestRefused,
    UnreachableError,
    UsageError,
)
from mcptask.transport.limits import json_body
from mcptask.transport.redact import display_url, scrub

_SECRET_FIELDS = ("client_secret", "client_assertion", "code", "code_verifier", "refresh_token")


@dataclass(frozen=True)
class Tokens:
    """What a token endpoint answered."""

    access_token: str = field(repr=False)
    refresh_token: str | None = field(repr=False)
    expires_at: float | None
    scope: str | None
    issued_at: float | None = None


def with_client_credentials(
    settings: AuthSettings,
    http: HttpOptions,
    discovered: Discovered,
    scope: str | None,
    *,
    trace: Callable[[str], None],
) -> tuple[Tokens, ClientIdentity]:
    """The client credentials grant with the configured client (the CI way)."""
    metadata = discovered.metadata
    if not settings.has_client_credentials:
        raise SignInRequired(
            "--auth client-credentials needs MCPTASK_CLIENT_ID with MCPTASK_CLIENT_SECRET, "
            "or with --client-key-file (MCPTASK_CLIENT_KEY_FILE)"
        )
    # Asked for by name: refused only when the metadata lists grant types without it. A
    # server silent about them (RFC 8414's default leaves client_credentials out) is still
    # tried, as many omit grant_types_supported; its token endpoint has the last word.
    if metadata.grant_types is not None and CLIENT_CREDENTIALS not in metadata.grant_types:
        raise AuthDiscoveryError(
            f"the authorization server {display_url(metadata.issuer)} does not offer the "
            f"client credentials grant (it lists {', '.join(metadata.grant_types)}); sign "
            "in with mcptask login instead"
        )
    identity = clients.configured_identity(settings, metadata)
    assert identity is not None
    trace(f"  client credentials grant at {display_url(metadata.token_endpoint)}")
    tokens = request_tokens(
        http,
        identity,
        metadata.token_endpoint,
        metadata.issuer,
        CLIENT_CREDENTIALS,
        trace=trace,
        signing_algorithms=metadata.signing_algorithms,
        resource=discovered.resource,
        scope=scope,
    )
    return tokens, identity


def signing_algorithm(private_key: str, supported: tuple[str, ...] | None) -> tuple[Any, str]:
    """The key as a joserfc key, and the JWS algorithm to sign with: the first that the
    authorization server lists and the key can make, else the key type's usual one."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa
    from joserfc.jwk import import_key

    try:
        loaded = serialization.load_pem_private_key(private_key.encode(), password=None)
    except (ValueError, TypeError):
        raise UsageError(
            "the client key file holds no usable PEM private key (an unencrypted PKCS#8 "
            "or traditional EC/RSA/Ed25519 key)"
        ) from None
    candidates: tuple[str, ...]
    kind: Literal["EC", "RSA", "OKP"]
    if isinstance(loaded, ec.EllipticCurvePrivateKey):
        curves = {256: ("ES256",), 384: ("ES384",), 521: ("ES512",)}
        kind, candidates = "EC", curves.get(loaded.curve.key_size, ())
    elif isinstance(loaded, rsa.RSAPrivateKey):
        kind, candidates = "RSA", ("RS256", "PS256", "RS384", "RS512", "PS384", "PS512")
    elif isinstance(loaded, ed25519.Ed25519PrivateKey):
        kind, candidates = "OKP", ("EdDSA", "Ed25519")
    else:
        raise UsageError("the client key file holds a key type mcptask cannot sign with")
    if not candidates:
        raise UsageError("the client key file holds an EC key of an unsupported curve")
    chosen = next((alg for alg in (supported or ()) if alg in candidates), candidates[0])
    return import_key(private_key, key_type=kind), chosen


def request_tokens(
    http: HttpOptions,
    identity: ClientIdentity,
    token_endpoint: str,
    issuer: str,
    grant_type: str,
    *,
    trace: Callable[[str], None],
    signing_algorithms: tuple[str, ...] | None = None,
    **params: str | None,
) -> Tokens:
    """A token request of `grant_type` with `params` (the RFC 8707 `resource` among them):
    client credentials (OAuth 2.1 §4.2, SEP-1046), an authorization code with its PKCE
    verifier, or a refresh token (an answer without one leaves it unrotated: McpAuth keeps it)."""
    from authlib.oauth2.auth import ClientAuth
    from authlib.oauth2.rfc6749.parameters import prepare_token_request

    require_secure(token_endpoint, "the token endpoint")
    body = prepare_token_request(grant_type, **{k: v for k, v in params.items() if v})
    headers = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"}
    require_credential(identity)
    if identity.auth_method == JWT_METHOD and identity.private_key is not None:
        from authlib.oauth2.rfc7523 import PrivateKeyJWT

        key, algorithm = signing_algorithm(identity.private_key, signing_algorithms)
        # RFC 7523bis: the audience is the authorization server's issuer identifier.
        method: object = PrivateKeyJWT(token_endpoint, claims={"aud": issuer}, alg=algorithm)
        auth = ClientAuth(identity.client_id, key, method)
    else:
        auth = ClientAuth(identity.client_id, identity.client_secret, identity.auth_method)
    url, headers, body = auth.prepare("POST", token_endpoint, headers, body)
    shown = display_url(token_endpoint)
    try:
        with (
            httpx.Client(verify=http.verify, timeout=http.timeout) as client,
            client.stream("POST", url, content=body.encode(), headers=headers) as response,
        ):
            trace(f"< {response.status_code} POST {shown} (grant {grant_type})")
            answer = json_body(response)
    except httpx.HTTPError as exc:
        raise UnreachableError(
            f"cannot reach the token endpoint {shown}: {type(exc).__name__}"
        ) from None
    except httpx.InvalidURL:
        # Not an HTTPError: the endpoint came from the authorization server's metadata.
        raise TokenRequestRefused(
            "the token endpoint the authorization server names is not a valid URL"
        ) from None
    except ProtocolViolation as exc:
        raise TokenRequestRefused(
            f"the token endpoint {shown} answered HTTP {response.status_code}: {exc.message}"
        ) from None
    if not isinstance(answer, dict):
        raise TokenRequestRefused(
            f"the token endpoint {shown} answered HTTP {response.status_code} without a JSON object"
        )
    error = answer.get("error")
    if response.status_code != 200 or error is not None:
        description = answer.get("error_description")
        detail = f" ({description})" if isinstance(description, str) and description else ""
        message = (
            f"the authorization server refused the token request (HTTP "
            f"{response.status_code}): {error if isinstance(error, str) else 'no error code'}"
            f"{detail}"
        )
        # The server's words could quote back what it was sent: the secret, as it is and
        # in the Basic header's base64, the assertion, the grant's own values.
        raise TokenRequestRefused(scrub(message, _sent_secrets(identity, headers, body, params)))
    return _tokens(answer, shown)


def _sent_secrets(
    identity: ClientIdentity, headers: dict[str, str], body: str, params: dict[str, str | None]
) -> list[str | None]:
    from urllib.parse import parse_qsl, quote_plus

    basic = headers.get("Authorization", "").partition(" ")[2].strip()
    form = [value for name, value in parse_qsl(body) if name in _SECRET_FIELDS]
    encoded = [quote_plus(value) for value in form]
    return [identity.client_secret, basic, *form, *encoded, *params.values()]


# -- internals ------------------------------------------------------------------------------


def _tokens(answer: Any, shown: str) -> Tokens:
    access = answer.get("access_token")
    if not isinstance(access, str) or not access:
        raise TokenRequestRefused(f"the token endpoint {shown} answered without an access_token")
    refresh_token = answer.get("refresh_token")
    for token in (access, refresh_token):
        # Sent in an Authorization header: printable ASCII only (RFC 6750 §2.1), checked
        # before it is kept, not when every later command sends it.
        if isinstance(token, str) and not re.fullmatch("[\x21-\x7e]*", token):
            raise TokenRequestRefused(
                f"the token endpoint {shown} issued a token that is not printable ASCII: "
                "refusing it (nothing is kept)"
            )
    token_type = answer.get("token_type", "Bearer")
    if not isinstance(token_type, str) or token_type.lower() != "bearer":
        raise TokenRequestRefused(
            f"the token endpoint {shown} issued a {token_type!r} token; mcptask sends Bearer "
            "tokens only"
        )
    issued_at = time.time()
    expires_at = answer.get("expires_at")
    expires_in = answer.get("expires_in")
    if not isinstance(expires_at, int | float) and isinstance(expires_in, int | float):
        expires_at = issued_at + float(expires_in)
    scope = answer.get("scope")
    return Tokens(
        access_token=access,
        refresh_token=refresh_token if isinstance(refresh_token, str) and refresh_token else None,
        expires_at=float(expires_at) if isinstance(expires_at, int | float) else None,
        scope=scope if isinstance(scope, str) and scope else None,
        issued_at=issued_at,
    )

"""Which client mcptask is to an authorization server (a configured client, one registered
earlier, or Dynamic Client Registration, RFC 7591), and its token requests (client
credentials, authorization code, refresh), each with the RFC 8707 `resource`. authlib's
framework-free OAuth 2 core builds them and authenticates the client (none,
client_secret_basic, client_secret_post, private_key_jwt signed with joserfc); httpx sends
them, as every request of mcptask (authlib's own httpx client is deprecated).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal
from urllib.parse import parse_qsl, quote_plus

import httpx

from mcptask.auth.config import (
    CLIENT_CREDENTIALS,
    AuthSettings,
    HttpOptions,
    read_private_key,
    require_secure,
)
from mcptask.auth.discovery import Discovered, ServerMetadata, fetch_json
from mcptask.errors import AuthDiscoveryError, SignInRequired, TokenRequestRefused, UsageError
from mcptask.store import tokens as cache
from mcptask.store.tokens import CachedClient, CachedToken
from mcptask.transport.redact import display_url, scrub

JWT_METHOD = "private_key_jwt"
SECRET_METHODS = ("client_secret_basic", "client_secret_post")
# RFC 8414 §2: without token_endpoint_auth_methods_supported, the default is basic.
DEFAULT_AUTH_METHODS = ("client_secret_basic",)
_SECRET_FIELDS = ("client_secret", "client_assertion", "code", "code_verifier", "refresh_token")


@dataclass(frozen=True)
class ClientIdentity:
    """A client id and how it proves itself at the token endpoint."""

    client_id: str
    auth_method: str
    """none, client_secret_basic, client_secret_post or private_key_jwt."""
    client_secret: str | None = field(default=None, repr=False)
    private_key: str | None = field(default=None, repr=False)
    """A PEM private key (private_key_jwt)."""


def require_bound_credentials(settings: AuthSettings, server_url: str, issuer: str) -> None:
    """Raise SignInRequired when a client secret or key is configured and `issuer` is not
    the authorization server it is bound to (MCPTASK_CLIENT_ISSUER, --client-issuer, a
    profile's client_issuer): the server a URL names never receives it."""
    if not settings.has_client_credentials or settings.credentials_for(issuer):
        return
    asked = f"{display_url(server_url)} names the authorization server {display_url(issuer)}"
    if settings.client_issuer is None:
        raise SignInRequired(
            f"{asked}, and the client credentials of {settings.client_id!r} are bound to no "
            "authorization server: refusing to send them; if they are that server's, set "
            "MCPTASK_CLIENT_ISSUER (or --client-issuer) to its issuer URL"
        )
    raise SignInRequired(
        f"{asked}, not {display_url(settings.client_issuer)} that the client credentials of "
        f"{settings.client_id!r} are bound to: refusing to send them there"
    )


def configured_identity(settings: AuthSettings, metadata: ServerMetadata) -> ClientIdentity | None:
    """The pre-registered client of the settings, authenticating in a way the server lists."""
    if settings.client_id is None:
        return None
    if settings.has_client_credentials and not settings.credentials_for(metadata.issuer):
        # Never reached from a sign-in (require_bound_credentials refuses first).
        raise SignInRequired(
            f"the client credentials are not bound to {display_url(metadata.issuer)}"
        )
    supported = metadata.token_endpoint_auth_methods or DEFAULT_AUTH_METHODS
    if settings.client_key_file is not None:
        if metadata.token_endpoint_auth_methods is not None and JWT_METHOD not in supported:
            raise AuthDiscoveryError(
                f"the authorization server {display_url(metadata.issuer)} does not accept "
                f"{JWT_METHOD} (it lists {', '.join(supported)}); use MCPTASK_CLIENT_SECRET"
            )
        key = read_private_key(settings.client_key_file)
        return ClientIdentity(settings.client_id, JWT_METHOD, private_key=key)
    if settings.client_secret is not None:
        method = next((m for m in SECRET_METHODS if m in supported), None)
        if method is None:
            raise AuthDiscoveryError(
                f"the authorization server {display_url(metadata.issuer)} accepts no client "
                f"secret (it lists {', '.join(supported)})"
                + ("; use --client-key-file" if JWT_METHOD in supported else "")
            )
        return ClientIdentity(settings.client_id, method, client_secret=settings.client_secret)
    return ClientIdentity(settings.client_id, "none")


def remembered_identity(client: CachedClient) -> ClientIdentity:
    """A client registered earlier, as an identity."""
    return ClientIdentity(client.client_id, client.auth_method, client_secret=client.client_secret)


def require_credential(identity: ClientIdentity) -> ClientIdentity:
    """`identity`, if it carries the credential its method needs; else SignInRequired (a
    JWT method without a key, a secret method without a secret)."""
    if identity.auth_method == JWT_METHOD and identity.private_key is None:
        raise SignInRequired(
            f"the client authenticates with {JWT_METHOD}, and no client key file is "
            "configured (--client-key-file, MCPTASK_CLIENT_KEY_FILE)"
        )
    if identity.auth_method in SECRET_METHODS and identity.client_secret is None:
        raise SignInRequired(
            f"the client authenticates with {identity.auth_method}, and no client secret is "
            "known (MCPTASK_CLIENT_SECRET)"
        )
    return identity


def refresh_identity(settings: AuthSettings, entry: CachedToken) -> ClientIdentity:
    """How the client of a cached token authenticates when refreshing it; SignInRequired
    when this run lacks the credential that takes."""
    # The configured secret or key, only for a token of the issuer it is bound to.
    bound = not settings.has_client_credentials or settings.credentials_for(entry.issuer)
    if settings.client_id is not None and settings.client_id == entry.client_id and bound:
        key_file = settings.client_key_file if entry.auth_method == JWT_METHOD else None
        key = read_private_key(key_file) if key_file is not None else None
        secret = settings.client_secret
        return require_credential(ClientIdentity(entry.client_id, entry.auth_method, secret, key))
    path = settings.cache_path
    remembered = cache.load(path).client(entry.issuer) if path is not None else None
    if remembered is not None and remembered.client_id == entry.client_id:
        return require_credential(remembered_identity(remembered))
    # Neither configured nor registered here: the method the token was obtained with,
    # which fails (without a request) when it needs a credential.
    return require_credential(ClientIdentity(entry.client_id, entry.auth_method))


def register(
    http: httpx.Client,
    metadata: ServerMetadata,
    redirect_uri: str,
    *,
    trace: Callable[[str], None],
) -> CachedClient:
    """Dynamic Client Registration (RFC 7591) of mcptask as a native app with a loopback
    redirect; raises when the server offers no registration."""
    if metadata.registration_endpoint is None:
        raise AuthDiscoveryError(
            f"the authorization server {display_url(metadata.issuer)} offers no client "
            "registration: register mcptask there (redirect URI http://127.0.0.1/callback, "
            "any port) and give its client id in MCPTASK_CLIENT_ID"
        )
    require_secure(metadata.registration_endpoint, "the registration endpoint")
    supported = metadata.token_endpoint_auth_methods or DEFAULT_AUTH_METHODS
    # A public client (PKCE, no secret) when the server allows one, as native apps should be.
    wanted = next((m for m in ("none", *SECRET_METHODS) if m in supported), "none")
    body = {
        "client_name": "mcptask",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": wanted,
        "application_type": "native",
    }
    status, document = fetch_json(
        http,
        "POST",
        metadata.registration_endpoint,
        trace,
        TokenRequestRefused,
        unreachable="cannot reach {shown} to register mcptask",
        invalid="the registration endpoint the authorization server names is not a valid URL",
        refused="the authorization server's answer to registering mcptask (HTTP {status}) is "
        "refused",
        json=body,
    )
    if status not in (200, 201) or not isinstance(document, dict):
        detail = ""
        if isinstance(document, dict) and isinstance(document.get("error"), str):
            description = document.get("error_description")
            detail = f": {document['error']}"
            detail += f" ({description})" if isinstance(description, str) else ""
        raise TokenRequestRefused(
            f"the authorization server refused to register mcptask (HTTP {status}{detail})"
        )
    client_id = document.get("client_id")
    if not isinstance(client_id, str) or not client_id:
        raise TokenRequestRefused("the authorization server registered mcptask without a client_id")
    secret = document.get("client_secret")
    method = document.get("token_endpoint_auth_method")
    if not isinstance(method, str):
        method = wanted if wanted != "none" or not isinstance(secret, str) else SECRET_METHODS[0]
    return CachedClient(
        issuer=metadata.issuer,
        client_id=client_id,
        auth_method=method,
        client_secret=secret if isinstance(secret, str) and secret else None,
        redirect_uri=redirect_uri,
    )


def asked(
    server: str, discovered: Discovered, identity: ClientIdentity, grant: str, scope: str | None
) -> CachedToken:
    """The token a sign-in to `server` asks for, before the token endpoint issues it."""
    metadata = discovered.metadata
    return CachedToken(
        server=server,
        issuer=metadata.issuer,
        resource=discovered.resource,
        client_id=identity.client_id,
        grant=grant,
        access_token="",
        token_endpoint=metadata.token_endpoint,
        auth_method=identity.auth_method,
        scope=scope,
    )


def with_client_credentials(
    settings: AuthSettings,
    http: HttpOptions,
    server: str,
    discovered: Discovered,
    scope: str | None,
    *,
    trace: Callable[[str], None],
) -> CachedToken:
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
    identity = configured_identity(settings, metadata)
    assert identity is not None
    trace(f"  client credentials grant at {display_url(metadata.token_endpoint)}")
    return request_tokens(
        http,
        identity,
        asked(server, discovered, identity, CLIENT_CREDENTIALS, scope),
        CLIENT_CREDENTIALS,
        trace=trace,
        signing_algorithms=metadata.signing_algorithms,
        resource=discovered.resource,
        scope=scope,
    )


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
    token: CachedToken,
    grant_type: str,
    *,
    trace: Callable[[str], None],
    signing_algorithms: tuple[str, ...] | None = None,
    **params: str | None,
) -> CachedToken:
    """`token` as its token endpoint issues it anew, to a request of `grant_type` with
    `params` (the RFC 8707 `resource` among them): client credentials (OAuth 2.1 §4.2,
    SEP-1046), an authorization code with its PKCE verifier, or a refresh token. The refresh
    token and scope the answer leaves out stay `token`'s (a refresh token unrotated)."""
    from authlib.oauth2.auth import ClientAuth
    from authlib.oauth2.rfc6749.parameters import prepare_token_request

    token_endpoint, issuer = token.token_endpoint, token.issuer
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
    with httpx.Client(verify=http.verify, timeout=http.timeout) as client:
        status, answer = fetch_json(
            client,
            "POST",
            url,
            trace,
            TokenRequestRefused,
            unreachable="cannot reach the token endpoint {shown}",
            invalid="the token endpoint the authorization server names is not a valid URL",
            refused="the token endpoint {shown} answered HTTP {status}",
            note=f" (grant {grant_type})",
            content=body.encode(),
            headers=headers,
        )
    if not isinstance(answer, dict):
        raise TokenRequestRefused(
            f"the token endpoint {shown} answered HTTP {status} without a JSON object"
        )
    error = answer.get("error")
    if status != 200 or error is not None:
        description = answer.get("error_description")
        detail = f" ({description})" if isinstance(description, str) and description else ""
        message = (
            f"the authorization server refused the token request (HTTP {status}): "
            f"{error if isinstance(error, str) else 'no error code'}{detail}"
        )
        # The server's words could quote back what it was sent: the secret, as it is and
        # in the Basic header's base64, the assertion, the grant's own values.
        basic = headers.get("Authorization", "").partition(" ")[2].strip()
        form = [value for name, value in parse_qsl(body) if name in _SECRET_FIELDS]
        sent = [identity.client_secret, basic, *form, *map(quote_plus, form), *params.values()]
        raise TokenRequestRefused(scrub(message, sent))
    return _tokens(answer, shown, token)


def _tokens(answer: Any, shown: str, token: CachedToken) -> CachedToken:
    access = answer.get("access_token")
    if not isinstance(access, str) or not access:
        raise TokenRequestRefused(f"the token endpoint {shown} answered without an access_token")
    refresh_token = answer.get("refresh_token")
    for issued in (access, refresh_token):
        # Sent in an Authorization header: printable ASCII only (RFC 6750 §2.1), checked
        # before it is kept, not when every later command sends it.
        if isinstance(issued, str) and not re.fullmatch("[\x21-\x7e]*", issued):
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
    return replace(
        token,
        access_token=access,
        refresh_token=refresh_token
        if isinstance(refresh_token, str) and refresh_token
        else token.refresh_token,
        expires_at=float(expires_at) if isinstance(expires_at, int | float) else None,
        scope=scope if isinstance(scope, str) and scope else token.scope,
        issued_at=issued_at,
    )

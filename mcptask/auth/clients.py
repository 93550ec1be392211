"""Which client mcptask is to an authorization server, and how it authenticates there: a
configured client, one registered earlier, or Dynamic Client Registration (RFC 7591).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from mcptask.auth.config import AuthSettings, require_secure
from mcptask.auth.discovery import ServerMetadata
from mcptask.errors import (
    AuthDiscoveryError,
    ProtocolViolation,
    SignInRequired,
    TokenRequestRefused,
    UnreachableError,
    UsageError,
)
from mcptask.store import tokens as cache
from mcptask.store.tokens import CachedClient, CachedToken
from mcptask.transport.limits import json_body
from mcptask.transport.redact import display_url

JWT_METHOD = "private_key_jwt"
SECRET_METHODS = ("client_secret_basic", "client_secret_post")
# RFC 8414 §2: without token_endpoint_auth_methods_supported, the default is basic.
DEFAULT_AUTH_METHODS = ("client_secret_basic",)


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
    shown = display_url(metadata.registration_endpoint)
    try:
        with http.stream("POST", metadata.registration_endpoint, json=body) as response:
            trace(f"< {response.status_code} POST {shown}")
            document = json_body(response)
    except httpx.HTTPError as exc:
        raise UnreachableError(
            f"cannot reach {shown} to register mcptask: {type(exc).__name__}"
        ) from None
    except httpx.InvalidURL:
        # Not an HTTPError: the endpoint came from the authorization server's metadata.
        raise TokenRequestRefused(
            "the registration endpoint the authorization server names is not a valid URL"
        ) from None
    except ProtocolViolation as exc:
        raise TokenRequestRefused(
            f"the authorization server's answer to registering mcptask (HTTP "
            f"{response.status_code}) is refused: {exc.message}"
        ) from None
    if response.status_code not in (200, 201) or not isinstance(document, dict):
        detail = _oauth_error(document)
        raise TokenRequestRefused(
            f"the authorization server refused to register mcptask (HTTP "
            f"{response.status_code}{detail})"
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


def read_private_key(path: Path) -> str:
    """The PEM private key of --client-key-file; errors name the file, never its content."""
    try:
        text = path.expanduser().read_text(encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot read the client key file {str(path)!r}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"the client key file {str(path)!r} is not PEM text") from None
    if "PRIVATE KEY-----" not in text:
        raise UsageError(f"the client key file {str(path)!r} holds no PEM private key")
    return text


def _oauth_error(document: object) -> str:
    if isinstance(document, dict) and isinstance(document.get("error"), str):
        description = document.get("error_description")
        return f": {document['error']}" + (
            f" ({description})" if isinstance(description, str) else ""
        )
    return ""

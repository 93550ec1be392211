"""The two ways to sign in once discovery has found the authorization server: the client
credentials grant (machines) and the authorization code grant in a browser (people)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import httpx

from mcptask.auth import clients, grants
from mcptask.auth.config import AUTHORIZATION_CODE, CLIENT_CREDENTIALS, AuthSettings, HttpOptions
from mcptask.auth.discovery import Discovered, require_secure
from mcptask.auth.grants import Tokens
from mcptask.errors import AuthDiscoveryError, SignInRequired
from mcptask.store import tokens as cache
from mcptask.transport.redact import display_url


@dataclass(frozen=True)
class Context:
    """What a sign-in needs besides the discovery: settings, HTTP options, the two outputs."""

    settings: AuthSettings
    server_url: str
    http: HttpOptions
    notice: Callable[[str], None]
    trace: Callable[[str], None]


def require_bound_credentials(context: Context, issuer: str) -> None:
    """Raise SignInRequired when a client secret or key is configured and `issuer` is not
    the authorization server it is bound to (MCPTASK_CLIENT_ISSUER, --client-issuer, a
    profile's client_issuer): the server a URL names never receives it."""
    settings = context.settings
    if not settings.has_client_credentials or settings.credentials_for(issuer):
        return
    server, named = display_url(context.server_url), display_url(issuer)
    asked = f"{server} names the authorization server {named}"
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


def with_client_credentials(
    context: Context, discovered: Discovered, scope: str | None
) -> tuple[Tokens, clients.ClientIdentity]:
    """The client credentials grant with the configured client (the CI way)."""
    metadata = discovered.metadata
    if not context.settings.has_client_credentials:
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
    identity = clients.configured_identity(context.settings, metadata)
    assert identity is not None
    context.trace(f"  client credentials grant at {display_url(metadata.token_endpoint)}")
    tokens = grants.request_tokens(
        context.http,
        identity,
        metadata.token_endpoint,
        metadata.issuer,
        CLIENT_CREDENTIALS,
        trace=context.trace,
        signing_algorithms=metadata.signing_algorithms,
        resource=discovered.resource,
        scope=scope,
    )
    return tokens, identity


def in_browser(
    context: Context, discovered: Discovered, scope: str | None
) -> tuple[Tokens, clients.ClientIdentity]:
    """The authorization code grant with PKCE: the browser step, then the token request."""
    metadata = discovered.metadata
    if metadata.authorization_endpoint is None:
        raise AuthDiscoveryError(
            f"the authorization server {display_url(metadata.issuer)} has no "
            "authorization endpoint: it offers no browser sign-in"
        )
    endpoint = metadata.authorization_endpoint
    browser_host = _browser_host(endpoint, metadata.issuer)
    if not discovered.legacy and "S256" not in (metadata.code_challenge_methods or ()):
        raise AuthDiscoveryError(
            f"the authorization server {display_url(metadata.issuer)} does not list PKCE "
            "S256 (code_challenge_methods_supported): refusing the browser sign-in"
        )
    if scope and "offline_access" in (metadata.scopes_supported or ()):
        scope = " ".join(dict.fromkeys([*scope.split(), "offline_access"]))
    settings = context.settings
    path = settings.cache_path
    remembered = cache.load(path).client(metadata.issuer) if path is not None else None
    # A Client ID Metadata Document URL is the client id where the server supports them.
    document = settings.client_metadata_url if metadata.client_id_metadata_documents else None
    identity = (
        clients.configured_identity(settings, metadata)
        or (clients.ClientIdentity(document, "none") if document else None)
        or (clients.remembered_identity(remembered) if remembered is not None else None)
    )
    port = _port_of(remembered.redirect_uri) if remembered is not None else None
    # Imported here: its HTTP server costs every command's start-up, and few ever sign in
    # with a browser.
    from mcptask.auth import browser

    receiver = browser.LoopbackReceiver(port)
    try:
        if identity is None:
            with httpx.Client(verify=context.http.verify, timeout=context.http.timeout) as http:
                registered = clients.register(
                    http, metadata, receiver.redirect_uri, trace=context.trace
                )
            if path is not None:
                cache.store_client(path, registered)
            identity = clients.remembered_identity(registered)
        context.notice(
            f"signing in to {display_url(context.server_url)} at {display_url(metadata.issuer)}"
            f"; the browser opens {browser_host}"
        )
        code, verifier = browser.receive_code(
            receiver,
            endpoint,
            client_id=identity.client_id,
            resource=discovered.resource,
            scope=scope,
            open_browser=settings.open_browser,
            notice=context.notice,
            timeout=settings.sign_in_timeout,
            issuer=metadata.issuer,
            issuer_required=metadata.iss_parameter,
        )
    finally:
        receiver.close()
    tokens = grants.request_tokens(
        context.http,
        identity,
        metadata.token_endpoint,
        metadata.issuer,
        AUTHORIZATION_CODE,
        code=code,
        code_verifier=verifier,
        redirect_uri=receiver.redirect_uri,
        resource=discovered.resource,
        trace=context.trace,
    )
    return tokens, identity


def _browser_host(endpoint: str, issuer: str) -> str:
    """The host of the authorization endpoint the browser is sent to; AuthDiscoveryError
    unless it is an https:// URL (or http:// on this machine): never a browser switch
    (`--…`), a `file:` or `javascript:` URL, nor a page of another scheme."""
    refused = AuthDiscoveryError(
        f"the authorization server {display_url(issuer)} names an authorization endpoint "
        "that is not an https:// URL: refusing to open it in a browser"
    )
    if endpoint != endpoint.strip() or endpoint.startswith("-"):
        raise refused
    try:
        parts = httpx.URL(endpoint)
    except httpx.InvalidURL:
        raise refused from None
    if parts.scheme not in ("https", "http") or not parts.host:
        raise refused
    require_secure(endpoint, "the authorization endpoint")
    return parts.host if parts.port is None else f"{parts.host}:{parts.port}"


def _port_of(redirect_uri: str | None) -> int | None:
    # The port registered before is tried first: servers that do not follow RFC 8252's
    # any-port rule for loopback redirects then still accept it.
    if not redirect_uri:
        return None
    try:
        return httpx.URL(redirect_uri).port
    except httpx.InvalidURL:
        return None

"""`McpAuth`: the httpx auth flow that gives every request to an MCP server its token.

Before a request: the token in use, else a cached one for this server (refreshed when it has
expired), else the Authorization header the line gave (MCPTASK_TOKEN, --token-file, -H). On
401: a cached token not yet tried, a refresh, then a sign-in as `--auth` says, and the request
once more. On 403 `insufficient_scope`: one step-up, then InsufficientScope.

Most commands never sign in: the modules of signing in are imported where a refusal, a cached
token or a sign-in first needs them, not with this one (some 10 ms of every command).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Generator
from typing import TYPE_CHECKING

import httpx

from mcptask.auth.config import (
    AUTHORIZATION_CODE,
    CLIENT_CREDENTIALS,
    AuthSettings,
    HttpOptions,
    canonical_resource,
    plain_remote,
    require_secure,
)
from mcptask.errors import AuthError, InsufficientScope, SignInRequired
from mcptask.transport.limits import bound, max_answer_bytes
from mcptask.transport.redact import display_url

if TYPE_CHECKING:
    from mcptask.auth.discovery import Challenge, Discovered
    from mcptask.store.tokens import CachedToken

Notice = Callable[[str], None]


class McpAuth(httpx.Auth):
    """Bearer tokens for one MCP server, obtained and renewed as the MCP spec describes."""

    def __init__(
        self,
        settings: AuthSettings,
        server_url: str,
        *,
        http: HttpOptions,
        notice: Notice | None = None,
        trace: Notice | None = None,
    ) -> None:
        self.settings = settings
        self.server = canonical_resource(server_url)
        self._server_url = server_url
        self._plain = plain_remote(server_url)  # no OAuth token is sent, no sign-in made
        self._http = http
        self._notice = notice or (lambda line: None)
        self._trace = trace or (lambda line: None)
        self._lock = threading.Lock()
        self._entry: CachedToken | None = None  # the token in use
        # The cache was read before a request: a cache with nothing for this server is read
        # again only after a 401 (not before every request of a bulk run).
        self._looked = False
        self._tried: set[str] = set()
        self._discovered: Discovered | None = None
        self._discovery_done = False  # and `_discovered` None: no OAuth metadata
        self._scope: str | None = None
        self._stepped_up = False
        self.signed_in: CachedToken | None = None
        """What a sign-in of this process obtained (for `mcptask login` to report)."""

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        """Attach a token; on 401 sign in and retry once; on 403 insufficient_scope, step up."""
        with self._lock:
            token = self._token_before(request)
        # Whether the token sent is one of OAuth's (else it is the line's, or there is none).
        ours = token is not None
        if token is not None:
            request.headers["Authorization"] = f"Bearer {token}"
        response = yield request
        # Only requests (POSTs) sign in: the GET stream runs in a thread of its own, and its
        # refusal just means polling carries on.
        if self.settings.method == "none" or request.method != "POST":
            return
        # Only the headers of a refusal are used: its body is left to the transport, which
        # reads within its bound; httpx reads the body of one that is retried, outside the
        # transport: bounded here.
        if response.status_code == 401:
            challenge = _challenge_of(response)
            self._trace(f"< 401 {display_url(self._server_url)}{_challenge_note(challenge)}")
            with self._lock:
                scheme, _, sent = request.headers.get("Authorization", "").partition(" ")
                bearer = sent.strip() or None if scheme.lower() == "bearer" else None
                token = self._after_401(challenge, bearer, ours=ours)
            if token is None:
                return  # a static token refused by a server without OAuth: as it answered
            request.headers["Authorization"] = f"Bearer {token}"
            ours = True
            bound(response, max_answer_bytes())
            response = yield request
        if response.status_code == 403:
            challenge = _challenge_of(response)
            # A token the line gave cannot be stepped up: the refusal stands as it is.
            if challenge.error != "insufficient_scope" or not ours:
                return
            with self._lock:
                token = self._step_up(challenge)
            request.headers["Authorization"] = f"Bearer {token}"
            bound(response, max_answer_bytes())
            response = yield request
            if response.status_code == 403:
                challenge = _challenge_of(response)
                if challenge.error == "insufficient_scope":
                    raise InsufficientScope(
                        f"the server still refuses for want of scope after one step-up "
                        f"(HTTP 403; wants {challenge.scope or 'an unnamed scope'}); ask the "
                        "authorization server's administrator for that scope"
                    )

    def sign_in_unprompted(self) -> bool:
        """Sign in although no request was refused (`mcptask login` to a server whose
        handshake is open): True when the server's metadata names an authorization server,
        False when it has none (it needs no sign-in)."""
        from mcptask.auth.discovery import Challenge

        with self._lock:
            if self._discover(Challenge()) is None:
                return False
            self._sign_in(Challenge(), scope=None)
            return True

    def _token_before(self, request: httpx.Request) -> str | None:
        if self.settings.force_sign_in and self._entry is None:
            # login signs in anew: nothing the line or the cache holds is sent first.
            request.headers.pop("Authorization", None)
            return None
        if self._entry is None and not self._looked and "Authorization" not in request.headers:
            self._looked = True
            self._entry = self._cached()
        if self._entry is not None and self._entry.expired() and not self._refresh():
            # Another process may have stored a fresh token meanwhile (its refresh is what
            # made ours fail, when refresh tokens rotate): better than sending none.
            return self._from_cache()
        return None if self._entry is None else self._entry.access_token

    def _from_cache(self) -> str | None:
        """The newest usable cached token, now the one in use (refreshed if it expired)."""
        self._looked = True
        self._entry = self._cached()
        if self._entry is None or (self._entry.expired() and not self._refresh()):
            return None
        return self._entry.access_token

    def _cached(self) -> CachedToken | None:
        """The newest usable cached token for this server, or None."""
        path = self.settings.cache_path
        if path is None or self._plain or not os.path.exists(path):
            return None  # nothing cached: the cache's model need not be imported
        from mcptask.store import tokens as cache

        method = self.settings.method
        for entry in cache.load(path).for_server(self.server):
            # One that suits the `--auth` method (and configured client), and can be used.
            if method == "client-credentials":
                fits = (
                    entry.grant == CLIENT_CREDENTIALS and entry.client_id == self.settings.client_id
                )
            else:
                fits = method != "browser" or entry.grant == AUTHORIZATION_CODE
            usable = not entry.expired() or entry.refresh_token is not None
            if fits and usable and entry.access_token not in self._tried:
                return entry
        return None

    def _refresh(self) -> bool:
        """Renew the token in use with its refresh token; False when that fails (a refresh
        token the server refused is dropped from the cache too)."""
        entry = self._entry
        if entry is None or entry.refresh_token is None:
            return False
        from mcptask.auth import grants
        from mcptask.store import tokens as cache

        try:
            identity = grants.refresh_identity(self.settings, entry)
            self._trace(f"  refreshing the token for {display_url(self.server)}")
            renewed = grants.request_tokens(
                self._http,
                identity,
                entry,
                "refresh_token",
                refresh_token=entry.refresh_token,
                resource=entry.resource,
                trace=self._trace,
            )
        except AuthError as exc:
            if isinstance(exc, SignInRequired):
                # This run lacks the client's credential; the server never refused the
                # refresh token, so it stays cached for a run that has it.
                shown = display_url(self.server)
                self._trace(f"  cannot refresh the token for {shown}: {exc.message}")
            else:
                self._trace(f"  refresh failed: {exc.message}")
                if self.settings.cache_path is not None:
                    cache.drop_token(self.settings.cache_path, entry)
            self._tried.add(entry.access_token)
            self._entry = None
            self._looked = False  # another cached token may serve the next request
            return False
        self._keep(renewed)
        return True

    def _after_401(self, challenge: Challenge, sent: str | None, *, ours: bool) -> str | None:
        if sent is not None:
            self._tried.add(sent)
        if sent is not None and self.signed_in and sent == self.signed_in.access_token:
            raise AuthError(
                "the server refused the token its authorization server just issued (HTTP 401)"
                + _challenge_note(challenge)
            )
        # The token in use may have been revoked or have expired early: its refresh token
        # may still work.
        if self._entry is not None and self._entry.access_token == sent and self._refresh():
            return self._entry.access_token
        if not self.settings.force_sign_in and (token := self._from_cache()) is not None:
            return token
        # Discovery is redone at each 401: the server may have moved to another
        # authorization server (whose clients and tokens are not the old one's).
        self._discovery_done = False
        if sent is not None and not ours and self._discover(challenge) is None:
            # The line's token was refused and the server publishes no OAuth metadata: it
            # takes static tokens, and this one is wrong.
            return None
        return self._sign_in(challenge, scope=None)

    def _step_up(self, challenge: Challenge) -> str:
        if self._stepped_up:
            raise InsufficientScope(
                "the server refuses for want of scope (HTTP 403) after one step-up"
                + _challenge_note(challenge)
            )
        self._stepped_up = True
        held = set((self._entry.scope or "").split()) if self._entry is not None else set()
        if challenge.scope and held and set(challenge.scope.split()) <= held:
            # The token already carries every scope asked for: a new one would be refused too.
            raise InsufficientScope(
                f"the server refuses the token for want of scope {challenge.scope}, which it "
                "already carries (HTTP 403)" + _challenge_note(challenge)
            )
        wanted = (self._scope or "").split() + (challenge.scope or "").split()
        scope = " ".join(dict.fromkeys(wanted)) or None
        self._trace(f"  403 insufficient_scope: stepping up to scope {scope or '(none)'}")
        return self._sign_in(challenge, scope=scope)

    def _sign_in(self, challenge: Challenge, *, scope: str | None) -> str:
        from mcptask.auth import grants

        settings = self.settings
        discovered = self._discover(challenge)
        if discovered is None:
            # No authorization server to sign in with, whatever --auth says: a token is what
            # it takes, most likely. Nothing is registered or sent at a guessed endpoint.
            raise SignInRequired(
                f"{display_url(self._server_url)} requires a token (HTTP 401)"
                + _challenge_note(challenge)
                + " and publishes no OAuth metadata (no authorization server found): give "
                "its token with MCPTASK_TOKEN or --token-file"
            )
        metadata = discovered.metadata
        if scope is None:
            supported = " ".join(discovered.scopes_supported or ()) or None
            scope = settings.scope or challenge.scope or supported
        self._scope = scope
        # A secret or key goes only to the authorization server it belongs to, never to one
        # a URL merely names (nor is the client credentials grant picked for another).
        grants.require_bound_credentials(settings, self._server_url, metadata.issuer)
        # auto chooses the client credentials grant only when the metadata lists it (RFC 8414's
        # default for a silent server is authorization_code): configured credentials may be a
        # confidential client's for the browser. --auth client-credentials tries it unless the
        # metadata lists grants without it (grants.with_client_credentials).
        credentials_grant = settings.method == "client-credentials" or (
            settings.method == "auto"
            and settings.has_client_credentials
            and CLIENT_CREDENTIALS in (metadata.grant_types or ())
        )
        if credentials_grant:
            entry = grants.with_client_credentials(
                settings, self._http, self.server, discovered, scope, trace=self._trace
            )
        elif settings.method == "browser" or (settings.method == "auto" and settings.interactive):
            from mcptask.auth import browser

            entry = browser.sign_in(
                settings,
                self._server_url,
                self._http,
                discovered,
                scope,
                notice=self._notice,
                trace=self._trace,
            )
        else:
            raise SignInRequired(
                f"{display_url(self._server_url)} requires sign-in (HTTP 401)"
                + _challenge_note(challenge)
                + "; sign in first with: mcptask login, or in CI use --auth client-credentials "
                "with MCPTASK_CLIENT_ID, MCPTASK_CLIENT_SECRET (or MCPTASK_CLIENT_KEY_FILE) "
                "and MCPTASK_CLIENT_ISSUER"
            )
        self._keep(entry)
        self.signed_in = entry
        return entry.access_token

    def _discover(self, challenge: Challenge) -> Discovered | None:
        """Where to sign in; None when the server publishes no OAuth metadata."""
        if not self._discovery_done:
            from mcptask.auth.discovery import discover

            require_secure(self._server_url, "the MCP server, for its tokens")
            with httpx.Client(verify=self._http.verify, timeout=self._http.timeout) as client:
                self._discovered = discover(client, self._server_url, challenge, trace=self._trace)
            self._discovery_done = True
        return self._discovered

    def _keep(self, entry: CachedToken) -> None:
        self._entry = entry
        if self.settings.cache_path is not None:
            from mcptask.store import tokens as cache

            cache.store_token(self.settings.cache_path, entry)


def _challenge_of(response: httpx.Response) -> Challenge:
    from mcptask.auth.discovery import parse_challenge

    return parse_challenge(response.headers.get("WWW-Authenticate"))


def _challenge_note(challenge: Challenge) -> str:
    parts = [f'{name}="{value}"' for name, value in challenge.params.items()]
    return f"; challenge: Bearer {', '.join(parts)}" if parts else ""

"""The authorization code grant with PKCE S256, for people: a loopback redirect, the browser.

The redirect goes to `http://127.0.0.1:PORT/callback` (RFC 8252 §7.3: a loopback IP
literal, any port), served by a one-shot HTTP server in a thread (and a thread for each
connection, which may idle 5 s at most). The browser is opened with Python's `webbrowser`,
so the standard `BROWSER` variable chooses it; `--no-browser` prints the URL instead. PKCE
verifiers and challenges and the authorization URL come from authlib. Imported only for a
browser sign-in: its HTTP server would cost every command's start-up.
"""

from __future__ import annotations

import contextlib
import hmac
import os
import queue
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx

from mcptask.auth import grants
from mcptask.auth.config import (
    AUTHORIZATION_CODE,
    AuthSettings,
    HttpOptions,
    canonical_resource,
    require_secure,
)
from mcptask.auth.discovery import Discovered
from mcptask.errors import AuthDiscoveryError, AuthError, TokenRequestRefused
from mcptask.store import tokens as cache
from mcptask.store.tokens import CachedToken
from mcptask.transport.redact import display_url

CALLBACK_PATH = "/callback"
# One browser sign-in at a time in this process (servers signed in to in parallel): a person
# follows one sign-in at a time, and open_in_browser swaps the process's stdout while the
# browser starts.
_ONE_AT_A_TIME = threading.Lock()
_STOPPED = "the browser sign-in was stopped before it finished"
_PAGE = (
    "<!doctype html><meta charset=utf-8><title>mcptask</title>"
    "<body style='font-family:sans-serif'><h1>{title}</h1><p>{text}</p></body>"
)


def sign_in(
    settings: AuthSettings,
    server_url: str,
    http: HttpOptions,
    discovered: Discovered,
    scope: str | None,
    *,
    notice: Callable[[str], None],
    trace: Callable[[str], None],
) -> CachedToken:
    """Send the person to the authorization endpoint, wait for the code the redirect brings
    back, and exchange it (with the PKCE verifier) for tokens.

    The client is the configured one, else a Client ID Metadata Document URL where the
    server supports them, else one registered earlier, else one registered now. Redirects
    without the request's `state` are ignored (anything on this machine can call the port).
    RFC 9207 against mix-up attacks: an `iss` in the redirect must be exactly the issuer, and
    it must be there when the server's metadata says it sends one.
    """
    from authlib.common.security import generate_token
    from authlib.oauth2.rfc6749.parameters import prepare_grant_uri
    from authlib.oauth2.rfc7636 import create_s256_code_challenge

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
    wanted = scope
    if scope and "offline_access" in (metadata.scopes_supported or ()):
        wanted = " ".join(dict.fromkeys([*scope.split(), "offline_access"]))
    path = settings.cache_path
    remembered = cache.load(path).client(metadata.issuer) if path is not None else None
    document = settings.client_metadata_url if metadata.client_id_metadata_documents else None
    identity = (
        grants.configured_identity(settings, metadata)
        or (grants.ClientIdentity(document, "none") if document else None)
        or (grants.remembered_identity(remembered) if remembered is not None else None)
    )
    receiver = LoopbackReceiver(remembered.redirect_uri if remembered else None)
    try:
        if identity is None:
            with httpx.Client(verify=http.verify, timeout=http.timeout) as client:
                registered = grants.register(client, metadata, receiver.redirect_uri, trace=trace)
            if path is not None:
                cache.store_client(path, registered)
            identity = grants.remembered_identity(registered)
        with _turn(settings.stopped):
            notice(
                f"signing in to {display_url(server_url)} at {display_url(metadata.issuer)}"
                f"; the browser opens {browser_host}"
            )
            state, verifier = generate_token(32), generate_token(64)
            url = prepare_grant_uri(
                endpoint,
                client_id=identity.client_id,
                response_type="code",
                redirect_uri=receiver.redirect_uri,
                scope=wanted,
                state=state,
                code_challenge=create_s256_code_challenge(verifier),
                code_challenge_method="S256",
                resource=discovered.resource,
            )
            opened = False
            if settings.open_browser:
                notice("opening the browser to sign in; waiting for it to finish (Ctrl-C to stop)")
                opened = open_in_browser(url)
            if not opened:
                notice(f"to sign in, open this URL in a browser on this machine: {url}")
            answer = receiver.wait(settings.sign_in_timeout, state, settings.stopped)
    finally:
        receiver.close()
    if answer.issuer is not None and answer.issuer != metadata.issuer:
        raise AuthError(
            "the sign-in redirect names another authorization server (iss) than the one "
            "asked; refusing its code"
        )
    if answer.issuer is None and metadata.iss_parameter:
        raise AuthError(
            "the sign-in redirect lacks the iss its authorization server promises (RFC 9207); "
            "refusing its code"
        )
    if answer.error is not None:
        description = f" ({answer.description})" if answer.description else ""
        raise TokenRequestRefused(f"the sign-in was refused: {answer.error}{description}")
    if not answer.code:
        raise AuthError("the sign-in redirect carried no authorization code")
    server = canonical_resource(server_url)
    return grants.request_tokens(
        http,
        identity,
        grants.asked(server, discovered, identity, AUTHORIZATION_CODE, scope),
        AUTHORIZATION_CODE,
        code=answer.code,
        code_verifier=verifier,
        redirect_uri=receiver.redirect_uri,
        resource=discovered.resource,
        trace=trace,
    )


@dataclass(frozen=True)
class Redirect:
    """What came back to the loopback address: a code, or an error."""

    code: str | None = field(repr=False)
    state: str | None = field(repr=False)
    error: str | None = None
    description: str | None = None
    issuer: str | None = None
    """The `iss` parameter (RFC 9207), if the authorization server sent one."""


class LoopbackReceiver(ThreadingHTTPServer):
    """A one-shot HTTP server on 127.0.0.1 that receives the authorization redirect, on the
    port of the `registered` redirect URI when it is free (else any): servers that do not
    follow RFC 8252's any-port rule for loopback redirects then still accept it."""

    # A thread per connection: a browser's idle spare connection must not hold up the one
    # that brings the redirect. Daemon threads: close() never waits for a stuck one.
    daemon_threads = True

    def __init__(self, registered: str | None = None) -> None:
        self.answers: queue.Queue[Redirect] = queue.Queue()
        preferred_port = None
        with contextlib.suppress(httpx.InvalidURL):
            preferred_port = httpx.URL(registered).port if registered else None
        try:
            super().__init__(("127.0.0.1", preferred_port or 0), _Callback)
        except OSError:
            if not preferred_port:
                raise
            super().__init__(("127.0.0.1", 0), _Callback)
        self.port: int = self.server_address[1]
        self.redirect_uri = f"http://127.0.0.1:{self.port}{CALLBACK_PATH}"
        self._thread = threading.Thread(
            target=self.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True
        )
        self._thread.start()

    def wait(
        self, timeout: float, state: str, stopped: Callable[[], bool] = lambda: False
    ) -> Redirect:
        """The redirect with `state` (others are ignored), or AuthError when none came in time
        or the user asked to stop."""
        deadline = time.monotonic() + timeout
        while (left := deadline - time.monotonic()) > 0:
            if stopped():
                raise AuthError(_STOPPED)
            # Short waits, so that Ctrl-C is not held up by a blocking get.
            with contextlib.suppress(queue.Empty):
                answer = self.answers.get(timeout=min(left, 0.5))
                # Anything on this machine can call the port: another state's redirect must
                # not end the sign-in a person is finishing.
                if answer.state and hmac.compare_digest(answer.state.encode(), state.encode()):
                    return answer
        raise AuthError(
            f"the browser sign-in did not finish within {timeout:.0f}s; run the "
            "command again (or mcptask login) to retry"
        )

    def close(self) -> None:
        self.shutdown()
        self.server_close()
        self._thread.join(timeout=5)


@contextlib.contextmanager
def _turn(stopped: Callable[[], bool]) -> Iterator[None]:
    """This sign-in's turn with the browser, once the one before it is over (AuthError if
    the user asks to stop meanwhile)."""
    while not _ONE_AT_A_TIME.acquire(timeout=0.5):
        if stopped():
            raise AuthError(_STOPPED)
    try:
        if stopped():  # the turn came as the one before ended on the same stop
            raise AuthError(_STOPPED)
        yield
    finally:
        _ONE_AT_A_TIME.release()


def open_in_browser(url: str) -> bool:
    """Open `url` with `webbrowser` (BROWSER honoured); True when a browser took it.

    The browser process shares our terminal: its stdout goes to stderr, so that stdout keeps
    carrying only the command's result.
    """
    import webbrowser

    if not url.startswith(("https://", "http://")):
        return False  # never a browser switch (`--…`) nor another scheme's handler
    saved = None
    with contextlib.suppress(OSError, ValueError):
        sys.stdout.flush()
        saved = os.dup(1)
        os.dup2(2, 1)
    try:
        return bool(webbrowser.open(url))
    except webbrowser.Error:
        return False
    finally:
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)


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


class _Callback(BaseHTTPRequestHandler):
    server: LoopbackReceiver
    # Seconds a connection may sit without sending its request: without a bound it would
    # keep its thread forever.
    timeout = 5.0

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the query holds the authorization code: never log it

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        if parts.path != CALLBACK_PATH:
            self._page(404, "Not found", "This is mcptask's sign-in redirect.")
            return
        query = {key: values[0] for key, values in parse_qs(parts.query).items()}
        self.server.answers.put(
            Redirect(
                code=query.get("code"),
                state=query.get("state"),
                error=query.get("error"),
                description=query.get("error_description"),
                issuer=query.get("iss"),
            )
        )
        title = "Sign-in refused" if "error" in query else "Signed in"
        self._page(200, title, "You can close this tab and return to mcptask.")

    def _page(self, status: int, title: str, text: str) -> None:
        body = _PAGE.format(title=title, text=text).encode()
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("Connection", "close")
        self.end_headers()
        self.wfile.write(body)

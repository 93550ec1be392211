"""What the HTTP transport verifies certificates with, and the httpx transport that builds
its TLS context only for an https:// request.

httpx builds and fills an SSL context (the CA bundle) for every client it makes, about 20 ms
that a plain-http endpoint (a local server, the reference server) never uses. `ByScheme`
sends http:// over a connection pool that never does TLS, and https:// (the endpoint, or an
authorization server its sign-in reaches) over a verifying pool built on first use. With a
proxy in the environment the client keeps httpx's own transport (see `endpoint_transport`).
"""

from __future__ import annotations

import ssl
import threading
from pathlib import Path
from urllib.request import getproxies

import httpx

from mcptask.errors import TimedOut, UsageError, time_bound


def verification(ca_cert: Path | None, insecure: bool) -> ssl.SSLContext | bool:
    """What httpx verifies a server's certificate with (`--ca-cert`, `--insecure`)."""
    if insecure:
        return False
    if ca_cert is None:
        return True
    try:
        return ssl.create_default_context(cafile=str(ca_cert))
    except (OSError, ssl.SSLError) as exc:
        raise UsageError(f"cannot read --ca-cert {str(ca_cert)!r}: {_unreadable(exc)}") from None


def endpoint_transport(verify: ssl.SSLContext | bool) -> httpx.BaseTransport | None:
    """`ByScheme`, or None (httpx's own transport) when the environment names a proxy:
    httpx reads HTTP(S)_PROXY / ALL_PROXY / NO_PROXY only for a client whose transport it
    makes itself."""
    proxies = getproxies()  # what httpx reads (urllib is loaded with httpx already)
    if any(proxies.get(scheme) for scheme in ("http", "https", "all")):
        return None
    return ByScheme(verify)


class ByScheme(httpx.BaseTransport):
    """http:// without a TLS context, https:// with `verify`, built when first needed; and
    the headers of each answer in within the request's read timeout (--timeout) in all.

    httpx's timeouts are per read, and until the headers are in no byte reaches the
    deadline that bounds the body (`limits.BoundedStream`): a server trickling its headers
    would otherwise hold mcptask as long as it likes. The bound is a timer signal
    (`time_bound`), so it holds in the main thread only; elsewhere the per-read timeout
    alone applies.
    """

    def __init__(self, verify: ssl.SSLContext | bool) -> None:
        self._verify = verify
        # verify=False only skips loading certificates for a context this pool never uses:
        # it is given http:// requests alone, which open no TLS connection.
        self._plain = httpx.HTTPTransport(verify=False)
        self._secure: httpx.HTTPTransport | None = None
        self._lock = threading.Lock()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        pool = self._plain if request.url.scheme == "http" else self._tls()
        seconds = request.extensions.get("timeout", {}).get("read")
        if seconds is None:  # a stream that may stay open (watch's own)
            return pool.handle_request(request)
        try:
            with time_bound(seconds):
                return pool.handle_request(request)
        except TimedOut:
            raise httpx.ReadTimeout("the answer's headers took too long", request=request) from None

    def close(self) -> None:
        self._plain.close()
        if self._secure is not None:
            self._secure.close()

    def _tls(self) -> httpx.HTTPTransport:
        with self._lock:  # the notification stream's thread may be the first to need it
            if self._secure is None:
                verify = self._verify
                try:  # the default CA certificates, loaded now: a usage error if unreadable
                    if verify is True:
                        verify = httpx.create_ssl_context(verify=True)
                except (OSError, ssl.SSLError) as exc:
                    raise UsageError(
                        "cannot load the CA certificates that SSL_CERT_FILE or SSL_CERT_DIR "
                        f"names: {_unreadable(exc)}"
                    ) from None
                self._secure = httpx.HTTPTransport(verify=verify)
            return self._secure


def _unreadable(exc: OSError) -> str:
    """Why a CA file could not be loaded: the OS's reason, else its content."""
    return exc.strerror if not isinstance(exc, ssl.SSLError) and exc.strerror else "not PEM"

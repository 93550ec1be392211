"""httpx's failures and HTTP error statuses as mcptask errors, at the transport's boundary.

The class says what is known about the request's fate, because retrying depends on it:
`NotDelivered` (it never reached the server: send it again), `ServerBusy` (429/503: the server
did not act), `AnswerLost` (sent, but no answer came: the server may have acted; as
`HttpTimeout`, not within --timeout, which is never retried), and the final ones
(`TlsFailure`, a bad header as `UsageError`).
"""

from __future__ import annotations

import ssl
import time
from collections.abc import Iterator
from contextlib import contextmanager
from email.utils import parsedate_to_datetime

import httpx

from mcptask.errors import (
    AnswerLost,
    AuthError,
    EndpointNotFound,
    GatewayFailure,
    HttpStatusError,
    HttpTimeout,
    NotDelivered,
    ProtocolViolation,
    ServerBusy,
    SessionExpired,
    TlsFailure,
    UsageError,
)
from mcptask.protocol.jsonrpc import JsonObject
from mcptask.transport.limits import parse_json_or_none


@contextmanager
def translate_errors(target: str) -> Iterator[None]:
    """Turn httpx's exceptions into mcptask errors that say what happened to whom."""
    try:
        yield
    except httpx.ConnectTimeout:
        raise NotDelivered(f"{target} did not answer in time (connect timeout)") from None
    except httpx.PoolTimeout:
        raise NotDelivered(f"{target} did not answer in time (no free connection)") from None
    except httpx.ReadTimeout:
        raise HttpTimeout(f"{target} did not answer in time (read timeout)") from None
    except httpx.WriteTimeout:
        raise HttpTimeout(f"{target} did not answer in time (write timeout)") from None
    except httpx.TimeoutException:
        raise HttpTimeout(f"{target} did not answer in time (timeout)") from None
    except httpx.ConnectError as exc:
        cause: BaseException | None = exc  # failed in the TLS handshake?
        while cause is not None and not isinstance(cause, ssl.SSLError):
            cause = cause.__cause__ or cause.__context__
        if isinstance(cause, ssl.SSLCertVerificationError):
            raise TlsFailure(
                f"TLS: cannot verify the certificate of {target} ({cause.verify_message}); "
                "trust its CA with --ca-cert FILE (or SSL_CERT_FILE), or skip the check with "
                "--insecure"
            ) from None
        if isinstance(cause, ssl.SSLError):
            reason = cause.reason or cause
            raise TlsFailure(f"TLS handshake with {target} failed ({reason})") from None
        raise NotDelivered(f"cannot connect to {target}: {_reason(exc)}") from None
    except httpx.RemoteProtocolError:
        raise AnswerLost(f"{target} closed the connection without an answer") from None
    except httpx.LocalProtocolError:
        # Its message quotes the offending header, which may be a credential: never show it.
        raise UsageError(
            "a request header is not valid HTTP (check --header and the token)"
        ) from None
    except httpx.TransportError as exc:
        raise AnswerLost(f"cannot talk to {target}: {_reason(exc)}") from None
    except httpx.DecodingError:
        raise ProtocolViolation(
            f"{target} sent a body its Content-Encoding does not describe"
        ) from None


def status_error(
    response: httpx.Response, target: str, sent_session: str | None
) -> JsonObject | None:
    """Raise for an HTTP status that ends the request; return the JSON-RPC error object an
    HTTP error status carried (its id may not be ours), for the client to classify by code;
    None for a status that is no error."""
    status = response.status_code
    if status < 400:
        return None
    response.read()
    if status in (401, 403):
        challenge = response.headers.get("WWW-Authenticate")
        reason = (
            "authentication required or token rejected"
            if status == 401
            else "the credentials lack permission"
        )
        detail = f"; challenge: {challenge}" if challenge else ""
        raise AuthError(f"{reason} (HTTP {status}){detail}")
    if status == 404 and sent_session:
        raise SessionExpired(sent_session)
    message = f"{target} answered HTTP {status} {response.reason_phrase}"
    wait = parse_retry_after(response.headers.get("Retry-After"))
    if status in (429, 503):  # the server did not act: it may be asked again (Retry-After)
        raise ServerBusy(message, retry_after=wait)
    if status in (502, 504):  # a gateway failed: the server may or may not have acted
        raise GatewayFailure(message, retry_after=wait)
    decoded = parse_json_or_none(response.content, context="an error answer")
    error = decoded.get("error") if isinstance(decoded, dict) else None
    if isinstance(error, dict) and isinstance(error.get("code"), int):
        return error  # a JSON-RPC error object
    if status == 404:
        raise EndpointNotFound(f"no MCP endpoint at {target} (HTTP 404)")
    raise HttpStatusError(f"{message} with no JSON-RPC error")


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """`Retry-After` in seconds from now: delay-seconds or an HTTP date; None if absent or bad."""
    if value is None:
        return None
    text = value.strip()
    if text.isdigit():
        return float(text)
    try:
        moment = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if moment.tzinfo is None:
        return None
    return max(0.0, moment.timestamp() - (time.time() if now is None else now))


def _reason(exc: Exception) -> str:
    text = str(exc) or type(exc).__name__
    # httpx wraps OS errors as "[Errno 111] Connection refused": keep the human part.
    return text.split("] ", 1)[-1]

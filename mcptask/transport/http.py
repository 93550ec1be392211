"""Streamable HTTP transport (MCP 2025-11-25 and 2026-07-28) over one kept-alive httpx.Client."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from urllib.parse import urlsplit

import httpx
from httpx_sse import EventSource, ServerSentEvent, SSEError

from mcptask.errors import AnswerLost, McptaskError, ProtocolViolation, UsageError
from mcptask.protocol.jsonrpc import JsonObject, is_notification, is_request, is_response
from mcptask.transport import DEFAULT_TIMEOUT_SECONDS, Transport, WireLog
from mcptask.transport.http_errors import status_error, translate_errors
from mcptask.transport.limits import (
    Deadline,
    StreamEnds,
    StreamPosition,
    bound,
    decode,
    max_answer_bytes,
    media_type,
    own_response,
)
from mcptask.transport.redact import display_url, redact_headers
from mcptask.transport.tls import endpoint_transport, verification

SESSION_HEADER = "Mcp-Session-Id"
VERSION_HEADER = "MCP-Protocol-Version"
POST_ACCEPT = "application/json, text/event-stream"
MAX_RESUMES = 5
"""How many times one answer's SSE stream is resumed (GET + Last-Event-ID) before giving up."""
DEFAULT_RETRY_MS = 1000
"""The wait before resuming a stream whose server sent no `retry:` field."""
MAX_RETRY_MS = 30_000


class HttpTransport(Transport):
    """One MCP server endpoint reached with POSTs over a single kept-alive connection."""

    kind = "http"
    concurrent = True
    """Two threads may send at once: httpx's pool gives each request a connection of its own,
    and a session's requests may travel on several (the session is the Mcp-Session-Id header)."""

    def __init__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        log: WireLog | None = None,
        transport: httpx.BaseTransport | None = None,
        ca_cert: Path | None = None,
        insecure: bool = False,
        sleep: Callable[[float], object] = time.sleep,
        auth: httpx.Auth | None = None,
    ) -> None:
        self.target = display_url(url)
        self._created_session = False
        self._log = log
        self._max_answer = max_answer_bytes()
        self.timeout = timeout
        """An answer's total time (--timeout): also each read's, connect's and write's."""
        self._sleep = sleep
        try:
            parsed = httpx.URL(url)
            urlsplit(url).port  # noqa: B018 - raises ValueError for a bad host or port
        except (httpx.InvalidURL, ValueError) as exc:
            raise UsageError(f"invalid server URL {self.target!r}: {exc}") from None
        if parsed.scheme not in ("http", "https") or not parsed.host:
            raise UsageError(f"invalid server URL {self.target!r}: expected http(s)://HOST/PATH")
        self._endpoint = parsed
        """The URL, parsed once: the client takes it as it is (a string is parsed anew)."""
        # Proxies come from HTTP(S)_PROXY / ALL_PROXY / NO_PROXY (httpx's trust_env), and
        # so does SSL_CERT_FILE unless --ca-cert names the CA file.
        verify = verification(ca_cert, insecure)
        wire = transport or endpoint_transport(verify)  # None: a proxy, httpx's transports
        self._given_headers = dict(headers or {})
        """The user's headers (-H, the token), sent on every request: logged, redacted."""
        self._client = httpx.Client(
            headers=self._given_headers,
            timeout=httpx.Timeout(timeout),
            verify=verify,
            transport=wire,
            # Sign-in (mcptask.auth.flow.McpAuth): a token on each request, sign-in on 401.
            auth=auth,
        )
        self.stream_ends = StreamEnds()
        """Whether the end of this server's unbounded answer streams is still waited for."""

    def request(
        self,
        message: JsonObject,
        *,
        timeout: float | None = None,
        headers: dict[str, str] | None = None,
        session: str | None = None,
    ) -> JsonObject:
        """POST a request; read its answer from a JSON body or an SSE stream. With `session`,
        in that session instead of the current one (a 404 raises SessionExpired for it)."""
        deadline = Deadline.after(self.timeout if timeout is None else timeout, self.target)
        with self._post(message, self._headers(headers, session), deadline) as (response, error):
            if error is not None:
                return {"jsonrpc": "2.0", "id": message.get("id"), "error": error}
            if response.status_code == 202:
                raise ProtocolViolation(
                    f"the server answered 202 Accepted to {message.get('method')}, with no response"
                )
            content_type = media_type(response)
            if content_type == "text/event-stream":
                return self._read_sse_answer(response, message.get("id"), session, deadline)
            if content_type == "application/json":
                response.read()
                if self._log is not None:
                    self._trace(f"< {response.text}")
                return own_response(
                    decode(response.content, context="the server's answer"), message.get("id")
                )
        raise ProtocolViolation(
            f"the server answered {message.get('method')} with content type "
            f"{content_type or 'none'!r}, expected application/json or text/event-stream"
        )

    def notify(self, message: JsonObject, session: str | None = None) -> None:
        """POST a notification (or our response to a server's request, in its `session`);
        the server answers 202 Accepted (any 2xx is accepted)."""
        deadline = Deadline.after(self.timeout, self.target)
        with self._post(message, self._headers(None, session), deadline) as (response, error):
            response.read()
        if error is not None:
            what = message.get("method") or "our answer to its request"
            raise ProtocolViolation(f"the server rejected {what}: {error.get('message')}")

    def _route(self, message: JsonObject, session: str | None) -> None:
        """Hand a notification, or a request of the server's that came in `session` (else
        ours) with the way to answer it, to its handler."""
        if is_notification(message) and self._handler is not None:
            self._handler(message)
        elif is_request(message) and self._request_handler is not None:
            self._request_handler(
                message, lambda response: self.notify(response, session or self.session_id)
            )

    def reset_session(self) -> None:
        self.session_id = None
        self._created_session = False

    def join_session(self, session_id: str) -> None:
        self.session_id = session_id
        self._created_session = False

    def keep_session(self) -> None:
        self._created_session = False

    def end_session(self) -> None:
        """DELETE the session, only if this process created it (405 and errors are fine)."""
        if not (self.session_id and self._created_session):
            return
        headers = self._headers()
        self._trace(f"> DELETE {self.target} {self._shown(headers)}")
        try:
            answer = self._client.delete(self._endpoint, headers=headers, timeout=5.0)
            self._trace(f"< {answer.status_code} (session end)")
        except httpx.HTTPError as exc:
            self._trace(f"< session end failed: {type(exc).__name__}")
        self.reset_session()

    def listen(self, stop: threading.Event) -> None:
        """The session's GET event stream, until `stop` or a refusal (405, no session);
        a dropped stream is resumed with `Last-Event-ID`."""
        position = StreamPosition()
        backoff = 0.5
        while not stop.is_set():
            headers = self._stream_headers(position.last_id)
            try:
                with self._client.stream(
                    "GET", self._endpoint, headers=headers, timeout=httpx.Timeout(10.0, read=15.0)
                ) as response:
                    self._trace(f"< GET stream {response.status_code}")
                    if response.status_code in (401, 403, 404, 405):
                        return  # no stream for us: polling carries on alone
                    if response.status_code != 200 or media_type(response) != "text/event-stream":
                        raise httpx.HTTPError(f"GET stream answered {response.status_code}")
                    backoff = 0.5
                    for event in self._follow(response, stop):
                        position.saw(event)
                        if event.retry is not None:
                            backoff = min(event.retry, MAX_RETRY_MS) / 1000
                    if stop.is_set():
                        return
            except (httpx.HTTPError, SSEError, McptaskError) as exc:
                self._trace(f"< GET stream interrupted: {type(exc).__name__}")
            stop.wait(backoff)
            backoff = min(backoff * 2, 5.0)

    def subscribe(
        self, message: JsonObject, *, headers: dict[str, str] | None, stop: threading.Event
    ) -> None:
        """POST `subscriptions/listen` and follow its event stream (see the base)."""
        body = json.dumps(message, separators=(",", ":"))
        request_headers = self._headers(headers)
        self._trace(f"> POST {self.target} {self._shown(request_headers)} {body}")
        try:
            with self._client.stream(
                "POST",
                self._endpoint,
                content=body.encode(),
                headers=request_headers,
                timeout=httpx.Timeout(10.0, read=None),
            ) as response:
                self._trace(f"< {response.status_code} {media_type(response) or '-'} (stream)")
                if response.status_code == 200 and media_type(response) == "text/event-stream":
                    for _ in self._follow(response, stop):
                        pass
        except (httpx.HTTPError, SSEError, McptaskError) as exc:  # sign-in too: never raise here
            self._trace(f"< stream ended: {type(exc).__name__}")

    def _follow(self, response: httpx.Response, stop: threading.Event) -> Iterator[ServerSentEvent]:
        """The events of an open notification stream until `stop`, notifications routed."""
        bound(response, self._max_answer)
        for event in EventSource(response).iter_sse():
            if stop.is_set():
                return
            with contextlib.suppress(ProtocolViolation):  # an event that is no message: skipped
                message = decode(event.data, context="an event in the server's stream")
                self._trace(f"< event {event.data}")
                self._route(message, None)
            yield event

    def close(self) -> None:
        try:
            self.end_session()
        finally:
            self._client.close()

    def _headers(
        self, extra: dict[str, str] | None = None, session: str | None = None
    ) -> dict[str, str]:
        """A POST's headers, in `session` (else ours), with `extra` over them."""
        headers = {"Accept": POST_ACCEPT, "Content-Type": "application/json"}
        if session is not None:
            headers[SESSION_HEADER] = session
        elif self.session_id:
            headers[SESSION_HEADER] = self.session_id
        if self.protocol_version:
            headers[VERSION_HEADER] = self.protocol_version
        headers.update(extra or {})
        return headers

    @contextlib.contextmanager
    def _post(
        self, message: JsonObject, headers: dict[str, str], deadline: Deadline
    ) -> Iterator[tuple[httpx.Response, JsonObject | None]]:
        """POST one message with `headers` and yield the open response after the HTTP-level
        checks, with the JSON-RPC error object that an HTTP error status carried (else None).
        The session an initialize opened is taken."""
        body = json.dumps(message, separators=(",", ":"))
        if self._log is not None:  # no formatting on the hot path when not logging
            self._trace(f"> POST {self.target} {self._shown(headers)} {body}")
        sent_session = headers.get(SESSION_HEADER)  # the request's, else ours
        timeout = httpx.Timeout(deadline.seconds)
        with (
            translate_errors(self.target),
            self._client.stream(
                "POST", self._endpoint, content=body.encode(), headers=headers, timeout=timeout
            ) as response,
        ):
            if self._log is not None:
                self._trace(f"< {response.status_code} {media_type(response) or '-'}")
            bound(response, self._max_answer, deadline)
            new_session = response.headers.get(SESSION_HEADER)
            if message.get("method") == "initialize" and response.is_success and new_session:
                if not (new_session.isascii() and new_session.isprintable()):
                    # It goes back in a header, which takes visible ASCII only (the spec's).
                    raise ProtocolViolation("the server's Mcp-Session-Id is not visible ASCII")
                self.session_id = new_session
                self._created_session = True
            yield response, status_error(response, self.target, sent_session)

    def _read_sse_answer(
        self, response: httpx.Response, request_id: object, session: str | None, deadline: Deadline
    ) -> JsonObject:
        """The response to our request from its SSE stream, resumed with GET and
        `Last-Event-ID` (after the `retry:` wait, in the request's session) when the server
        ends the stream early."""
        position = StreamPosition()
        answer = self._answer_in(response, request_id, position, session)
        resumes = 0
        while answer is None:
            if position.last_id is None or resumes >= MAX_RESUMES:
                reason = "" if position.last_id is None else f" (resumed {resumes} times)"
                raise AnswerLost(f"the server closed its event stream before answering{reason}")
            resumes += 1
            # `retry: 0` is a valid reconnection time (at once), not an absent one.
            retry_ms = DEFAULT_RETRY_MS if position.retry_ms is None else position.retry_ms
            # Never past the deadline: a `retry:` of 30 s must not outlast a --timeout of 5.
            wait = min(min(max(retry_ms, 0), MAX_RETRY_MS) / 1000, deadline.left())
            self._trace(f"< stream ended early; resuming after {position.last_id} in {wait:g}s")
            self._sleep(wait)
            deadline.check()  # a stream that keeps ending early ends with the time
            headers = self._stream_headers(position.last_id, session)
            self._trace(f"> GET {self.target} {self._shown(headers)} (resume)")
            with (
                translate_errors(self.target),
                self._client.stream("GET", self._endpoint, headers=headers) as resumed,
            ):
                self._trace(f"< {resumed.status_code} {media_type(resumed) or '-'} (resume)")
                if resumed.status_code != 200 or media_type(resumed) != "text/event-stream":
                    raise AnswerLost(
                        f"the server closed its event stream before answering, and resuming it "
                        f"was refused (HTTP {resumed.status_code})"
                    )
                bound(resumed, self._max_answer, deadline)
                answer = self._answer_in(resumed, request_id, position, session)
        return answer

    def _answer_in(
        self,
        response: httpx.Response,
        request_id: object,
        position: StreamPosition,
        session: str | None,
    ) -> JsonObject | None:
        """Read events until the response to `request_id` (returned) or the end of the stream
        (None), routing notifications and the server's requests (answered in `session`, else
        ours) before it. The rest of the stream is read as
        `stream_ends` allows, so that its connection is kept."""
        try:
            events = EventSource(response).iter_sse()
            for event in events:
                position.saw(event)
                if not event.data:
                    continue  # priming or reconnect marker
                if self._log is not None:
                    self._trace(f"< event {event.data}")
                message = decode(event.data, context="an event in the server's stream")
                if is_response(message):
                    answer = own_response(message, request_id)
                    # httpx reuses a connection only when its answer was read to the end. A
                    # bounded body is read to it; an unbounded stream only if its end comes soon.
                    if "Content-Length" in response.headers:
                        for _ in events:
                            pass
                    else:
                        self.stream_ends.read_rest(response, events)
                    return answer
                self._route(message, session)
        except SSEError as exc:
            raise ProtocolViolation(f"the server's event stream is malformed: {exc}") from None
        except (httpx.RemoteProtocolError, httpx.ReadError):
            # A stream broken off, not ended, is resumed as one that ended early (SEP-1699),
            # once it gave an event id: else its answer is lost.
            if position.last_id is None:
                raise
        return None

    def _stream_headers(
        self, last_event_id: str | None, session: str | None = None
    ) -> dict[str, str]:
        """The headers of a GET event stream: in `session` (else ours), resumed after
        `last_event_id` when there is one."""
        headers = self._headers(None, session) | {"Accept": "text/event-stream"}
        headers.pop("Content-Type", None)
        if last_event_id is not None:
            headers["Last-Event-ID"] = last_event_id
        return headers

    def _shown(self, headers: Mapping[str, str]) -> dict[str, str]:
        """Every header a request carries, as the wire log shows it (credentials redacted)."""
        return redact_headers({**self._given_headers, **headers})

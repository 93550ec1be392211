"""Reading Server-Sent Events answers: our response out of an event stream, and where the
stream got to (the last resumable event id and the server's `retry:`), for resuming it."""

from __future__ import annotations

import httpx
from httpx_sse import EventSource, ServerSentEvent, SSEError

from mcptask.errors import ProtocolViolation
from mcptask.protocol.jsonrpc import JsonObject, is_notification, is_response
from mcptask.transport.base import NotificationHandler, WireLog
from mcptask.transport.keepalive import read_to_end
from mcptask.transport.limits import decode, own_response


class StreamPosition:
    """Where an answer's event stream got to: the last event id and the server's `retry:`."""

    def __init__(self) -> None:
        self.last_id: str | None = None
        self.retry_ms: int | None = None

    def saw(self, event: ServerSentEvent) -> None:
        self.last_id = resumable_id(event) or self.last_id
        if event.retry is not None:
            self.retry_ms = event.retry


def resumable_id(event: ServerSentEvent) -> str | None:
    """The event's id if it can be sent back as `Last-Event-ID` (printable ASCII), else None:
    a server's id that cannot travel in a header makes its stream not resumable."""
    event_id = event.id
    if event_id and event_id.isascii() and event_id.isprintable():  # 0x20..0x7E
        return event_id
    return None


def answer_in(
    response: httpx.Response,
    request_id: object,
    position: StreamPosition,
    *,
    log: WireLog | None,
    handler: NotificationHandler | None,
) -> JsonObject | None:
    """Read events until the response to `request_id` (returned) or the end of the stream
    (None); notifications before it go to `handler`."""
    try:
        events = EventSource(response).iter_sse()
        for event in events:
            position.saw(event)
            if not event.data:
                continue  # priming or reconnect marker
            if log is not None:
                log(f"< event {event.data}")
            message = decode(event.data, context="an event in the server's stream")
            if is_response(message):
                answer = own_response(message, request_id)
                # httpx reuses a connection only when its answer was read to the end (else:
                # one TCP connect per request). A bounded body is read to it; an unbounded
                # stream only if its end comes at once (keepalive.py), else it is closed.
                if "Content-Length" in response.headers:
                    for _ in events:
                        pass
                else:
                    read_to_end(response, events)
                return answer
            if is_notification(message) and handler is not None:
                handler(message)
    except SSEError as exc:
        raise ProtocolViolation(f"the server's event stream is malformed: {exc}") from None
    return None


def media_type(response: httpx.Response) -> str:
    """The response's Content-Type without parameters, lower-case ("" when absent)."""
    content_type: str = response.headers.get("Content-Type", "")
    return content_type.split(";")[0].strip().lower()

"""stdio transport: newline-delimited JSON-RPC on stdin/stdout, for both protocol eras.

The era is chosen per message, as on HTTP: a message with the 2026-07-28 `_meta` version goes
to the ModernDispatcher, anything else to the LegacyDispatcher, which serves one implicit
session (the process). Legacy `notifications/tasks/status` lines are written once the client
chose the legacy era with `initialize` (always, on a legacy-only server), so a modern client
never sees them. Modern `subscriptions/listen` requests get their acknowledgement and task
notifications as lines; their response is written only when the server ends them, at EOF.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import threading
from collections.abc import Callable
from typing import BinaryIO

from mcptask.reference_server.config import Fault, ServerConfig
from mcptask.reference_server.faults import replacement_body, with_wrong_id
from mcptask.reference_server.jsonrpc import (
    INVALID_REQUEST,
    PARSE_ERROR,
    JsonObject,
    MessageKind,
    classify,
    error_response,
)
from mcptask.reference_server.legacy import LegacyDispatcher
from mcptask.reference_server.modern import ModernDispatcher
from mcptask.reference_server.records import TaskView
from mcptask.reference_server.router import is_modern_message
from mcptask.reference_server.sse import encode_message
from mcptask.reference_server.store import TaskStore
from mcptask.reference_server.subscriptions import Subscription

STDIO_SESSION = "stdio"
# How long an idle subscription pump waits before checking again whether it was closed.
PUMP_WAIT_SECONDS = 1.0

log = logging.getLogger("mcptask.reference_server")


class StdioServer:
    """Reads messages from `stdin` until EOF and writes answers and notifications to `stdout`.

    All output goes through one queue and one writer thread, so lines never interleave and
    a slow reader never blocks the task store (whose listeners only enqueue).
    """

    def __init__(
        self,
        config: ServerConfig,
        legacy: LegacyDispatcher | None,
        modern: ModernDispatcher | None,
        store: TaskStore,
        stdin: BinaryIO,
        stdout: BinaryIO,
    ) -> None:
        self._config = config
        self._legacy = legacy
        self._modern = modern
        self._stdin = stdin
        self._stdout = stdout
        self._outbox: queue.Queue[bytes | None] = queue.Queue()
        self._writer = threading.Thread(target=self._write_loop, name="stdio-writer", daemon=True)
        self._lock = threading.Lock()
        self._subscriptions: dict[str | int, tuple[Subscription, threading.Thread]] = {}
        # A legacy-only server pushes status notifications from the start (as it always
        # did); a dual-era one only after an initialize chose the legacy era.
        self._legacy_chosen = modern is None
        if config.fault is Fault.WRONG_CONTENT_TYPE:
            log.warning("--fault wrong-content-type has no stdio equivalent; answering normally")
        if config.notify and legacy is not None:
            store.add_listener(self._push_legacy_status)

    def serve(self) -> int:
        """Serve until stdin closes; returns the exit status (0)."""
        self._writer.start()
        for raw in iter(self._stdin.readline, b""):
            line = raw.strip()
            if not line:
                continue
            try:
                message = json.loads(line)
            except (ValueError, UnicodeDecodeError):
                self._send(error_response(None, PARSE_ERROR, "Parse error"))
                continue
            if isinstance(message, list):
                self._send(
                    error_response(None, INVALID_REQUEST, "Batch requests are not supported")
                )
                continue
            if self._modern_serves(message):
                self._dispatch(self._handle_modern, message)
            else:
                self._dispatch(self._handle_legacy, message)
        self._end_subscriptions()
        self._finish_output()
        return 0

    # -- routing --------------------------------------------------------------------------

    def _modern_serves(self, message: object) -> bool:
        if self._modern is None:
            return False
        return self._legacy is None or is_modern_message(message)

    def _dispatch(self, handler: Callable[[object], None], message: object) -> None:
        dispatcher = self._modern if self._modern_serves(message) else self._legacy
        assert dispatcher is not None
        if dispatcher.may_block(message):
            # tasks/result and inline tool calls may take long: answer them from their
            # own thread so the next lines are still read and answered.
            threading.Thread(target=handler, args=(message,), daemon=True).start()
        else:
            handler(message)

    # -- legacy ---------------------------------------------------------------------------

    def _handle_legacy(self, message: object) -> None:
        assert self._legacy is not None
        self._cancel_subscription(message)
        if isinstance(message, dict) and message.get("method") == "initialize":
            self._legacy_chosen = True
        reply = self._legacy.handle(message, STDIO_SESSION)
        if reply.response is not None:
            self._answer(message, reply.response)

    def _push_legacy_status(self, view: TaskView) -> None:
        if self._legacy_chosen:
            assert self._legacy is not None
            self._send(self._legacy.status_notification(view))

    # -- modern ---------------------------------------------------------------------------

    def _handle_modern(self, message: object) -> None:
        assert self._modern is not None
        self._cancel_subscription(message)
        reply = self._modern.handle(message)  # no headers on stdio: nothing more to check
        for related in reply.related:
            self._send(related)
        if reply.subscription is not None:
            self._start_pump(reply.subscription)
        elif reply.response is not None:
            self._answer(message, reply.response)

    def _start_pump(self, subscription: Subscription) -> None:
        pump = threading.Thread(
            target=self._pump, args=(subscription,), name="stdio-subscription", daemon=True
        )
        with self._lock:
            self._subscriptions[subscription.id] = (subscription, pump)
        pump.start()

    def _pump(self, subscription: Subscription) -> None:
        while (messages := subscription.wait(PUMP_WAIT_SECONDS)) is not None:
            for message in messages:
                self._send(message)

    def _cancel_subscription(self, message: object) -> None:
        """notifications/cancelled naming a subscriptions/listen request ends it silently."""
        if classify(message) is not MessageKind.NOTIFICATION:
            return
        assert isinstance(message, dict)
        params = message.get("params")
        if message["method"] != "notifications/cancelled" or not isinstance(params, dict):
            return
        request_id = params.get("requestId")
        if not isinstance(request_id, str | int) or isinstance(request_id, bool):
            return
        with self._lock:
            entry = self._subscriptions.pop(request_id, None)
        if entry is not None and self._modern is not None:
            self._modern.hub.remove(entry[0])

    def _end_subscriptions(self) -> None:
        """EOF: the server ends every open subscription with its listen response."""
        with self._lock:
            entries = list(self._subscriptions.values())
            self._subscriptions.clear()
        for subscription, pump in entries:
            assert self._modern is not None
            self._modern.hub.remove(subscription)
            pump.join(timeout=PUMP_WAIT_SECONDS * 2)
            self._send(self._modern.listen_closed(subscription))

    # -- output ---------------------------------------------------------------------------

    def _answer(self, message: object, response: JsonObject) -> None:
        method = message.get("method") if isinstance(message, dict) else None
        fault = self._config.fault
        if fault is None or not isinstance(method, str) or not method.startswith("tasks/"):
            self._send(response)
            return
        if fault is Fault.DROP:
            log.warning("--fault drop: exiting without answering %s", method)
            self._finish_output()
            os._exit(1)
        body = replacement_body(fault)
        if body is not None and fault is not Fault.WRONG_CONTENT_TYPE:
            self._outbox.put(body + b"\n")
        elif fault is Fault.WRONG_ID:
            self._send(with_wrong_id(response))
        else:
            self._send(response)

    def _send(self, message: JsonObject) -> None:
        self._outbox.put(encode_message(message).encode() + b"\n")

    def _finish_output(self) -> None:
        self._outbox.put(None)
        self._writer.join(timeout=5)

    def _write_loop(self) -> None:
        broken = False
        while (data := self._outbox.get()) is not None:
            if broken:
                continue  # keep draining so producers never block
            try:
                self._stdout.write(data)
                self._stdout.flush()
            except OSError:
                broken = True  # the client closed our stdout; stdin EOF will follow

"""stdio transport: newline-delimited JSON-RPC on stdin/stdout, for both protocol eras.

The router decides each message's era, as on HTTP. The legacy era serves one implicit
session (the process); its `notifications/tasks/status` lines are written once the client
chose that era with `initialize`. Modern `subscriptions/listen` requests get their
acknowledgement and task notifications as lines; their response is written only when the
server ends them at EOF (never when the client cancels them with notifications/cancelled).
The fault switches: faults.DESCRIPTION.
"""

from __future__ import annotations

import json
import logging
import os
import queue
import threading
from typing import BinaryIO

from mcptask.reference_server.config import Fault, FaultKind, ProtocolEras, ServerConfig
from mcptask.reference_server.eras.modern_wire import Subscription
from mcptask.reference_server.eras.router import Router
from mcptask.reference_server.faults import (
    FaultPlan,
    PaddedAnswer,
    describe,
    die,
    padded,
    tampered,
)
from mcptask.reference_server.records import TaskView
from mcptask.reference_server.store import TaskStore
from mcptask.reference_server.wire import (
    INVALID_MESSAGE,
    INVALID_REQUEST,
    PARSE_ERROR,
    JsonObject,
    MessageKind,
    classify,
    encode_message,
    error_response,
    is_valid_id,
    request_id,
)

STDIO_SESSION = "stdio"
# How long an idle subscription pump waits before checking again whether it was closed.
PUMP_WAIT_SECONDS = 1.0

log = logging.getLogger("mcptask.reference_server")


class _Output:
    """All output goes through one queue and one writer thread, so lines never interleave
    and a slow reader never blocks the task store (whose listeners only enqueue)."""

    def __init__(self, config: ServerConfig, stdout: BinaryIO, plan: FaultPlan) -> None:
        self._config = config
        self._stdout = stdout
        self._plan = plan
        self._outbox: queue.Queue[bytes | PaddedAnswer | None] = queue.Queue()
        self._writer = threading.Thread(target=self._write_loop, name="stdio-writer", daemon=True)

    def start(self) -> None:
        self._writer.start()

    def send(self, message: JsonObject) -> None:
        self._outbox.put(encode_message(message).encode() + b"\n")

    def answer(self, message: object, response: JsonObject, fault: FaultKind | None = None) -> None:
        """Send the response to `message`, as the fault switches drew (`fault`), broken per
        --fault when it answers tasks/*; --die-after ends the process instead."""
        last_words = self._plan.answering(message)
        if last_words is not None:
            self.finish()  # the answers before this one go out first
            die(last_words)
        if fault is FaultKind.LOST:
            return
        if fault is FaultKind.SLOW:
            delay = self._config.fault_switches.delay_ms / 1000
            threading.Thread(
                target=self._send_late, args=(delay, response), name="stdio-slow", daemon=True
            ).start()
            return
        if fault is FaultKind.OVERSIZED:
            self._outbox.put(padded(response, self._config.fault_switches.oversize_bytes))
            return
        method = message.get("method") if isinstance(message, dict) else None
        answer = tampered(self._config.fault, method, response)
        if answer is None:
            log.warning("--fault drop: exiting without answering %s", method)
            self.finish()
            os._exit(1)
        if not isinstance(answer, bytes):
            self.send(answer)
        elif self._config.fault is Fault.WRONG_CONTENT_TYPE:
            self.send(response)  # no content types on stdio
        else:
            self._outbox.put(answer + b"\n")

    def _send_late(self, delay: float, response: JsonObject) -> None:  # a slow answer
        self._plan.sleep(delay)
        self.send(response)

    def finish(self) -> None:
        self._outbox.put(None)
        self._writer.join(timeout=5)

    def _write_loop(self) -> None:
        broken = False
        while (data := self._outbox.get()) is not None:
            if broken:
                continue  # keep draining so producers never block
            try:
                if isinstance(data, PaddedAnswer):  # one line over --fault-oversize, in pieces
                    data.write(self._stdout.write, after=b"\n")
                else:
                    self._stdout.write(data)
                self._stdout.flush()
            except OSError:
                broken = True  # the client closed our stdout; stdin EOF will follow


class StdioServer:
    """Reads messages from `stdin` until EOF and writes answers and notifications to `stdout`."""

    def __init__(
        self,
        config: ServerConfig,
        router: Router,
        store: TaskStore,
        stdin: BinaryIO,
        stdout: BinaryIO,
        plan: FaultPlan | None = None,
    ) -> None:
        self._stdin = stdin
        self._router = router
        self._plan = plan or FaultPlan(config.fault_switches)
        self._output = _Output(config, stdout, self._plan)
        # The open subscriptions/listen requests, each drained by a pump thread into lines.
        self._listens: dict[str | int, tuple[Subscription, threading.Thread]] = {}
        self._listens_lock = threading.Lock()
        if config.fault is Fault.WRONG_CONTENT_TYPE:
            log.warning("--fault wrong-content-type has no stdio equivalent; answering normally")
        # The client of a dual-era server chooses the legacy era by its initialize.
        self._legacy_chosen = router.sole_era is ProtocolEras.LEGACY
        if router.legacy is not None and config.notify:
            store.add_listener(self._push_status)

    def _answer_legacy(self, message: object, fault: FaultKind | None) -> None:
        assert self._router.legacy is not None
        if isinstance(message, dict) and message.get("method") == "initialize":
            self._legacy_chosen = True
        # tasks/result asks the client (elicitation/create) in lines of its own
        reply = self._router.legacy.handle(message, STDIO_SESSION, self._output.send)
        if reply.response is not None:
            self._output.answer(message, reply.response, fault)

    def _push_status(self, view: TaskView) -> None:
        if self._legacy_chosen:
            assert self._router.legacy is not None
            self._output.send(self._router.legacy.status_notification(view))

    def _answer_modern(self, message: object, fault: FaultKind | None) -> None:
        assert self._router.modern is not None
        reply = self._router.modern.handle(message)  # no headers on stdio: nothing to check
        for related in reply.related:
            self._output.send(related)
        if reply.subscription is not None:
            self._start_listen(reply.subscription)
        elif reply.response is not None:
            self._output.answer(message, reply.response, fault)

    def serve(self) -> int:
        self._output.start()
        for raw in iter(self._stdin.readline, b""):
            line = raw.strip()
            if not line:
                continue
            try:
                message = json.loads(line)
            except (ValueError, UnicodeDecodeError, RecursionError):  # nested past the stack too
                self._output.send(error_response(None, PARSE_ERROR, "Parse error"))
                continue
            if isinstance(message, list):
                self._output.send(
                    error_response(None, INVALID_REQUEST, "Batch requests are not supported")
                )
                continue
            if classify(message) is MessageKind.INVALID:
                # Refused here, as the HTTP transport does: the router reads `method`.
                self._output.send(
                    error_response(request_id(message), INVALID_REQUEST, INVALID_MESSAGE)
                )
                continue
            self._cancel_listen(message)
            fault = self._plan.draw(message)
            if fault is FaultKind.RESET:
                log.info("fault reset: dropped %s unhandled", describe(message))
                continue
            era = self._router.era_of(message)
            handler = self._answer_legacy if era is ProtocolEras.LEGACY else self._answer_modern
            if self._router.may_block(message, era):
                # tasks/result and inline tool calls may take long: answer them from their
                # own thread so the next lines are still read and answered.
                threading.Thread(target=handler, args=(message, fault), daemon=True).start()
            else:
                handler(message, fault)
        self._end_listens()
        self._output.finish()
        return 0

    def _start_listen(self, subscription: Subscription) -> None:
        pump = threading.Thread(
            target=self._pump, args=(subscription,), name="stdio-subscription", daemon=True
        )
        with self._listens_lock:
            self._listens[subscription.id] = (subscription, pump)
        pump.start()

    def _pump(self, subscription: Subscription) -> None:
        while (messages := subscription.wait(PUMP_WAIT_SECONDS)) is not None:
            for message in messages:
                self._output.send(message)

    def _cancel_listen(self, message: object) -> None:
        """notifications/cancelled naming a subscriptions/listen request ends it silently
        (whichever era the router gives the notification to)."""
        modern = self._router.modern
        if modern is None or classify(message) is not MessageKind.NOTIFICATION:
            return
        assert isinstance(message, dict)
        params = message.get("params")
        listen_id = params.get("requestId") if isinstance(params, dict) else None
        if message["method"] != "notifications/cancelled" or not is_valid_id(listen_id):
            return
        with self._listens_lock:
            entry = self._listens.pop(listen_id, None)
        if entry is not None:
            modern.hub.remove(entry[0])

    def _end_listens(self) -> None:
        """EOF: the server ends every open subscription with its listen response."""
        with self._listens_lock:
            entries = list(self._listens.values())
            self._listens.clear()
        for subscription, pump in entries:
            assert self._router.modern is not None
            self._router.modern.hub.remove(subscription)
            pump.join(timeout=PUMP_WAIT_SECONDS * 2)
            self._output.send(self._router.modern.listen_closed(subscription))

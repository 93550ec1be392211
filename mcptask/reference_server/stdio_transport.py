"""stdio transport: newline-delimited JSON-RPC on stdin/stdout, one implicit session."""

from __future__ import annotations

import json
import logging
import os
import queue
import threading
from typing import BinaryIO

from mcptask.reference_server.config import Fault, ServerConfig
from mcptask.reference_server.dispatcher import LegacyDispatcher
from mcptask.reference_server.faults import replacement_body, with_wrong_id
from mcptask.reference_server.jsonrpc import (
    INVALID_REQUEST,
    PARSE_ERROR,
    JsonObject,
    error_response,
)
from mcptask.reference_server.sse import encode_message
from mcptask.reference_server.store import TaskStore

STDIO_SESSION = "stdio"

log = logging.getLogger("mcptask.reference_server")


class StdioServer:
    """Reads messages from `stdin` until EOF and writes answers and notifications to `stdout`.

    All output goes through one queue and one writer thread, so lines never interleave and
    a slow reader never blocks the task store (whose listeners only enqueue).
    """

    def __init__(
        self,
        config: ServerConfig,
        dispatcher: LegacyDispatcher,
        store: TaskStore,
        stdin: BinaryIO,
        stdout: BinaryIO,
    ) -> None:
        self._config = config
        self._dispatcher = dispatcher
        self._stdin = stdin
        self._stdout = stdout
        self._outbox: queue.Queue[bytes | None] = queue.Queue()
        self._writer = threading.Thread(target=self._write_loop, name="stdio-writer", daemon=True)
        if config.fault is Fault.WRONG_CONTENT_TYPE:
            log.warning("--fault wrong-content-type has no stdio equivalent; answering normally")
        if config.notify:
            store.add_listener(lambda view: self._send(dispatcher.status_notification(view)))

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
            if self._dispatcher.may_block(message):
                # tasks/result and inline tool calls may take long: answer them from their
                # own thread so the next lines are still read and answered.
                threading.Thread(target=self._handle, args=(message,), daemon=True).start()
            else:
                self._handle(message)
        self._finish_output()
        return 0

    def _handle(self, message: object) -> None:
        reply = self._dispatcher.handle(message, STDIO_SESSION)
        response = reply.response
        if response is None:
            return
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

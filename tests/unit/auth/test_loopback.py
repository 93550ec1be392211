"""The loopback receiver of the browser sign-in: an idle connection holds nothing up."""

from __future__ import annotations

import socket
import threading

import httpx

from mcptask.auth.browser import LoopbackReceiver


def test_an_idle_connection_blocks_neither_the_callback_nor_close() -> None:
    receiver = LoopbackReceiver()
    idle = socket.create_connection(("127.0.0.1", receiver.port))  # a browser's spare one
    closed = threading.Event()
    try:
        answer = httpx.get(receiver.redirect_uri + "?code=the-code&state=s", timeout=3)
        assert answer.status_code == 200
        redirect = receiver.wait(3, "s")
        assert redirect.code == "the-code"
        assert redirect.state == "s"
    finally:
        # close() in a thread: before the fix it hung for good, which must fail, not hang.
        closing = threading.Thread(target=_close, args=(receiver, closed), daemon=True)
        closing.start()
        closing.join(timeout=3)
        idle.close()
    assert closed.is_set(), "close() did not return while a connection sat idle"


def _close(receiver: LoopbackReceiver, closed: threading.Event) -> None:
    receiver.close()
    closed.set()

"""Attacks by a hostile Streamable HTTP server on the real `mcptask` process: answers that
inflate past the bound once decoded (a gzip bomb), and answers that never end in time
(`--timeout` is an answer's whole time, not each read's)."""

from __future__ import annotations

import json
import resource
import time
import zlib
from http.server import BaseHTTPRequestHandler

import pytest

from tests.cli_process import run_mcptask
from tests.security.hostile_http import Answer, hostile_server

INFLATED_BYTES = 256 * 1024 * 1024
"""What the bomb inflates to: eight times the default 32 MiB bound."""


def _gzip_bomb(request_id: object) -> bytes:
    """A JSON-RPC response whose padding inflates to INFLATED_BYTES (about 250 KB sent)."""
    compressor = zlib.compressobj(9, zlib.DEFLATED, zlib.MAX_WBITS | 16)
    head = json.dumps({"jsonrpc": "2.0", "id": request_id, "result": {"pad": ""}})[:-3]
    parts = [compressor.compress(head.encode())]
    block = b"A" * (1024 * 1024)
    parts += [compressor.compress(block) for _ in range(INFLATED_BYTES // len(block))]
    parts.append(compressor.compress(b'"}}') + compressor.flush())
    return b"".join(parts)


def test_a_gzip_bomb_is_refused_by_its_decoded_size() -> None:
    bomb = _gzip_bomb(1)

    def answer(handler: BaseHTTPRequestHandler, request_id: object) -> None:
        _send_gzip(handler, bomb if request_id == 1 else _gzip_bomb(request_id))

    assert len(bomb) < 1024 * 1024  # far under the bound as sent
    peak_before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    with hostile_server(answer) as url:
        result = run_mcptask("list", "--url", url, "--retries", "0", "--timeout", "20")
    result.assert_one_line_error(8, "larger than 33554432 bytes")
    # Bounded memory: the process never held the inflated answer (ru_maxrss is in KiB; it
    # only grows past the earlier children's peak if this one's was higher).
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    assert peak <= max(peak_before, 200 * 1024), f"peak RSS {peak} KiB"


def _trickle_json(handler: BaseHTTPRequestHandler, request_id: object) -> None:
    """A JSON answer that announces 1 MB and sends one byte every half second."""
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(1024 * 1024))
    handler.end_headers()
    for _ in range(1024 * 1024):
        handler.wfile.write(b" ")
        handler.wfile.flush()
        time.sleep(0.5)


def _trickle_headers(handler: BaseHTTPRequestHandler, request_id: object) -> None:
    """A status line, then headers that never end: one byte every half second."""
    handler.wfile.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
    for _ in range(1024 * 1024):
        handler.wfile.write(b"a")
        handler.wfile.flush()
        time.sleep(0.5)


def _pinging_stream(handler: BaseHTTPRequestHandler, request_id: object) -> None:
    """An event stream kept open with a comment every half second, never answering."""
    handler.send_response(200)
    handler.send_header("Content-Type", "text/event-stream")
    handler.end_headers()
    while True:
        handler.wfile.write(b": ping\n\n")
        handler.wfile.flush()
        time.sleep(0.5)


@pytest.mark.parametrize(
    ("answer", "said"),
    [
        (_trickle_json, "did not answer within 2s"),
        (_trickle_headers, "did not answer in time"),
        (_pinging_stream, "did not answer within 2s"),
    ],
    ids=["trickle", "trickled-headers", "pings"],
)
def test_timeout_is_the_whole_answers_time(answer: Answer, said: str) -> None:
    # Each read gets a byte within --timeout, so a per-read timeout alone never ends this:
    # the old process was still waiting when the subprocess timeout below killed it.
    with hostile_server(answer) as url:
        result = run_mcptask("list", "--url", url, "--timeout", "2", "--retries", "0", timeout=60)
    result.assert_one_line_error(3, said)


def _challenge(handler: BaseHTTPRequestHandler, request_id: object) -> None:
    """401, naming this server's own protected resource metadata (where the attack is)."""
    host, port = handler.request.getsockname()[:2]
    metadata = f"http://{host}:{port}/.well-known/oauth-protected-resource"
    handler.send_response(401)
    handler.send_header("WWW-Authenticate", f'Bearer resource_metadata="{metadata}"')
    handler.send_header("Content-Length", "0")
    handler.end_headers()


def _bomb_document(handler: BaseHTTPRequestHandler, path: object) -> None:
    _send_gzip(handler, _gzip_bomb(None))


def _send_gzip(handler: BaseHTTPRequestHandler, body: bytes) -> None:
    """A 200 whose JSON body is `body`, gzip-encoded (Content-Length: its size as sent)."""
    handler.send_response(200)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Encoding", "gzip")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


def test_oauth_metadata_is_bounded_by_its_decoded_size() -> None:
    with hostile_server(_challenge, get=_bomb_document) as url:
        result = run_mcptask("list", "--url", url, "--retries", "0", timeout=60)
    result.assert_one_line_error(4, "OAuth metadata", "larger than 33554432 bytes")


def test_oauth_metadata_is_bounded_in_time() -> None:
    with hostile_server(_challenge, get=_trickle_json) as url:
        result = run_mcptask("list", "--url", url, "--timeout", "2", "--retries", "0", timeout=60)
    result.assert_one_line_error(3, "oauth-protected-resource did not answer within 2s")

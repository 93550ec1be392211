"""Connections kept against the official SDK 1.x server, whose answers are chunked event
streams (no Content-Length) that it ends right behind the response: the real mcptask, over
HTTPS through a TLS terminator that counts the connections it is given (tests/network.py),
cancels a session's tasks over a handful of connections, not one TLS handshake a request."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import pytest
import trustme

from tests.cli_process import run_mcptask
from tests.network import TlsTerminator

from .sdk_env import create_tasks_in_session, ensure_sdk_venv, start_sdk_server, stop

TASKS = 12


@pytest.fixture
def sdk_url() -> Iterator[str]:
    ensure_sdk_venv()
    url, proc = start_sdk_server("sse")
    try:
        yield url
    finally:
        stop(proc)


def test_a_bulk_cancel_over_https_reuses_its_connections(sdk_url: str, tmp_path: Path) -> None:
    session_id, created = create_tasks_in_session(sdk_url, TASKS)
    ca = trustme.CA()
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ca.issue_cert("127.0.0.1").configure_cert(context)
    ca_file = tmp_path / "ca.pem"
    ca.cert_pem.write_to_path(str(ca_file))
    port = urlsplit(sdk_url).port
    assert port is not None
    with TlsTerminator(port, context) as tls:
        result = run_mcptask(
            "cancel", "--all-working", "--yes", "-o", "json", "--ca-cert", str(ca_file),
            "--url", f"https://127.0.0.1:{tls.port}/mcp", "--session-id", session_id,
        )  # fmt: skip
        accepted = tls.accepted
    assert result.code == 0, result.stderr[-2000:]
    outcomes = {r["taskId"]: r["outcome"] for r in result.json()["results"]}
    assert outcomes == dict.fromkeys(created, "cancelled")
    # 2 * TASKS + 5 requests (probe, initialize, initialized, DELETE, list, cancels, gets):
    # one connection each before; now the session's own and, over a slow link, a second one
    # for the confirmations (the probe's 400 may cost one more).
    assert accepted <= 4, f"{accepted} connections for {2 * TASKS + 5} requests"

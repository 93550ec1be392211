"""Attacks of other users of the machine and of idle peers on the reference server: its
secrets read from `ps` (the command line), and connections or sessions held open forever."""

from __future__ import annotations

import socket
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import pytest

from tests.reference_server_process import (
    ReferenceServerProcess,
    start_reference_server,
    stop_process,
)
from tests.security.reference_server_peers import (
    POST_HEADERS,
    TIMEOUT,
    Peer,
    client_credentials_token,
)

TOKEN = "require-me-4f1c9b"
SECRET = "client-secret-8d2e7a"
INITIALIZE = '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}'


def command_line(proc: ReferenceServerProcess) -> str:
    """The process's arguments as every user of the machine sees them (ps)."""
    return Path(f"/proc/{proc.pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()


def opens(url: str, token: str | None) -> int:
    headers = {**POST_HEADERS, **({"Authorization": f"Bearer {token}"} if token else {})}
    return httpx.post(url, content=INITIALIZE, headers=headers, timeout=TIMEOUT).status_code


@pytest.mark.parametrize("way", ["file", "environment"])
def test_the_required_token_stays_off_the_command_line(
    way: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args: tuple[str, ...] = ()
    if way == "file":
        (tmp_path / "token").write_text(TOKEN + "\n")
        args = ("--require-token-file", str(tmp_path / "token"))
    else:
        monkeypatch.setenv("MCPTASK_REFERENCE_REQUIRE_TOKEN", TOKEN)
    url, proc = start_reference_server(*args)
    try:
        assert TOKEN not in command_line(proc)
        assert opens(url, None) == 401
        assert opens(url, "guess") == 401
        assert opens(url, TOKEN) == 200
    finally:
        stop_process(proc)


@pytest.mark.parametrize("way", ["file", "environment"])
def test_client_secrets_stay_off_the_command_line(
    way: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args: tuple[str, ...] = ("--oauth",)
    if way == "file":
        (tmp_path / "clients").write_text(f"# CI\nci:{SECRET}\n")
        args += ("--oauth-clients-file", str(tmp_path / "clients"))
    else:
        monkeypatch.setenv("MCPTASK_REFERENCE_OAUTH_CLIENTS", f"ci:{SECRET} other:x")
    url, proc = start_reference_server(*args)
    try:
        assert SECRET not in command_line(proc)
        assert opens(url, client_credentials_token(url, "ci", SECRET)) == 200
    finally:
        stop_process(proc)


def closed_by_server(sock: socket.socket) -> bool:
    """True once the server closes the connection (waiting up to 30 s for it)."""
    sock.settimeout(30)
    try:
        while sock.recv(4096):
            pass
    except TimeoutError:
        return False
    except ConnectionResetError:
        pass
    return True


def test_idle_and_trickling_connections_are_closed() -> None:
    url, proc = start_reference_server("--connection-idle-timeout", "0.5")
    address = (urlsplit(url).hostname or "", urlsplit(url).port or 0)
    try:
        with socket.create_connection(address) as silent:  # never sends a byte
            assert closed_by_server(silent)
        with socket.create_connection(address) as slowloris:  # never ends its headers
            slowloris.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            assert closed_by_server(slowloris)
        assert opens(url, None) == 200  # the server still serves
    finally:
        stop_process(proc)


def test_an_unused_session_is_forgotten() -> None:
    url, proc = start_reference_server("--session-idle-timeout", "0.5")
    try:
        peer = Peer(url)
        peer.initialize()
        time.sleep(1.5)  # unused for longer than its idle timeout (the server's real clock)
        assert peer.post("tasks/list").status_code == 404
        peer.initialize()  # a client starts a new one, as after any 404
        assert "result" in peer.call("tasks/list")
    finally:
        stop_process(proc)

"""What a ConnectionSettings shows of itself (in a traceback, a log)."""

from __future__ import annotations

from mcptask.client.connection import ConnectionSettings


def test_the_repr_hides_credentials_in_the_server_command_and_headers() -> None:
    settings = ConnectionSettings(
        server_command="srv --token t0k-secret sk-live-abcdefghijklmnop",
        headers={"Authorization": "Bearer h3ader-secret"},
        env={"API_KEY": "env-secret"},
    )
    shown = repr(settings)
    for secret in ("t0k-secret", "abcdefghijklmnop", "h3ader-secret", "env-secret"):
        assert secret not in shown
    assert "srv --token" in shown

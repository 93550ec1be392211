"""What `redact_url` and `display_command` keep and hide."""

from __future__ import annotations

import pytest

from mcptask.transport.redact import display_command, display_server, redact_url


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        (
            "https://alice:pw@h/mcp?api_key=k&tenant=a",
            "https://<redacted>@h/mcp?api_key=<redacted>&tenant=a",
        ),
        (
            "https://h:8443/mcp?sig=s&code=c#top",
            "https://h:8443/mcp?sig=<redacted>&code=<redacted>#top",
        ),
        ("https://h/mcp?ghp_abcdefghijklmnop", "https://h/mcp?<redacted>"),
        ("https://h/mcp?q=ghp_abcdefghijklmnop&n=1", "https://h/mcp?q=<redacted>&n=1"),
        ("http://127.0.0.1:9/mcp", "http://127.0.0.1:9/mcp"),
        ("https://h:99999/", "<invalid URL>"),
    ],
)
def test_a_url_keeps_all_but_its_credentials(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_a_command_hides_secret_looking_arguments() -> None:
    shown = display_command(
        [
            "srv",
            "sk-live-abcdefghijklmnop",
            "DB=postgres://u:p4ss@db/app",
            "--url=https://u:p4ss@h/x",
            "Authorization: Bearer t0k",
            "https://h/?token=t0k",
            "--port",
            "80",
            "sk-learn",
        ]
    )
    assert "abcdefghijklmnop" not in shown
    assert "p4ss" not in shown
    assert "t0k" not in shown
    assert "--port 80 sk-learn" in shown
    assert "'DB=postgres://<redacted>@db/app'" in shown


def test_a_saved_command_that_cannot_be_split_is_still_redacted() -> None:
    assert display_server("srv --token t0k 'open") == "srv --token '<redacted>' ''\"'\"'open'"


def test_a_secret_shaped_value_is_hidden_whatever_its_name() -> None:
    shown = display_command(["srv", "--account=ghp_abcdefghijklmnop", "--port=80"])
    assert shown == "srv '--account=<redacted>' --port=80"

"""Attacks by the answers of an authorization server's token endpoint, against the real
`mcptask` process: an error description that echoes the request (the client secret in its
Basic header form among it), and an access token that cannot go in a header."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from tests.cli_process import run_mcptask
from tests.security.hostile_oauth import Seen, authorization_server, client_env, mcp_server

CLIENT = "ci-robot"
SECRET = "s3cret-of-the-organisation-" + "q" * 12
BASIC = base64.b64encode(f"{CLIENT}:{SECRET}".encode()).decode()


def test_an_echoed_request_never_prints_the_secret(tmp_path: Path) -> None:
    def echo(seen: Seen) -> object:
        return {"error": "invalid_client", "error_description": f"you sent: {seen.text}"}

    hostile = authorization_server(token=echo)
    with hostile, mcp_server(lambda: hostile.origin) as server:
        result = run_mcptask(
            "list",
            "--url",
            server.origin + "/mcp",
            "-v",
            env=client_env(tmp_path, CLIENT, SECRET, MCPTASK_CLIENT_ISSUER=hostile.origin),
        )
        received = hostile.seen
    assert any(BASIC in seen.text for seen in received)  # the echo did carry it
    assert result.code == 4, result.stderr
    assert "invalid_client" in result.stderr
    assert "<redacted>" in result.stderr
    for form in (SECRET, BASIC, BASIC[:24]):
        assert form not in result.stderr
        assert form not in result.stdout


def test_a_token_that_cannot_be_sent_is_refused_on_receipt(tmp_path: Path) -> None:
    hostile = authorization_server(token={"access_token": "tök\u20acn", "token_type": "Bearer"})
    with hostile, mcp_server(lambda: hostile.origin) as server:
        env = client_env(tmp_path, CLIENT, SECRET, MCPTASK_CLIENT_ISSUER=hostile.origin)
        first = run_mcptask("list", "--url", server.origin + "/mcp", env=env)
        again = run_mcptask("list", "--url", server.origin + "/mcp", env=env)
    first.assert_one_line_error(4, "not printable ASCII")
    cache = tmp_path / "state" / "tokens.json"
    if cache.exists():
        assert json.loads(cache.read_text()).get("tokens", []) == []
    # Nothing was kept: the next command is refused the same way, not an internal error.
    again.assert_one_line_error(4, "not printable ASCII")

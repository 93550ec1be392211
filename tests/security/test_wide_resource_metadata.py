"""An attack through the protected resource metadata, against the real `mcptask` process:
the MCP server at /mcp names a parent of its URL (its whole origin) as the resource, so that
the token mcptask asks for would be good on every path of the origin. mcptask asks for a
token for the server's own URL, unless MCPTASK_WIDE_RESOURCE=1 says otherwise."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs

import pytest

from tests.cli_process import run_mcptask
from tests.security.hostile_oauth import authorization_server, mcp_server


@pytest.mark.parametrize("wide", [False, True], ids=["default", "opted-in"])
def test_a_parent_resource_does_not_widen_the_token(tmp_path: Path, wide: bool) -> None:
    with (
        authorization_server() as issuer,
        mcp_server(lambda: issuer.origin, resource_path="/") as server,
    ):
        result = run_mcptask(
            "list",
            "--url",
            server.origin + "/mcp",
            "--auth",
            "client-credentials",
            env={
                "MCPTASK_STATE_DIR": str(tmp_path / "state"),
                "MCPTASK_CONFIG_DIR": str(tmp_path / "config"),
                "BROWSER": "",
                "MCPTASK_CLIENT_ID": "ci-robot",
                "MCPTASK_CLIENT_SECRET": "s3cret",
                "MCPTASK_CLIENT_ISSUER": issuer.origin,
                **({"MCPTASK_WIDE_RESOURCE": "1"} if wide else {}),
            },
        )
        received = issuer.seen
    # The MCP server refuses every token: exit 4 once the token request is made.
    result.assert_one_line_error(4, "HTTP 401")
    (token_request,) = [seen for seen in received if seen.path == "/token"]
    wanted = server.origin + ("/" if wide else "/mcp")
    assert parse_qs(token_request.body)["resource"] == [wanted]

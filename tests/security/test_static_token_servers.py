"""A server that takes only a static bearer token (no OAuth metadata at all), against the
real `mcptask` process: the refusal says so and points at the token options; nothing is
registered at a guessed endpoint."""

from __future__ import annotations

from pathlib import Path

from tests.cli_process import run_mcptask
from tests.security.hostile_oauth import HostileServer, Seen, json_answer


def _static_only(seen: Seen) -> tuple[int, dict[str, str], bytes]:
    if seen.method == "GET":
        return json_answer(404, {"error": "not_found"})
    status, headers, content = json_answer(401, {"error": "unauthorized"})
    return status, {**headers, "WWW-Authenticate": 'Bearer realm="static"'}, content


def test_a_static_token_server_is_told_apart_from_an_oauth_one(tmp_path: Path) -> None:
    with HostileServer(_static_only) as server:
        result = run_mcptask(
            "list",
            "--url",
            server.origin + "/mcp",
            env={
                "MCPTASK_STATE_DIR": str(tmp_path / "state"),
                "MCPTASK_CONFIG_DIR": str(tmp_path / "config"),
                "BROWSER": "",
            },
        )
        received = server.seen
    result.assert_one_line_error(4, "publishes no OAuth metadata", "MCPTASK_TOKEN", "--token-file")
    assert "mcptask login" not in result.stderr
    assert not any(seen.method == "POST" and seen.path == "/register" for seen in received)

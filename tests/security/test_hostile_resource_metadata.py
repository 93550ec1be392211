"""An attack through the 401 challenge, against the real `mcptask` process: its
`resource_metadata` names another origin (an internal service, a cloud metadata address),
which mcptask must never fetch."""

from __future__ import annotations

from pathlib import Path

from tests.cli_process import run_mcptask
from tests.security.hostile_oauth import HostileServer, Seen, json_answer


def test_a_challenge_never_sends_mcptask_to_another_origin(tmp_path: Path) -> None:
    with HostileServer(lambda seen: json_answer(200, {"secret": "internal"})) as internal:

        def refuse(seen: Seen) -> tuple[int, dict[str, str], bytes]:
            challenge = f'Bearer resource_metadata="{internal.origin}/latest/meta-data"'
            status, headers, content = json_answer(401, {"error": "unauthorized"})
            return status, {**headers, "WWW-Authenticate": challenge}, content

        with HostileServer(refuse) as server:
            result = run_mcptask(
                "list",
                "--url",
                server.origin + "/mcp",
                "-v",
                env={
                    "MCPTASK_STATE_DIR": str(tmp_path / "state"),
                    "MCPTASK_CONFIG_DIR": str(tmp_path / "config"),
                    "BROWSER": "",
                },
            )
        fetched = internal.seen
    assert fetched == []
    assert result.code == 4, result.stderr
    assert "ignoring the challenge's resource_metadata on another origin" in result.stderr

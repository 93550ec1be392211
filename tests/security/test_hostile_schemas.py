"""A hostile server's tool `inputSchema` against `mcptask start`: remote and file `$ref`s are
never fetched nor read, and a `pattern` built to backtrack forever does not hang `start`."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path
from typing import Any

from tests.cli_process import mcptask_argv, run_mcptask
from tests.security.hostile_mcp import HostileMcp, Witness

LEGACY = ("--protocol", "2025-11-25")


BACKTRACKING = {"type": "object", "properties": {"a": {"type": "string", "pattern": "^(a+)+$"}}}
"""^(a+)+$ against "aaa…a!" takes 2^n steps: hours for n = 40, without a bound."""
HOPELESS = "a=" + "a" * 40 + "!"


def tool(schema: dict[str, Any]) -> dict[str, Any]:
    return {"name": "job", "inputSchema": schema, "execution": {"taskSupport": "optional"}}


def unchecked_line(stderr: str) -> str:
    """The one stderr line that says the arguments were not checked."""
    lines = [line for line in stderr.splitlines() if "were not checked" in line]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


def test_a_remote_ref_is_never_fetched() -> None:
    with Witness() as witness:
        schema = {"type": "object", "properties": {"a": {"$ref": witness.url}}}
        with HostileMcp(tools=[tool(schema)]) as server:
            result = run_mcptask("start", "job", "a=1", "--url", server.url, *LEGACY, "-o", "ids")
        assert witness.requests == []
        assert result.code == 0, result.stderr
        assert result.stdout == "started-by-hostile\n"
        line = unchecked_line(result.stderr)
        assert "unresolvable $ref" in line
        assert witness.url in line
        assert "fetches no other document" in line


def test_a_file_ref_is_never_read(tmp_path: Path) -> None:
    # A file that would make the call fail if it were read: "a" must be an integer.
    secret = tmp_path / "schema.json"
    secret.write_text('{"type": "integer"}')
    schema = {"type": "object", "properties": {"a": {"$ref": secret.as_uri()}}}
    with HostileMcp(tools=[tool(schema)]) as server:
        result = run_mcptask("start", "job", "a=x", "--url", server.url, *LEGACY, "-o", "ids")
    assert result.code == 0, result.stderr
    assert "tools/call" in server.calls
    assert "unresolvable $ref" in unchecked_line(result.stderr)


def test_refs_inside_the_schema_still_check_the_arguments() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/count"}},
        "$defs": {"count": {"type": "integer"}},
    }
    with HostileMcp(tools=[tool(schema)]) as server:
        result = run_mcptask("start", "job", "a=x", "--url", server.url, *LEGACY)
    result.assert_one_line_error(2, "do not match the inputSchema", "nothing was sent")
    assert "tools/call" not in server.calls


def test_a_backtracking_pattern_is_given_up() -> None:
    with HostileMcp(tools=[tool(BACKTRACKING)]) as server:
        result = run_mcptask(
            "start", "job", HOPELESS, "--url", server.url, *LEGACY, "-o", "ids", timeout=60
        )
    assert result.code == 0, result.stderr
    assert result.stdout == "started-by-hostile\n"
    assert "checking took over 2 s" in unchecked_line(result.stderr)


def test_sigterm_while_a_pattern_backtracks_stops_start_and_sends_nothing() -> None:
    environment = {key: value for key, value in os.environ.items() if key != "MCPTASK_URL"}
    environment["NO_COLOR"] = "1"
    with HostileMcp(tools=[tool(BACKTRACKING)]) as server:
        process = subprocess.Popen(
            [*mcptask_argv(), "start", "job", HOPELESS, "--url", server.url, *LEGACY],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=environment,
        )
        try:
            assert server.tools_listed.wait(60)
            process.send_signal(signal.SIGTERM)
            stdout, stderr = process.communicate(timeout=60)
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
        assert process.returncode == 130, stderr
        assert "tools/call" not in server.calls
    assert stdout == ""
    assert stderr == "mcptask: error: interrupted before the call was sent: nothing was started\n"

"""A file the user is handed (an answer, task handles, an MCP client config), or a KEY:=JSON
item, may nest its JSON deeper than Python's parser recurses: a one-line usage error naming
it (exit 2), never an internal error. Nothing is contacted: the input is refused first."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_process import run_mcptask

UNUSED_URL = "http://127.0.0.1:9/mcp"
DEEP = "[" * 100_000 + "]" * 100_000


@pytest.mark.parametrize(
    ("option", "text"),
    [
        (["answer", "t1", "--from-file"], DEEP),
        (["handles", "--import"], DEEP),
        (["handles", "--import"], '{"taskId": "a"}\n' + DEEP),  # JSON lines
    ],
)
def test_a_deep_file_given_to_a_command_is_a_usage_error(
    tmp_path: Path, option: list[str], text: str
) -> None:
    path = tmp_path / "deep.json"
    path.write_text(text)
    refused = run_mcptask(*option, str(path), "--url", UNUSED_URL)
    refused.assert_one_line_error(2, "deep.json", "nested too deeply")


def test_a_deep_item_is_a_usage_error() -> None:
    item = "x:=" + "[" * 20_000 + "]" * 20_000  # within the limit of one argument's length
    refused = run_mcptask("answer", "t1", item, "--url", UNUSED_URL)
    refused.assert_one_line_error(2, "x:=", "nested too deeply")


def test_a_deep_config_file_is_a_usage_error(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    path.write_text('{"mcpServers": ' + DEEP + "}")
    refused = run_mcptask("list", "--config", str(path))
    refused.assert_one_line_error(2, "mcp.json", "nested too deeply")

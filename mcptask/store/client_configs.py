"""The server entries of the MCP client config files people already keep, as profiles: the
`mcpServers` object (Claude Desktop, Cursor, Windsurf, Claude Code, the MCP Inspector) and VS
Code's `servers` object (`.vscode/mcp.json`).

Such a file may come with a project someone else wrote, so its placeholders `${NAME}`,
`${NAME:-default}` and `${env:NAME}` are expanded from the user's environment only when the
user names the variable (`--config-env NAME`); `${workspaceFolder}` and `${userHome}` are
paths, not secrets; `${input:ID}` (VS Code prompts for it) is given with `--header`/`--env`.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Collection, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

from mcptask.errors import UsageError
from mcptask.store.profiles import ConfigSource, Profile, ProfileBook

MAX_CONFIG_BYTES = 1024 * 1024
"""A client config file larger than this is refused (they are a few KB)."""
_PLACEHOLDER = re.compile(r"\$\{([^}]*)\}")
_ENV_NAME = re.compile(r"(?:env:)?([A-Za-z_][A-Za-z0-9_]*)(?::-(.*))?", re.DOTALL)
# The keys a server entry may have; another (`cwd`, `envFile`, ...) changes how the server
# runs in a way mcptask does not follow, so the entry is refused rather than run otherwise.
_STDIO_KEYS = frozenset({"command", "args", "env", "type", "description", "disabled"})
_HTTP_KEYS = frozenset({"url", "serverUrl", "type", "headers", "description", "disabled"})
_HTTP_TYPES = (None, "http", "streamable-http", "streamableHttp")
# VS Code's mcp.json is JSONC: strings are kept whole; comments and trailing commas go.
_JSONC = re.compile(r'("(?:[^"\\]|\\.)*")|//[^\n]*|/\*.*?\*/|,(?=\s*[}\]])', re.DOTALL)


def read_client_config(path: Path) -> ProfileBook:
    """The server entries of `path` as profiles, placeholders as written; UsageError naming
    the file (and the entry) when it cannot be used."""
    try:
        with path.open("rb") as stream:
            data = stream.read(MAX_CONFIG_BYTES + 1)
    except OSError as exc:
        raise UsageError(f"cannot read --config {str(path)!r}: {exc.strerror}") from None
    if len(data) > MAX_CONFIG_BYTES:
        raise UsageError(f"{path}: larger than {MAX_CONFIG_BYTES // 1024} KiB: not a config file")
    try:
        text = data.decode("utf-8-sig")
        for _ in range(2):  # twice: a comment may stand between a trailing comma and its `]`
            text = _JSONC.sub(lambda match: match.group(1) or "", text)
        document = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: not valid JSON ({exc})") from None
    except RecursionError:
        raise UsageError(f"{path}: nested too deeply: not a config file") from None
    entries = _entries(path, document)
    source = str(path.resolve())  # saved with a profile: it names the file from anywhere
    profiles = {
        name: replace(_profile(path, name, entry), source=ConfigSource(source, name))
        for name, entry in entries.items()
        # As the clients do: a server marked disabled is not there.
        if not (isinstance(entry, dict) and entry.get("disabled") is True)
    }
    # One server needs no name; several do (-P NAME).
    default = next(iter(profiles)) if len(profiles) == 1 else None
    return ProfileBook(path, profiles, default)


def expanded(
    profile: Profile, config: Path, environ: Mapping[str, str], allowed: Collection[str]
) -> Profile:
    """`profile` with its placeholders filled in, an environment variable only when it is
    `allowed` (else UsageError naming the file, entry, setting and variable)."""

    def fill(text: str, where: str) -> str:
        def one(match: re.Match[str]) -> str:
            return _placeholder(match.group(1), config, environ, allowed, f"{where} of {name}")

        return _PLACEHOLDER.sub(one, text)

    name = f"server {profile.name!r} in {config}"
    return replace(
        profile,
        url=fill(profile.url, "url") if profile.url else None,
        # Word by word: a filled-in value is one argument, whatever quotes it holds.
        server=shlex.join(fill(word, "command") for word in shlex.split(profile.server))
        if profile.server
        else None,
        headers={k: fill(str(v), f"header {k!r}") for k, v in profile.headers.items()},
        env={k: fill(str(v), f"env {k!r}") for k, v in profile.env.items()},
    )


def _placeholder(
    inside: str, config: Path, environ: Mapping[str, str], allowed: Collection[str], where: str
) -> str:
    if inside == "workspaceFolder":
        # VS Code's: the folder that holds .vscode/mcp.json; else the file's own folder.
        folder = config.resolve().parent
        return str(folder.parent if folder.name == ".vscode" else folder)
    if inside == "userHome":
        return str(Path.home())
    if inside.startswith("input:"):
        raise UsageError(
            f"the {where} asks for ${{{inside}}}, a value VS Code prompts for: give it with "
            "--header or --env instead"
        )
    match = _ENV_NAME.fullmatch(inside)
    if match is None:
        raise UsageError(f"the {where} has a placeholder mcptask does not know: ${{{inside}}}")
    variable, fallback = match.groups()
    if variable not in allowed:
        raise UsageError(
            f"the {where} reads the environment variable {variable}; mcptask passes none of "
            f"your environment to a config file's server unless you say so: --config-env "
            f"{variable}"
        )
    value = environ.get(variable)
    if value is None and fallback is None:
        raise UsageError(f"the {where} reads {variable}, which is not set")
    return value if value is not None else fallback or ""


def _entries(path: Path, document: Any) -> dict[str, Any]:
    """The object of server entries: `mcpServers`, or VS Code's `servers`."""
    if isinstance(document, dict):
        for key in ("mcpServers", "servers"):
            if isinstance(document.get(key), dict):
                return dict(document[key])
    raise UsageError(f"{path}: no mcpServers (or VS Code servers) object of server entries")


def _profile(path: Path, name: str, entry: Any) -> Profile:
    """One server entry as a profile (never saved)."""
    where = f"{path}: server {name!r}"
    if not isinstance(entry, dict):
        raise UsageError(f"{where}: not an object")
    if "url" in entry and "command" in entry:
        raise UsageError(f"{where}: has both url and command")
    stdio = "command" in entry
    unknown = sorted(set(entry) - (_STDIO_KEYS if stdio else _HTTP_KEYS))
    if unknown:
        raise UsageError(f"{where}: mcptask cannot follow {', '.join(unknown)} here")
    kind = entry.get("type")
    if kind == "sse":
        raise UsageError(f"{where}: the HTTP+SSE transport (2024-11-05) is not served")
    if kind not in ((None, "stdio") if stdio else _HTTP_TYPES):
        raise UsageError(f"{where}: type {kind!r} does not fit a {'command' if stdio else 'url'}")
    if stdio:
        command, args = entry.get("command"), entry.get("args", [])
        if not isinstance(command, str) or not command:
            raise UsageError(f"{where}: command must be a non-empty string")
        if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
            raise UsageError(f"{where}: args must be a list of strings")
        env = _strings(where, "env", entry.get("env", {}))
        return Profile(name=name, server=shlex.join([command, *args]), env=dict(env))
    url = entry.get("url", entry.get("serverUrl"))  # serverUrl: Windsurf's name for it
    if not isinstance(url, str) or not url:
        raise UsageError(f"{where}: needs a url (HTTP) or a command (stdio)")
    headers = _strings(where, "headers", entry.get("headers", {}))
    return Profile(name=name, url=url, headers=dict(headers))


def _strings(where: str, key: str, value: Any) -> dict[str, str]:
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise UsageError(f"{where}: {key} must be an object of strings")
    return value

"""What the handshake settles: versions and eras, who each side is, what the server offers;
and a 2026-07-28 request's `_meta` and header values."""

from __future__ import annotations

import base64
from dataclasses import dataclass

from mcptask import __version__
from mcptask.protocol.jsonrpc import JsonObject

LEGACY_VERSION = "2025-11-25"
MODERN_VERSION = "2026-07-28"
TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
LEGACY_ERA = "legacy"
MODERN_ERA = "modern"

CLIENT_INFO: dict[str, str] = {"name": "mcptask", "version": __version__}
PROTOCOL_CHOICES: tuple[str, ...] = ("auto", LEGACY_VERSION, MODERN_VERSION)

# Per-request `_meta` keys of the modern era.
META_PROTOCOL_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CLIENT_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
META_CLIENT_INFO = "io.modelcontextprotocol/clientInfo"


@dataclass(frozen=True)
class TaskSupport:
    """Which task operations a server offers."""

    tasks: bool = False
    list: bool = False
    cancel: bool = False
    tool_calls: bool = False
    update: bool = False
    """`tasks/update`: answering a task that waits for input (2026-07-28 only; a 2025-11-25
    task is answered by responses to the server's own requests)."""

    @classmethod
    def from_legacy_capabilities(cls, capabilities: JsonObject) -> TaskSupport:
        tasks = capabilities.get("tasks")
        if not isinstance(tasks, dict):
            return cls()
        requests = tasks.get("requests")
        tools = requests.get("tools") if isinstance(requests, dict) else None
        return cls(
            tasks=True,
            list=isinstance(tasks.get("list"), dict),
            cancel=isinstance(tasks.get("cancel"), dict),
            tool_calls=isinstance(tools, dict) and isinstance(tools.get("call"), dict),
        )

    @classmethod
    def from_modern_capabilities(cls, capabilities: JsonObject) -> TaskSupport:
        """The extension offers everything but a list."""
        extensions = capabilities.get("extensions")
        offered = isinstance(extensions, dict) and isinstance(extensions.get(TASKS_EXTENSION), dict)
        return cls(tasks=offered, list=False, cancel=offered, tool_calls=offered, update=offered)

    def offered(self) -> tuple[str, ...]:
        """For messages."""
        flags = (("get", self.tasks), ("list", self.list), ("cancel", self.cancel))
        return tuple(name for name, offered in flags if offered)


@dataclass(frozen=True)
class ServerInfo:
    name: str
    version: str
    protocol_version: str
    era: str
    """`legacy` (2025-11-25) or `modern` (2026-07-28): for display; code never branches on it."""
    capabilities: JsonObject
    task_support: TaskSupport
    instructions: str | None = None
    title: str | None = None
    supported_versions: tuple[str, ...] = ()

    @classmethod
    def from_result(
        cls,
        result: JsonObject,
        info: object,
        era: str,
        version: str,
        support: TaskSupport,
        supported: tuple[str, ...] = (),
    ) -> ServerInfo:
        """`info`: the result's `serverInfo`, wherever it keeps it."""
        identity: JsonObject = info if isinstance(info, dict) else {}
        title, instructions = identity.get("title"), result.get("instructions")
        return cls(
            name=str(identity.get("name", "")),
            version=str(identity.get("version", "")),
            title=title if isinstance(title, str) else None,
            protocol_version=version,
            era=era,
            capabilities=result["capabilities"],
            task_support=support,
            instructions=instructions if isinstance(instructions, str) else None,
            supported_versions=supported,
        )

    @property
    def extensions(self) -> tuple[str, ...]:
        extensions = self.capabilities.get("extensions")
        return tuple(extensions) if isinstance(extensions, dict) else ()


def modern_meta() -> JsonObject:
    return {
        META_PROTOCOL_VERSION: MODERN_VERSION,
        # Elicitation: a task may ask for input, which `mcptask answer` gives (form or URL).
        META_CLIENT_CAPABILITIES: {
            "extensions": {TASKS_EXTENSION: {}},
            "elicitation": {"form": {}, "url": {}},
        },
        META_CLIENT_INFO: dict(CLIENT_INFO),
    }


_SENTINEL_PREFIX, _SENTINEL_SUFFIX = "=?base64?", "?="


def encode_header_value(value: str) -> str:
    """A value for `Mcp-Name` (and the like): as is when header-safe (printable ASCII, not
    padded, not shaped like the sentinel), else the Base64 sentinel."""
    safe = (
        value != ""
        and all(0x20 <= ord(char) <= 0x7E for char in value)
        and value == value.strip()
        and not (value.startswith(_SENTINEL_PREFIX) and value.endswith(_SENTINEL_SUFFIX))
    )
    if safe:
        return value
    encoded = base64.b64encode(value.encode("utf-8")).decode("ascii")
    return f"{_SENTINEL_PREFIX}{encoded}{_SENTINEL_SUFFIX}"

"""Task handles as the official tasks library saves them (`@modelcontextprotocol/ext-tasks`,
`SerializedTaskReference`), written out from the record and taken into it. An endpoint id
(`NAMESPACE:v1:sha256:HEX`) cannot be traced back to a server, so the user names the server;
a handle is taken in only once `tasks/get` shows the server knows its task."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from mcptask.client.session import McpClient
from mcptask.errors import ExitCode, RpcError, TaskNotFound, UsageError
from mcptask.protocol.jsonrpc import JsonObject

NAMESPACE = "mcptask"
ORIGINAL_OPERATION = "tools/call"  # the one task-eligible method mcptask sends


def endpoint_id(url: str | None, command: str | None) -> str:
    """mcptask's endpoint id of a server: namespace `mcptask`, descriptor `{"transport":
    "streamable-http", "url": URL}` or `{"transport": "stdio", "command": COMMAND}`, hashed
    the library's way (sorted keys, compact JSON, SHA-256)."""
    descriptor = (
        {"transport": "streamable-http", "url": url}
        if url
        else {"transport": "stdio", "command": command}
    )
    import hashlib  # here: OpenSSL's load is paid by the commands that need it only

    canonical = json.dumps(descriptor, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return f"{NAMESPACE}:v1:sha256:{hashlib.sha256(canonical.encode()).hexdigest()}"


def export_handles(client: McpClient, task_ids: list[str], endpoint: str) -> list[JsonObject]:
    generation = client.era.handle_generation
    return [
        {
            "endpointId": endpoint,
            "generation": generation,
            "taskId": task_id,
            "originalOperation": ORIGINAL_OPERATION,
        }
        for task_id in task_ids
    ]


def read_handles(text: str, source: str) -> list[JsonObject]:
    """Serialized task references from JSON text: one, a list, or one per line (JSONL);
    UsageError naming the source (and the handle) when they are not."""
    try:
        try:
            parsed = json.loads(text)
            handles = parsed if isinstance(parsed, list) else [parsed]
        except ValueError:
            handles = [json.loads(line) for line in text.splitlines() if line.strip()]
    except ValueError as exc:
        raise UsageError(f"{source} is not JSON nor JSON lines ({exc})") from None
    except RecursionError:  # the JSON, or one of its lines
        raise UsageError(f"{source} is nested too deeply") from None
    for number, handle in enumerate(handles, 1):
        problem = _problem(handle)
        if problem is not None:
            raise UsageError(f"{source}: handle {number} is not a task reference: {problem}")
    if not handles:
        raise UsageError(f"{source} holds no task handle")
    return handles


def _problem(handle: object) -> str | None:
    if not isinstance(handle, dict):
        return "not an object"
    for key in ("endpointId", "taskId", "originalOperation"):
        if not isinstance(handle.get(key), str) or not handle[key]:
            return f"{key} must be a non-empty string"
    if handle.get("generation") not in ("v1", "v2"):
        return "generation must be v1 or v2"
    return None


@dataclass(frozen=True)
class ImportedHandle:
    """`outcome`: `recorded` (with the task's status), `gone`, or `error` (with the server's
    message)."""

    task_id: str
    outcome: str
    status: str | None = None
    message: str | None = None
    other_endpoint: bool = False  # the handle names another mcptask endpoint


@dataclass(frozen=True)
class ImportReport:
    endpoint: str
    handles: list[ImportedHandle]
    interrupted: bool = False

    @property
    def failed(self) -> bool:
        return any(handle.outcome != "recorded" for handle in self.handles)

    @property
    def exit_code(self) -> ExitCode:
        """Interrupted (130); a handle whose task is gone, or an error (6); else 0."""
        if self.interrupted:
            return ExitCode.INTERRUPTED
        return ExitCode.TASK_FAILED if self.failed else ExitCode.OK


def import_handles(
    client: McpClient,
    handles: list[JsonObject],
    endpoint: str,
    *,
    stop: Callable[[], bool] = lambda: False,
) -> ImportReport:
    """`tasks/get` for each handle's task (the client records the tasks)."""
    imported: list[ImportedHandle] = []
    for handle in handles:
        if stop():
            return ImportReport(endpoint, imported, interrupted=True)
        task_id = handle["taskId"]
        other = handle["endpointId"] != endpoint and handle["endpointId"].startswith(
            f"{NAMESPACE}:"
        )
        try:
            task = client.get_task(task_id)
        except TaskNotFound:
            imported.append(ImportedHandle(task_id, "gone", other_endpoint=other))
        except RpcError as exc:
            imported.append(ImportedHandle(task_id, "error", message=exc.message))
        else:
            imported.append(ImportedHandle(task_id, "recorded", task.status, other_endpoint=other))
    return ImportReport(endpoint, imported)

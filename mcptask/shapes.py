"""The JSON documents mcptask prints. The README documents them; they change only with notice."""

from __future__ import annotations

from mcptask.client import ServerInfo
from mcptask.operations.cancel import CancelReport
from mcptask.protocol import JsonObject, Task


def connect_document(
    server: ServerInfo, *, transport: str, target: str, session_id: str | None
) -> JsonObject:
    """`connect -o json`."""
    support = server.task_support
    return {
        "server": {"name": server.name, "version": server.version, "title": server.title},
        "protocolVersion": server.protocol_version,
        "era": server.era,
        "supportedVersions": list(server.supported_versions),
        "extensions": list(server.extensions),
        "transport": transport,
        "target": target,
        "sessionId": session_id,
        "tasks": {
            "supported": support.tasks,
            "list": support.list,
            "cancel": support.cancel,
            "toolCalls": support.tool_calls,
        },
        "capabilities": server.capabilities,
        "instructions": server.instructions,
    }


def list_document(tasks: list[Task]) -> JsonObject:
    """`list -o json`."""
    return {"tasks": [task.to_wire() for task in tasks], "count": len(tasks)}


def cancel_document(report: CancelReport) -> JsonObject:
    """`cancel -o json`: every task touched or skipped, the counts and the exit code."""
    return {
        "results": [result.to_json() for result in report.results],
        "summary": report.counts(),
        "interrupted": report.interrupted,
        "error": report.fatal.message if report.fatal is not None else None,
        "exitCode": int(report.exit_code()),
    }

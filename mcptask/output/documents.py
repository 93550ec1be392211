"""The JSON documents mcptask prints. The README documents them; they change only with notice."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mcptask.protocol.handshake import ServerInfo
from mcptask.protocol.jsonrpc import JsonObject

if TYPE_CHECKING:  # types only: a command's document must not import the other commands
    from mcptask.operations.outcomes import CancelReport
    from mcptask.operations.result import ResultReport
    from mcptask.operations.start import StartReport
    from mcptask.operations.watch import WatchedTask, WatchReport


def connect_document(
    server: ServerInfo,
    *,
    others: list[ServerInfo],
    transport: str,
    target: str,
    session_id: str | None,
) -> JsonObject:
    """`connect -o json`. `tasks` is what mcptask can do with this server in auto mode (any
    era it speaks); `eras` details each era, the negotiated one first."""
    eras = [server, *others]
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
            "supported": any(era.task_support.tasks for era in eras),
            "list": any(era.task_support.list for era in eras),
            "cancel": any(era.task_support.cancel for era in eras),
            "toolCalls": any(era.task_support.tool_calls for era in eras),
        },
        "eras": [
            {
                "protocolVersion": era.protocol_version,
                "era": era.era,
                "tasks": _task_support(era),
            }
            for era in eras
        ],
        "capabilities": server.capabilities,
        "instructions": server.instructions,
    }


def _task_support(server: ServerInfo) -> JsonObject:
    support = server.task_support
    return {
        "supported": support.tasks,
        "list": support.list,
        "cancel": support.cancel,
        "toolCalls": support.tool_calls,
    }


def start_document(report: StartReport) -> JsonObject:
    """`start -o json`: the task as the server sent it, or the result of a call it ran at once."""
    return {
        "tool": report.tool,
        "task": report.task.to_wire() if report.task is not None else None,
        "result": report.result,
        "sessionId": report.session_id,
    }


def result_document(report: ResultReport) -> JsonObject:
    """`result -o json`: the outcome, with the tool result or the error exactly as sent."""
    outcome = report.outcome
    return {
        "taskId": report.task.taskId,
        "status": report.task.status,
        "outcome": report.kind,
        "result": outcome.result if outcome is not None else None,
        "error": outcome.error if outcome is not None else None,
    }


def forget_document(forgotten: list[str], unknown: list[str], server: str | None) -> JsonObject:
    """`forget -o json`: what was dropped from the record, and what was not in it."""
    return {"forgotten": forgotten, "notRecorded": unknown, "server": server}


def cancel_document(report: CancelReport, exit_code: int) -> JsonObject:
    """`cancel -o json`: every task touched or skipped, the counts and the exit code."""
    return {
        "results": [result.to_json() for result in report.results],
        "summary": report.counts(),
        "interrupted": report.interrupted,
        "error": report.fatal.message if report.fatal is not None else None,
        "exitCode": exit_code,
    }


def watch_document(report: WatchReport) -> JsonObject:
    """`watch -o json`: every task as last seen, and how the watch ended."""
    return {
        "tasks": [_watched_document(watched) for watched in report.tasks],
        "interrupted": report.interrupted,
        "timedOut": report.timed_out,
    }


def _watched_document(watched: WatchedTask) -> JsonObject:
    document: JsonObject = watched.task.to_wire() if watched.task else {"taskId": watched.task_id}
    if watched.gone:
        document["gone"] = True
    return document

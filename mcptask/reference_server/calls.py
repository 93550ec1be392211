"""tools/list and tools/call as both eras serve them: long_job and the fixture tools.

What differs per era (whether a call becomes a task, the answer's shape, tool-level task
negotiation, multi round-trip requests) stays in the dispatchers; the rest is here once.
"""

from __future__ import annotations

from collections.abc import Mapping

from mcptask.reference_server.fixtures import FixtureTool, StartTask, launch
from mcptask.reference_server.jsonrpc import INVALID_PARAMS, JsonObject, JsonRpcError
from mcptask.reference_server.records import TaskView
from mcptask.reference_server.store import TaskStore
from mcptask.reference_server.tools import LONG_JOB, LongJob, parse_long_job, tool_definitions

Fixtures = Mapping[str, FixtureTool]


def tool_list(fixtures: Fixtures, tasks_enabled: bool, *, modern: bool) -> list[JsonObject]:
    """The tools/list entries: long_job, then the fixture tools the era offers."""
    tools = tool_definitions(tasks_enabled, modern=modern)
    tools += [
        tool.definition(modern=modern, tasks_enabled=tasks_enabled) for tool in fixtures.values()
    ]
    return tools


def resolve_tool(params: JsonObject, fixtures: Fixtures) -> FixtureTool | LongJob:
    """The fixture tool a tools/call names, or its parsed long_job arguments; -32602 for an
    unknown tool or bad long_job arguments."""
    name = params.get("name")
    fixture = fixtures.get(name) if isinstance(name, str) else None
    if fixture is not None:
        return fixture
    if name != LONG_JOB:
        raise JsonRpcError(INVALID_PARAMS, f"Unknown tool: {name}")
    try:
        return parse_long_job(params.get("arguments"))
    except ValueError as exc:
        raise JsonRpcError(INVALID_PARAMS, f"Invalid arguments for {LONG_JOB}: {exc}") from None


def start_long_job(
    store: TaskStore, job: LongJob, *, ttl_ms: int | None, owner: str | None = None
) -> TaskView:
    """The task of a long_job call: it follows the job's script from now."""
    return store.create(
        status_message=job.start_message,
        ttl_ms=ttl_ms,
        owner=owner,
        steps=job.steps,
        on_cancel=job.on_cancel,
        await_input=job.await_input,
    )


def fixture_arguments(params: JsonObject) -> JsonObject:
    """params.arguments of a fixture call (default {}); -32602 unless an object."""
    arguments = params.get("arguments", {})
    if not isinstance(arguments, dict):
        raise JsonRpcError(INVALID_PARAMS, "arguments must be an object")
    return arguments


def progress_token(meta: object) -> str | int | None:
    """The progressToken of a request's _meta, when it is a valid one."""
    token = meta.get("progressToken") if isinstance(meta, dict) else None
    return token if isinstance(token, str | int) and not isinstance(token, bool) else None


def start_fixture_task(
    store: TaskStore, outcome: StartTask, *, ttl_ms: int | None, owner: str | None = None
) -> TaskView:
    """The task a fixture tool answered with; its work starts in a thread of its own."""
    view = store.create(status_message=outcome.message, ttl_ms=ttl_ms, owner=owner)
    launch(store, view.task_id, outcome.work)
    return view

"""A small MCP server built on the official MCP Python SDK (mcp==1.30.0) with tasks enabled.

It runs in its own virtual environment (see tests/interop/sdk_env.py), never in the project's.
Everything task-related is the SDK's own code: the low-level ``Server``,
``server.experimental.enable_tasks()`` (default ``InMemoryTaskStore`` and default handlers for
tasks/get, tasks/list, tasks/cancel and tasks/result) and ``ctx.experimental.run_task()``.

Modes:
  --http HOST:PORT   Streamable HTTP at http://HOST:PORT/mcp (PORT may be 0); prints exactly one
                     line "listening on http://HOST:PORT/mcp" to stdout once it accepts requests.
  --json-response    With --http: answer POSTs with application/json instead of SSE.
  --stdio            Newline-delimited JSON-RPC on stdin/stdout.

Tool ``long_job`` ({"seconds": number, "outcome": "completed"|"failed"}, task support
"optional"): called with ``params.task`` it creates a task that stays ``working`` for ``seconds``
and then ends ``completed`` or ``failed``; called without, it runs synchronously.

Tool ``ask_job`` (only with --ask-job; no arguments, task support "optional"): as a task,
asks the client through the SDK's ``ServerTaskContext.elicit()`` (a form with one text field,
``answer``: the task goes ``input_required`` and the SDK queues an ``elicitation/create`` that
its tasks/result handler delivers), then completes with "deployed ANSWER" (or "not deployed:
ACTION").

Seeding (tasks written straight into the task store at startup, before any session exists):
  --seed N           N working tasks with ids sdk-working-001 ... They carry no session scope:
                     every session can tasks/get and tasks/cancel them; the SDK never lists them.
  --seed-terminal    Also sdk-completed-001 (completed, with a result) and sdk-failed-001 (failed).
  --seed-listable N  stdio only: N working tasks whose ids embed the scope that this process's
                     single stdio session is given (a fixed scope, see FIXED_STDIO_SCOPE), so the
                     SDK's default tasks/list shows them. Ids are
                     5eed0000000000000000000000000000:00000000-0000-4000-8000-000000000001 ...
                     This pins the scope the SDK would otherwise draw at random; it is a harness
                     device, not SDK behaviour.
  --seed-ttl MS      ttl of seeded tasks in ms (default 3600000; "null" for unlimited).

Slowing it down:
  --latency MS       Delay every tasks/* request (get, list, cancel, result) by MS milliseconds
                     before the SDK's own handler runs, so that a client's bulk run takes long
                     enough to be interrupted. Other requests (initialize, tools/call) are not
                     delayed. Requests are still handled concurrently, as the SDK does.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import sys
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import mcp.types as types
import uvicorn
from mcp.server.experimental.task_context import ServerTaskContext
from mcp.server.experimental.task_support import TaskSupport
from mcp.server.lowlevel import Server
from mcp.server.session import ServerSession
from mcp.server.stdio import stdio_server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.experimental.tasks.helpers import is_terminal
from mcp.shared.experimental.tasks.in_memory_task_store import InMemoryTaskStore
from starlette.applications import Starlette
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

SERVER_NAME = "mcptask-interop-sdk"
TOOL_NAME = "long_job"
FIXED_STDIO_SCOPE = "5eed" + "0" * 28
# The tasks/* requests that --latency delays.
TASK_REQUEST_TYPES: tuple[type, ...] = (
    types.GetTaskRequest,
    types.ListTasksRequest,
    types.CancelTaskRequest,
    types.GetTaskPayloadRequest,
)

LONG_JOB_TOOL = types.Tool(
    name=TOOL_NAME,
    description="Stays working for `seconds`, then ends with `outcome`.",
    inputSchema={
        "type": "object",
        "properties": {
            "seconds": {"type": "number", "minimum": 0},
            "outcome": {"type": "string", "enum": ["completed", "failed"]},
        },
        "required": ["seconds"],
        "additionalProperties": False,
    },
    execution=types.ToolExecution(taskSupport=types.TASK_OPTIONAL),
)


ASK_TOOL_NAME = "ask_job"
ASK_JOB_TOOL = types.Tool(
    name=ASK_TOOL_NAME,
    description="As a task, asks which branch to deploy, then completes.",
    inputSchema={"type": "object", "properties": {}},
    execution=types.ToolExecution(taskSupport=types.TASK_OPTIONAL),
)


def seeded_working_id(n: int) -> str:
    return f"sdk-working-{n:03d}"


def seeded_listable_id(n: int) -> str:
    return f"{FIXED_STDIO_SCOPE}:00000000-0000-4000-8000-{n:012d}"


class SignallingTaskStore(InMemoryTaskStore):
    """The SDK's InMemoryTaskStore, plus a wake-up for running long_jobs on a status change.

    A long_job waits on ``changed(task_id)`` instead of re-reading the store on a timer: with
    hundreds of tasks working at once, timed reads (each one scans the whole store for expired
    tasks) would keep the event loop busy and slow every request down. The store's own
    ``wait_for_update`` is not used for this: it keeps one waiter per task, and the SDK's
    tasks/result handler relies on it.
    """

    def __init__(self) -> None:
        super().__init__()
        self._changed: dict[str, anyio.Event] = {}

    def changed(self, task_id: str) -> anyio.Event:
        """An event set at the next status change of ``task_id``."""
        return self._changed.setdefault(task_id, anyio.Event())

    async def notify_update(self, task_id: str) -> None:
        await super().notify_update(task_id)
        event = self._changed.pop(task_id, None)
        if event is not None:
            event.set()


def build_server(latency_ms: int = 0, *, ask: bool = False) -> tuple[Server[Any, Any], TaskSupport]:
    server: Server[Any, Any] = Server(SERVER_NAME, version="1.30.0-interop")
    store = SignallingTaskStore()
    with warnings.catch_warnings():
        # server.experimental is deprecated in 1.30.0 (tasks left the spec in 2.x).
        warnings.simplefilter("ignore", DeprecationWarning)
        support = server.experimental.enable_tasks(store=store)

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        return [LONG_JOB_TOOL, ASK_JOB_TOOL] if ask else [LONG_JOB_TOOL]

    @server.call_tool()
    async def call_tool(
        name: str, arguments: dict[str, Any]
    ) -> types.CallToolResult | types.CreateTaskResult:
        if name == ASK_TOOL_NAME and ask:
            return await ask_job(server)
        if name != TOOL_NAME:
            raise ValueError(f"Unknown tool: {name}")
        seconds = float(arguments.get("seconds", 0))
        outcome = str(arguments.get("outcome", "completed"))
        ctx = server.request_context

        if not ctx.experimental.is_task:
            await anyio.sleep(seconds)
            return _tool_result(seconds, outcome)

        async def work(task: ServerTaskContext) -> types.CallToolResult:
            # Run for `seconds` unless the task is ended from outside first (tasks/cancel).
            with anyio.move_on_after(seconds):
                while True:
                    changed = store.changed(task.task_id)  # taken before looking: no lost wake-up
                    if await ended_elsewhere(store, task):
                        break
                    await changed.wait()
            # Looked at once more after the time is up: a cancel (or the ttl purge) may have
            # come at the very end, and a purge sends no wake-up.
            if await ended_elsewhere(store, task):
                return _tool_result(seconds, outcome)
            if outcome == "failed":
                await task.fail(f"long_job failed after {seconds:g}s as requested")
            return _tool_result(seconds, outcome)

        return await ctx.experimental.run_task(work)

    if latency_ms:
        add_latency(server, latency_ms / 1000)
    return server, support


async def ask_job(server: Server[Any, Any]) -> types.CallToolResult | types.CreateTaskResult:
    """ask_job: a task that elicits its answer through the SDK's task message queue."""
    ctx = server.request_context
    if not ctx.experimental.is_task:
        raise ValueError("ask_job runs only as a task")

    async def work(task: ServerTaskContext) -> types.CallToolResult:
        schema = {
            "type": "object",
            "properties": {"answer": {"type": "string"}},
            "required": ["answer"],
        }
        answered = await task.elicit("Which branch?", schema)  # type: ignore[arg-type]
        if answered.action == "accept" and answered.content is not None:
            text = f"deployed {answered.content.get('answer')}"
        else:
            text = f"not deployed: {answered.action}"
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    return await ctx.experimental.run_task(work)


async def ended_elsewhere(store: InMemoryTaskStore, task: ServerTaskContext) -> bool:
    """True when the task in the store is terminal (cancelled) or gone (purged at its ttl).

    run_task() decides whether to complete the task by looking at its own copy of it, which
    still says "working"; completing a cancelled task raises inside the session's task group
    and kills the whole session. `task.task` is that copy (not a snapshot), so this brings its
    status up to date: the task in the store is left exactly as the cancel left it.
    """
    current = await store.get_task(task.task_id)
    if current is not None and not is_terminal(current.status):
        return False
    task.task.status = current.status if current is not None else types.TASK_STATUS_CANCELLED
    return True


def add_latency(server: Server[Any, Any], seconds: float) -> None:
    """Delay every tasks/* request by ``seconds`` in front of the handler the SDK registered."""
    handlers = server.request_handlers
    for request_type in TASK_REQUEST_TYPES:
        handlers[request_type] = _delayed(handlers[request_type], seconds)


def _delayed(
    handler: Callable[[Any], Awaitable[types.ServerResult]], seconds: float
) -> Callable[[Any], Awaitable[types.ServerResult]]:
    async def delayed(request: Any) -> types.ServerResult:
        await anyio.sleep(seconds)
        return await handler(request)

    return delayed


def _tool_result(seconds: float, outcome: str) -> types.CallToolResult:
    return types.CallToolResult(
        content=[types.TextContent(type="text", text=f"long_job {outcome} after {seconds:g}s")],
        isError=outcome == "failed",
    )


async def seed_store(support: TaskSupport, args: argparse.Namespace) -> None:
    store = support.store
    metadata = types.TaskMetadata(ttl=args.seed_ttl)
    for n in range(1, args.seed + 1):
        await store.create_task(metadata, seeded_working_id(n))
    for n in range(1, args.seed_listable + 1):
        await store.create_task(metadata, seeded_listable_id(n))
    if args.seed_terminal:
        done = await store.create_task(metadata, "sdk-completed-001")
        await store.store_result(done.taskId, _tool_result(0, "completed"))
        await store.update_task(done.taskId, status=types.TASK_STATUS_COMPLETED)
        failed = await store.create_task(metadata, "sdk-failed-001")
        await store.update_task(
            failed.taskId, status=types.TASK_STATUS_FAILED, status_message="seeded failure"
        )


def pin_stdio_scope(support: TaskSupport) -> None:
    """Give the (single) stdio session a fixed task scope instead of a random one."""
    original = support.configure_session

    def configure_session(session: ServerSession, *, stateless: bool = False) -> None:
        session._experimental.task_session_scope = FIXED_STDIO_SCOPE
        original(session, stateless=stateless)

    support.configure_session = configure_session  # type: ignore[method-assign]


async def run_stdio(args: argparse.Namespace) -> None:
    server, support = build_server(args.latency, ask=args.ask_job)
    if args.seed_listable:
        pin_stdio_scope(support)
    await seed_store(support, args)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


class _ManagerApp:
    def __init__(self, manager: StreamableHTTPSessionManager) -> None:
        self.manager = manager

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self.manager.handle_request(scope, receive, send)


async def run_http(args: argparse.Namespace) -> None:
    host, _, port_text = args.http.rpartition(":")
    host = host.strip("[]") or "127.0.0.1"
    server, support = build_server(args.latency, ask=args.ask_job)
    manager = StreamableHTTPSessionManager(
        app=server,
        json_response=args.json_response,
        # The same DNS-rebinding protection FastMCP applies on localhost.
        security_settings=TransportSecuritySettings(
            enable_dns_rebinding_protection=True,
            allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
            allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
        ),
    )

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        await seed_store(support, args)
        async with manager.run():
            yield

    app = Starlette(routes=[Route("/mcp", endpoint=_ManagerApp(manager))], lifespan=lifespan)
    config = uvicorn.Config(
        app,
        host=host,
        port=int(port_text),
        log_level="warning",
        # Do not wait for ever for clients that keep a response stream open when stopped.
        timeout_graceful_shutdown=2,
    )
    http = uvicorn.Server(config)
    serving = asyncio.create_task(http.serve())
    while not http.started:
        if serving.done():
            await serving
            raise SystemExit("uvicorn stopped before it started")
        await asyncio.sleep(0.02)
    real_port = http.servers[0].sockets[0].getsockname()[1]
    shown_host = f"[{host}]" if ":" in host else host
    print(f"listening on http://{shown_host}:{real_port}/mcp", flush=True)
    await serving


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--http", metavar="HOST:PORT")
    mode.add_argument("--stdio", action="store_true")
    parser.add_argument("--json-response", action="store_true")
    parser.add_argument("--seed", type=int, default=0, metavar="N")
    parser.add_argument("--seed-listable", type=int, default=0, metavar="N")
    parser.add_argument("--seed-terminal", action="store_true")
    parser.add_argument(
        "--seed-ttl",
        type=lambda text: None if text == "null" else int(text),
        default=3_600_000,
        metavar="MS",
    )
    parser.add_argument("--latency", type=int, default=0, metavar="MS")
    parser.add_argument("--ask-job", action="store_true")
    args = parser.parse_args(argv)
    if args.latency < 0:
        parser.error("--latency must be 0 or more milliseconds")
    if args.seed_listable and not args.stdio:
        parser.error("--seed-listable only makes sense with --stdio (one session per process)")
    if args.json_response and not args.http:
        parser.error("--json-response needs --http")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    if args.stdio:
        anyio.run(run_stdio, args)
    else:
        asyncio.run(run_http(args))


if __name__ == "__main__":
    main()

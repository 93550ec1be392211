# mypy: ignore-errors
# (Runs in its own venv with fastmcp-tasks, which the project's venv does not have.)
"""A third-party MCP 2026-07-28 server with the io.modelcontextprotocol/tasks extension.

Built on FastMCP 4 + ``fastmcp-tasks`` (PyPI; SEP-2663 server runtime, in-memory ``memory://``
backend, no Redis needed). See README.md beside this file for the install recipe.

    <venv>/bin/python tests/thirdparty/ext_tasks_server.py [--port N] [--json-response]

Binds 127.0.0.1 (port 0 = a free port, the default), prints exactly one line
``listening on http://127.0.0.1:PORT/mcp`` on stdout, logs to stderr. Tools:

- ``long_job(seconds=30, outcome="completed")``: task-capable (mode optional): a client that
  negotiated the extension gets ``resultType: "task"``; it sleeps ``seconds`` and then returns
  text, or raises a tool error when ``outcome == "failed"``.
- ``required_job(seconds=30)``: task support ``required``.
- ``greet(name)``: plain synchronous tool.
- ``confirm_deploy(target)``: task support ``required``; asks whether to deploy (a form
  elicitation, FastMCP's guard pattern: the task waits in ``input_required`` until
  ``tasks/update`` answers), then says what it did.

The conformance runner's SEP-2663 fixtures are there too (``slow_compute``, ``failing_job``,
``protocol_error_job``), so ``@modelcontextprotocol/conformance`` 0.2.0's tasks-* scenarios
can be pointed at this server.
"""

from __future__ import annotations

import argparse
import asyncio
import socket
import sys
from typing import Literal

import mcp_types
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.utilities.tasks import TaskConfig
from fastmcp_tasks import TasksExtension

mcp = FastMCP("mcptask-thirdparty-ext-tasks")
mcp.add_extension(TasksExtension(url="memory://"))


@mcp.tool(task=True)
async def long_job(
    seconds: float = 30.0, outcome: Literal["completed", "failed"] = "completed"
) -> str:
    """Simulated long-running work; ends with `outcome` after `seconds`."""
    await asyncio.sleep(seconds)
    if outcome == "failed":
        raise ToolError(f"long_job failed after {seconds:g} s")
    return f"long_job completed after {seconds:g} s"


@mcp.tool(task=TaskConfig(mode="required"))
async def required_job(seconds: float = 30.0) -> str:
    """Like long_job, but only ever runs as a task."""
    await asyncio.sleep(seconds)
    return f"required_job completed after {seconds:g} s"


@mcp.tool(task=TaskConfig(mode="required"))
async def confirm_deploy(target: str, ctx: Context) -> str | mcp_types.InputRequiredResult:
    """Asks whether to deploy `target` (a form elicitation, the guard pattern), then says
    what it did."""
    answer = (ctx.input_responses or {}).get("confirm")
    if answer is None:
        schema = {
            "type": "object",
            "properties": {"confirm": {"type": "boolean", "title": "Deploy"}},
            "required": ["confirm"],
        }
        params = mcp_types.ElicitRequestFormParams(
            message=f"Deploy {target}?", requested_schema=schema
        )
        return mcp_types.InputRequiredResult(
            input_requests={"confirm": mcp_types.ElicitRequest(params=params)}
        )
    content = getattr(answer, "content", None) or {}
    if getattr(answer, "action", None) == "accept" and content.get("confirm") is True:
        return f"deployed {target}"
    return f"kept {target}: not confirmed"


@mcp.tool
def greet(name: str) -> str:
    """Synchronous tool: returns a greeting."""
    return f"Hello, {name}!"


# --- the conformance runner's tasks fixtures (0.2.0-alpha.12) ---------------------------------


@mcp.tool(task=True)
async def slow_compute(seconds: float = 1.0, label: str = "") -> str:
    """Sleeps `seconds`, then returns a result."""
    await asyncio.sleep(seconds)
    return f"slow_compute {label} done after {seconds:g} s".replace("  ", " ")


@mcp.tool(task=TaskConfig(mode="required"))
async def failing_job() -> str:
    """Returns a tool execution error after about a second."""
    await asyncio.sleep(1.0)
    raise ToolError("failing_job always fails")


@mcp.tool(task=True)
async def protocol_error_job() -> str:
    """Fails with a non-tool exception (a protocol-level error)."""
    await asyncio.sleep(0.2)
    raise RuntimeError("protocol_error_job crashed")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (0: a free one)")
    parser.add_argument(
        "--json-response", action="store_true", help="answer POSTs with JSON instead of SSE"
    )
    args = parser.parse_args()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", args.port))
    sock.listen(128)
    port = sock.getsockname()[1]
    print(f"listening on http://127.0.0.1:{port}/mcp", flush=True)
    asyncio.run(
        mcp.run_http_async(
            show_banner=False,
            host="127.0.0.1",
            port=port,
            path="/mcp",
            json_response=args.json_response or None,
            log_level="warning",
            sockets=[sock],
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())

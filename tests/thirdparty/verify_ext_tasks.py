"""Check a 2026-07-28 server's io.modelcontextprotocol/tasks extension with raw HTTP (httpx).

    .venv/bin/python tests/thirdparty/verify_ext_tasks.py http://127.0.0.1:PORT/mcp \
        [--tool long_job] [--arguments '{"seconds": 60}']

Stateless 2026-07-28 requests (no initialize, no session): every request carries
``MCP-Protocol-Version``, ``Mcp-Method`` (and ``Mcp-Name`` for tools/call and tasks/*) and the
client's version, info and capabilities in ``params._meta``. Steps, each printed:

1. server/discover: the extension is under ``capabilities.extensions``;
2. tools/call of the tool: ``resultType: "task"`` with a ``taskId`` and ``status: "working"``;
3. tasks/get: ``working``;
4. tasks/cancel: an empty ``{resultType: "complete"}`` ack;
5. tasks/get (polled for up to 10 s): ``cancelled``.

Exits 0 when every step held, 1 otherwise.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
import time
from typing import Any

import httpx

JSON = dict[str, Any]
PROTOCOL_VERSION = "2026-07-28"
EXTENSION = "io.modelcontextprotocol/tasks"
_ids = itertools.count(1)


class StepFailed(AssertionError):
    """A step's answer was not what the extension requires."""


def _meta(with_extension: bool = True) -> JSON:
    capabilities: JSON = {"extensions": {EXTENSION: {}}} if with_extension else {}
    return {
        "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "mcptask-verify", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    }


def _answer(response: httpx.Response) -> JSON:
    kind = response.headers.get("content-type", "").split(";")[0].strip()
    if kind == "text/event-stream":
        messages = [
            json.loads(line[5:].strip())
            for line in response.text.splitlines()
            if line.startswith("data:") and line[5:].strip()
        ]
        answers: list[JSON] = [m for m in messages if "id" in m and "method" not in m]
        if not answers:
            raise StepFailed(f"no JSON-RPC answer in the SSE stream: {response.text[:500]}")
        return answers[-1]
    parsed: JSON = response.json()
    return parsed


def rpc(client: httpx.Client, url: str, method: str, params: JSON, name: str | None = None) -> JSON:
    """One stateless request; returns the JSON-RPC answer message (result or error)."""
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": PROTOCOL_VERSION,
        "Mcp-Method": method,
    }
    if name is not None:
        headers["Mcp-Name"] = name
    body = {"jsonrpc": "2.0", "id": next(_ids), "method": method, "params": params}
    response = client.post(url, json=body, headers=headers)
    answer = _answer(response)
    print(f"--> {method} {json.dumps(params.get('name') or params.get('taskId') or '')}")
    print(f"<-- HTTP {response.status_code} {json.dumps(answer)}")
    return answer


def _result(answer: JSON) -> JSON:
    if "error" in answer:
        raise StepFailed(f"JSON-RPC error: {answer['error']}")
    result: JSON = answer["result"]
    return result


def verify(url: str, tool: str, arguments: JSON) -> None:
    with httpx.Client(timeout=30.0) as client:
        discover = _result(rpc(client, url, "server/discover", {"_meta": _meta()}))
        extensions = discover.get("capabilities", {}).get("extensions", {})
        if EXTENSION not in extensions:
            raise StepFailed(f"server/discover does not advertise {EXTENSION}: {extensions}")
        if PROTOCOL_VERSION not in discover.get("supportedVersions", []):
            raise StepFailed(f"{PROTOCOL_VERSION} not in supportedVersions")

        params = {"name": tool, "arguments": arguments, "_meta": _meta()}
        created = _result(rpc(client, url, "tools/call", params, name=tool))
        if created.get("resultType") != "task" or "taskId" not in created:
            raise StepFailed(f"tools/call did not create a task: {created}")
        if "task" in created:
            raise StepFailed("CreateTaskResult has a nested 'task' wrapper")
        task_id = str(created["taskId"])

        task_params = {"taskId": task_id, "_meta": _meta()}
        status = _result(rpc(client, url, "tasks/get", task_params, name=task_id))["status"]
        if status != "working":
            raise StepFailed(f"tasks/get: status {status!r}, expected 'working'")

        ack = _result(rpc(client, url, "tasks/cancel", task_params, name=task_id))
        if ack.get("resultType") != "complete" or "status" in ack:
            raise StepFailed(f"tasks/cancel: expected an empty complete ack, got {ack}")

        deadline = time.monotonic() + 10.0
        while True:
            status = _result(rpc(client, url, "tasks/get", task_params, name=task_id))["status"]
            if status == "cancelled":
                break
            if time.monotonic() > deadline:
                raise StepFailed(f"task still {status!r} 10 s after tasks/cancel")
            time.sleep(0.5)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("url")
    parser.add_argument("--tool", default="long_job")
    parser.add_argument("--arguments", default='{"seconds": 60}', help="JSON object")
    args = parser.parse_args(argv)
    try:
        verify(args.url, args.tool, json.loads(args.arguments))
    except (StepFailed, httpx.HTTPError, KeyError, ValueError) as error:
        print(f"FAILED: {error}")
        return 1
    print("OK: discover advertises the extension; tools/call -> task; tasks/get; tasks/cancel")
    return 0


if __name__ == "__main__":
    sys.exit(main())

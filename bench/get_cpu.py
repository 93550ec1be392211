"""Client CPU per `tasks/get`: mcptask's client against the raw floor, httpx alone doing the
same gets (what `watch` pays per task on a server without a list, and `cancel` per
confirmation).

Each measurement is a child process (`--child`) that connects, makes `--warmup` gets, then
reads its own CPU time (bench/measure.py `cpu_seconds`: utime + stime from /proc), makes
`--gets` more and reads it again: start-up and the handshake are left out. The mcptask child
builds its client as the command line does (`connected_client`: the HTTP transport with the
sign-in flow of `--auth auto` and a token cache, retries, and the record of known tasks as
record, in a temporary state directory); the raw child is a kept-alive `httpx.Client`
posting the same JSON-RPC body and reading it with `json.loads` (SSE: the last `data:` line).
Variants: 2025-11-25 with JSON and with SSE answers, 2026-07-28 (the era without a list, whose
requests carry `_meta` and `Mcp-Method`/`Mcp-Name` headers) with JSON answers. Raw and mcptask
run alternately, `--rounds` times each, against one reference server per variant.

    python bench/get_cpu.py [--gets 2000] [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parents[1]
if str(REPO_ROOT) not in sys.path:  # run as `python bench/NAME.py`: share the test helpers
    sys.path.insert(0, str(REPO_ROOT))

from bench.measure import alternate, cpu_seconds, median  # noqa: E402
from tests.reference_server_process import start_reference_server, stop_process  # noqa: E402

TASK_ID = "working-001"
LEGACY, MODERN = "2025-11-25", "2026-07-28"
VARIANTS = {
    "2025-11-25, json": ("legacy", "json", LEGACY),
    "2025-11-25, sse": ("legacy", "sse", LEGACY),
    "2026-07-28, json": ("modern", "json", MODERN),
}


def raw_gets(url: str, protocol: str, warmup: int, gets: int) -> float:
    """CPU seconds of `gets` tasks/get made with httpx alone (after `warmup` of them)."""
    import httpx

    headers = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
    client = httpx.Client(timeout=60)
    params: dict[str, Any] = {"taskId": TASK_ID}
    if protocol == LEGACY:
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": LEGACY,
                "capabilities": {"tasks": {}},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        }
        answer = client.post(url, content=json.dumps(init), headers=headers)
        headers["Mcp-Session-Id"] = answer.headers["Mcp-Session-Id"]
        headers["MCP-Protocol-Version"] = LEGACY
    else:
        headers.update({"MCP-Protocol-Version": MODERN, "Mcp-Method": "tasks/get"})
        headers["Mcp-Name"] = TASK_ID
        params["_meta"] = {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {
                "extensions": {"io.modelcontextprotocol/tasks": {}}
            },
        }

    def get(request_id: int) -> None:
        body = {"jsonrpc": "2.0", "id": request_id, "method": "tasks/get", "params": params}
        response = client.post(url, content=json.dumps(body), headers=headers)
        text = response.text
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            text = [
                line for line in text.splitlines() if line.startswith("data:") and len(line) > 6
            ][-1][5:]
        if json.loads(text)["result"]["taskId"] != TASK_ID:
            raise SystemExit("raw: not the task asked for")

    for n in range(warmup):
        get(n + 1)
    before = cpu_seconds(os.getpid())
    for n in range(gets):
        get(warmup + n + 1)
    return cpu_seconds(os.getpid()) - before


def mcptask_gets(url: str, protocol: str, warmup: int, gets: int) -> float:
    """CPU seconds of `gets` McpClient.get_task calls, the client built as the CLI builds it."""
    from mcptask.auth.config import AuthSettings
    from mcptask.client.connection import ConnectionSettings, connected_client
    from mcptask.client.exchange import RetryPolicy
    from mcptask.store.identity import ServerIdentity
    from mcptask.store.known_tasks import KnownTasks

    with tempfile.TemporaryDirectory() as state:
        auth = AuthSettings(cache_path=Path(state, "tokens.json"))
        settings = ConnectionSettings(url=url, protocol=protocol, auth=auth)
        identity = ServerIdentity.for_url(url)
        record = KnownTasks.open(identity, {"MCPTASK_STATE_DIR": state}, on_failure=print)
        with connected_client(settings, retry=RetryPolicy(), record=record) as client:
            for _ in range(warmup):
                client.get_task(TASK_ID)
            before = cpu_seconds(os.getpid())
            for _ in range(gets):
                if client.get_task(TASK_ID).taskId != TASK_ID:
                    raise SystemExit("mcptask: not the task asked for")
            spent = cpu_seconds(os.getpid()) - before
        record.close()
    return spent


def child(kind: str, url: str, protocol: str, warmup: int, gets: int) -> int:
    spent = (raw_gets if kind == "raw" else mcptask_gets)(url, protocol, warmup, gets)
    print(json.dumps({"cpu": spent}))
    return 0


def measure(kind: str, url: str, protocol: str, warmup: int, gets: int) -> float:
    argv = [sys.executable, __file__, "--child", kind, url, protocol, str(warmup), str(gets)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPTASK_")}
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False, timeout=600)
    if done.returncode != 0:
        raise SystemExit(f"{kind} child exited {done.returncode}: {done.stderr[-600:]}")
    return float(json.loads(done.stdout.strip().splitlines()[-1])["cpu"]) / gets


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        kind, url, protocol, warmup, gets = sys.argv[2:7]
        return child(kind, url, protocol, int(warmup), int(gets))
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--gets", type=int, default=2000)
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print(f"client CPU per tasks/get, median of {args.rounds} rounds of {args.gets} gets")
    for title, (eras, answer, protocol) in VARIANTS.items():
        url, server = start_reference_server(
            "--seed", "working=3", "--protocol-eras", eras, "--answer", answer
        )
        try:

            def variant(kind: str, url: str = url, protocol: str = protocol) -> float:
                return measure(kind, url, protocol, args.warmup, args.gets)

            samples = alternate(
                {"raw": lambda: variant("raw"), "mcptask": lambda: variant("mcptask")},
                args.rounds,
            )
        finally:
            stop_process(server)
        raw, ours = median(samples["raw"]), median(samples["mcptask"])
        print(
            f"  {title:<20} raw {raw * 1e3:6.3f} ms   mcptask {ours * 1e3:6.3f} ms   "
            f"{ours / raw:5.2f}x raw"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The raw floor the benches measure mcptask against: the same MCP requests, made with httpx
and nothing else (no mcptask import, no validation, no output formatting).

    python bench/raw_client.py get URL TASK_ID            initialize, tasks/get, DELETE
    python bench/raw_client.py cancel URL TASK_ID         initialize, tasks/cancel, DELETE
    python bench/raw_client.py bulk URL [--no-wait]       initialize, every tasks/list page,
                                                          then per working task tasks/cancel
                                                          and (unless --no-wait) tasks/get
    python bench/raw_client.py bulk-many URL URL...       `bulk` on every URL at once, one thread
                                                          each, in this one process
    python bench/raw_client.py list URL                   initialize, every page, one JSON
                                                          line per task on stdout
    python bench/raw_client.py watch URL [--interval S]   initialize, then every S seconds
                                                          (default 1) every page, one JSON
                                                          line per task whose status changed
                                                          (first sight included); until killed

`--session ID` joins that session instead of opening one (and does not DELETE it).

One kept-alive connection, 2025-11-25, JSON or SSE answers (whatever the server sends). It
prints nothing but what `list` asks for; a failed request exits 1.
"""

from __future__ import annotations

import json
import sys
import threading
import time
from typing import Any

import httpx

HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


class Raw:
    """One session over one connection."""

    def __init__(self, url: str, session: str | None = None) -> None:
        self.url = url
        self.client = httpx.Client(timeout=120)
        self.headers = dict(HEADERS)
        self.next_id = 0
        self.joined = session is not None
        if session is not None:
            self.headers.update({"Mcp-Session-Id": session, "MCP-Protocol-Version": "2025-11-25"})
            return
        answer = self.call(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tasks": {}},
                "clientInfo": {"name": "raw", "version": "0"},
            },
        )
        assert "protocolVersion" in answer
        self.headers["MCP-Protocol-Version"] = "2025-11-25"
        self.client.post(
            url,
            content=b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
            headers=self.headers,
        )

    def call(self, method: str, params: dict[str, Any]) -> Any:
        self.next_id += 1
        body = json.dumps(
            {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        )
        response = self.client.post(self.url, content=body, headers=self.headers)
        if "Mcp-Session-Id" in response.headers:
            self.headers["Mcp-Session-Id"] = response.headers["Mcp-Session-Id"]
        text = response.text
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            # The last data line is the response (notifications, if any, come before it).
            text = [
                line for line in text.splitlines() if line.startswith("data:") and len(line) > 6
            ][-1][5:]
        message = json.loads(text)
        if "error" in message:
            raise SystemExit(f"{method}: {message['error']}")
        return message["result"]

    def pages(self) -> Any:
        cursor = None
        while True:
            page = self.call("tasks/list", {"cursor": cursor} if cursor else {})
            yield from page["tasks"]
            cursor = page.get("nextCursor")
            if not cursor:
                return

    def close(self) -> None:
        if not self.joined:
            self.client.delete(self.url, headers=self.headers)
        self.client.close()


def bulk(raw: Raw, *, wait: bool) -> None:
    working = [task["taskId"] for task in raw.pages() if task["status"] == "working"]
    for task_id in working:
        raw.call("tasks/cancel", {"taskId": task_id})
        if wait:
            raw.call("tasks/get", {"taskId": task_id})


def bulk_many(urls: list[str]) -> int:
    """`bulk` on every server at once, one thread each, as mcptask runs several servers."""
    failures: list[BaseException] = []

    def one(url: str) -> None:
        try:
            raw = Raw(url)
            bulk(raw, wait=True)
            raw.close()
        except BaseException as exc:  # SystemExit too (an error answer): said, and exit 1
            sys.stderr.write(f"{url}: {exc}\n")
            failures.append(exc)

    threads = [threading.Thread(target=one, args=(url,)) for url in urls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return 1 if failures else 0


def main(argv: list[str]) -> int:
    if argv[0] == "bulk-many":
        return bulk_many(argv[1:])
    command, url, rest = argv[0], argv[1], argv[2:]
    session = rest[rest.index("--session") + 1] if "--session" in rest else None
    raw = Raw(url, session)
    if command == "get":
        raw.call("tasks/get", {"taskId": rest[0]})
    elif command == "cancel":
        raw.call("tasks/cancel", {"taskId": rest[0]})
    elif command == "bulk":
        bulk(raw, wait="--no-wait" not in rest)
    elif command == "list":
        out = sys.stdout
        for task in raw.pages():
            out.write(json.dumps(task) + "\n")
    elif command == "watch":
        interval = float(rest[rest.index("--interval") + 1]) if "--interval" in rest else 1.0
        last: dict[str, Any] = {}
        while True:
            for task in raw.pages():
                if last.get(task["taskId"]) != task["status"]:
                    last[task["taskId"]] = task["status"]
                    sys.stdout.write(json.dumps(task) + "\n")
            sys.stdout.flush()
            time.sleep(interval)
    raw.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

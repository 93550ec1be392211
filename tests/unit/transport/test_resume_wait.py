"""A stream that ends early is resumed after its `retry:` wait, never past the deadline."""

from __future__ import annotations

import httpx

from mcptask.transport.http import HttpTransport


def test_the_resume_wait_never_outlasts_the_timeout() -> None:
    def server(request: httpx.Request) -> httpx.Response:
        sse = {"Content-Type": "text/event-stream"}
        if request.method == "POST":  # ends before the answer, asking for a 30 s wait
            return httpx.Response(200, headers=sse, content=b"id: 1\nretry: 30000\ndata:\n\n")
        answer = b'id: 2\ndata: {"jsonrpc":"2.0","id":1,"result":{}}\n\n'
        return httpx.Response(200, headers=sse, content=answer)

    waits: list[float] = []
    transport = HttpTransport(
        "http://127.0.0.1:9/mcp",
        timeout=2.0,
        transport=httpx.MockTransport(server),
        sleep=waits.append,
    )
    answer = transport.request({"jsonrpc": "2.0", "id": 1, "method": "tasks/get"})
    transport.close()
    assert answer["result"] == {}
    assert len(waits) == 1
    assert 0 < waits[0] <= 2.0

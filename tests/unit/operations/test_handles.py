"""Task handles of the official tasks library: endpoint ids computed its way, and a file of
handles read strictly (one, a list, or JSON lines; anything else named by its number)."""

from __future__ import annotations

import json

import pytest

from mcptask.errors import UsageError
from mcptask.operations.handles import endpoint_id, read_handles

HANDLE = {
    "endpointId": "agent:v1:sha256:" + "0" * 64,
    "generation": "v2",
    "taskId": "t-1",
    "originalOperation": "tools/call",
}


def test_endpoint_ids_digest_the_sorted_compact_descriptor() -> None:
    # The value createTaskSessionEndpointId("mcptask", {transport, url}) gives (ext-tasks
    # 0.2.2, checked against the library itself in tests/conformance/test_ext_tasks_handles.py).
    assert endpoint_id("http://127.0.0.1:1234/mcp", None) == (
        "mcptask:v1:sha256:c6eb7e493f4f1378776474fa27fe412fc527d0c8acbb3e165d09ae4ac15afe78"
    )
    assert endpoint_id(None, "srv --stdio") != endpoint_id(None, "srv  --stdio ")


@pytest.mark.parametrize(
    "text",
    [
        json.dumps(HANDLE),
        json.dumps([HANDLE, {**HANDLE, "taskId": "t-2"}]),
        json.dumps(HANDLE) + "\n" + json.dumps({**HANDLE, "taskId": "t-2"}) + "\n",
    ],
    ids=["one", "list", "jsonl"],
)
def test_one_a_list_or_json_lines(text: str) -> None:
    handles = read_handles(text, "f")
    assert handles[0] == HANDLE
    assert [handle["taskId"] for handle in handles] == ["t-1", "t-2"][: len(handles)]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[]", "holds no task handle"),
        ("{nope", "not JSON nor JSON lines"),
        (json.dumps([HANDLE, 3]), "handle 2 is not a task reference: not an object"),
        (json.dumps({**HANDLE, "generation": "v3"}), "generation must be v1 or v2"),
        (json.dumps({**HANDLE, "taskId": ""}), "taskId must be a non-empty string"),
    ],
)
def test_anything_else_is_one_line_naming_the_handle(text: str, message: str) -> None:
    with pytest.raises(UsageError, match=r"^f") as caught:
        read_handles(text, "f")
    assert message in caught.value.message

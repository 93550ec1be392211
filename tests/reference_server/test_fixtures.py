"""The conformance fixture tools (tests/conformance/fixtures, given as ServerConfig.tools),
driven in-process through both dispatchers: listing per era, the tasks fixtures of runner
0.2.0 (tasks, input, errors, multi round-trip requests), tool-level task negotiation of
2025-11-25, and the content, logging and progress fixtures of runner 0.1.16."""

from __future__ import annotations

import base64
import io
import struct
import wave
import zlib

import pytest

from mcptask.reference_server.cli_options import UsageError, parse_config
from tests.conformance.fixtures import (
    FIXTURES,
    JSON_SCHEMA_2020_12,
    PNG_BASE64,
    WAV_BASE64,
    FixtureTools,
    tools_of_era,
)
from tests.reference_server.conftest import MakeServer
from tests.reference_server.harness import JsonObject

RELATED_TASK = "io.modelcontextprotocol/related-task"
MODERN_ONLY = {"confirm_delete", "multi_input", "test_tool_with_task"}
# The fixture tools are on unless a test switches them off.
SERVER_DEFAULTS = {"tools": FixtureTools(FIXTURES)}


# -- listing and options ---------------------------------------------------------------------


def test_fixtures_are_off_by_default_and_listed_per_era(make: MakeServer) -> None:
    assert parse_config([]).tools is None
    with pytest.raises(UsageError):  # the test suite's, not the reference server's
        parse_config(["--conformance-fixtures"])
    plain = make(tools=None)
    assert [t["name"] for t in plain.modern.result("tools/list")["tools"]] == ["long_job"]
    assert [t["name"] for t in plain.legacy.result("tools/list")["tools"]] == ["long_job"]
    _, unoffered = plain.modern.error("tools/call", {"name": "greet", "arguments": {"name": "x"}})
    assert unoffered["code"] == -32602

    server = make()
    modern = {t["name"]: t for t in server.modern.result("tools/list")["tools"]}
    legacy = {t["name"]: t for t in server.legacy.result("tools/list")["tools"]}
    every = {tool.name for tool in FIXTURES}
    assert set(modern) == {"long_job"} | every - {"test_reconnection"}
    assert set(legacy) == {"long_job"} | every - MODERN_ONLY
    assert all("execution" not in tool for tool in modern.values())
    assert legacy["slow_compute"]["execution"] == {"taskSupport": "optional"}
    assert legacy["failing_job"]["execution"] == {"taskSupport": "required"}
    assert "execution" not in legacy["greet"]
    for tool in [*modern.values(), *legacy.values()]:
        assert tool["description"]
        assert tool["inputSchema"]["type"] == "object"
    assert modern["json_schema_2020_12_tool"]["inputSchema"] == JSON_SCHEMA_2020_12
    no_tasks = make(tasks_enabled=False)
    assert all(
        "execution" not in tool for tool in no_tasks.legacy.result("tools/list")["tools"][1:]
    )
    assert set(tools_of_era(FIXTURES, "legacy", True)) == every - MODERN_ONLY
    required = {"failing_job", "test_tool_with_task"}
    assert {t["name"] for t in no_tasks.modern.result("tools/list")["tools"]} == (
        {"long_job"} | every - {"test_reconnection"} - required
    )
    _, error = no_tasks.modern.error("tools/call", {"name": "failing_job", "arguments": {}})
    assert error["code"] == -32602  # not offered at all without tasks


# -- the 2025-11-25 era ------------------------------------------------------------------------


def test_legacy_tool_level_task_negotiation(make: MakeServer) -> None:
    server = make()
    error = server.legacy.error("tools/call", {"name": "failing_job", "arguments": {}})
    assert error["code"] == -32601
    error = server.legacy.error(
        "tools/call", {"name": "greet", "arguments": {"name": "x"}, "task": {}}
    )
    assert error["code"] == -32601
    assert server.legacy.result("tools/call", {"name": "greet", "arguments": {"name": "Bo"}})[
        "content"
    ] == [{"type": "text", "text": "Hello, Bo!"}]
    error = server.legacy.error(
        "tools/call", {"name": "slow_compute", "arguments": {}, "task": {"ttl": -1}}
    )
    assert error["code"] == -32602
    unknown = server.legacy.error("tools/call", {"name": "confirm_delete", "arguments": {}})
    assert unknown["code"] == -32602  # not offered in this era

    created = server.legacy.result(
        "tools/call",
        {
            "name": "slow_compute",
            "arguments": {"seconds": 0.01, "label": "L"},
            "task": {"ttl": 60000},
        },
    )
    task = created["task"]
    assert task["ttl"] == 60000
    assert "pollInterval" in task
    server.advance(0.01)
    result = server.legacy.result("tasks/result", {"taskId": task["taskId"]})
    assert result["content"][0]["text"] == "slow_compute L: done after 0.01 s"
    assert result["_meta"] == {RELATED_TASK: {"taskId": task["taskId"]}}

    failing = server.legacy.result(
        "tools/call", {"name": "failing_job", "arguments": {"seconds": 0}, "task": {}}
    )
    result = server.legacy.result("tasks/result", {"taskId": failing["task"]["taskId"]})
    assert result["isError"] is True

    broken = server.legacy.result(
        "tools/call", {"name": "protocol_error_job", "arguments": {"seconds": 0}, "task": {}}
    )
    error = server.legacy.error("tasks/result", {"taskId": broken["task"]["taskId"]})
    assert error["code"] == -32603  # tasks/result answers the request's own error

    # Without the tasks capability the task metadata is ignored, as for long_job.
    no_tasks = make(tasks_enabled=False)
    plain = no_tasks.legacy.result(
        "tools/call", {"name": "slow_compute", "arguments": {"seconds": 0}, "task": {}}
    )
    assert "task" not in plain
    assert plain["isError"] is False


def test_legacy_progress_and_log_notifications_ride_with_the_reply(
    make: MakeServer,
) -> None:
    server = make()
    reply = server.legacy.send(
        "tools/call",
        {"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": 5}},
    )
    progress = [m for m in reply.related if m["method"] == "notifications/progress"]
    assert [m["params"] for m in progress][-1] == {
        "progressToken": 5,
        "progress": 100,
        "total": 100,
        "message": "Done",
    }
    assert len(progress) == 3
    reply = server.legacy.send("tools/call", {"name": "test_tool_with_logging", "arguments": {}})
    logs = [m["params"]["data"] for m in reply.related if m["method"] == "notifications/message"]
    assert logs == [
        "handling tools/call",
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]


def test_closes_stream_only_for_test_reconnection(make: MakeServer) -> None:
    server = make()

    def call(name: str) -> JsonObject:
        return {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": name}}

    assert server.legacy.dispatcher.closes_stream(call("test_reconnection"))
    assert not server.legacy.dispatcher.closes_stream(call("greet"))
    assert not server.legacy.dispatcher.closes_stream({"jsonrpc": "2.0", "method": "tools/call"})
    assert not make(tools=None).legacy.dispatcher.closes_stream(call("test_reconnection"))
    result = server.legacy.result("tools/call", {"name": "test_reconnection"})
    assert result["content"][0]["text"] == "Reconnection test completed successfully"


# -- content fixtures ------------------------------------------------------------------------


def test_content_fixtures_return_valid_media(make: MakeServer) -> None:
    server = make()
    png = base64.b64decode(PNG_BASE64)
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    offset = 8
    kinds = []
    while offset < len(png):
        (length,) = struct.unpack(">I", png[offset : offset + 4])
        kind, data = png[offset + 4 : offset + 8], png[offset + 8 : offset + 8 + length]
        (crc,) = struct.unpack(">I", png[offset + 8 + length : offset + 12 + length])
        assert crc == zlib.crc32(kind + data)
        kinds.append(kind)
        offset += 12 + length
    assert kinds == [b"IHDR", b"IDAT", b"IEND"]
    with wave.open(io.BytesIO(base64.b64decode(WAV_BASE64))) as audio:
        assert (audio.getnchannels(), audio.getframerate(), audio.getnframes()) == (1, 8000, 800)

    image = server.modern.call("test_image_content")["content"]
    assert image == [{"type": "image", "data": PNG_BASE64, "mimeType": "image/png"}]
    audio_content = server.legacy.result("tools/call", {"name": "test_audio_content"})["content"]
    assert audio_content[0]["mimeType"] == "audio/wav"
    text = server.modern.call("test_simple_text")["content"][0]
    assert text == {"type": "text", "text": "This is a simple text response for testing."}
    resource = server.modern.call("test_embedded_resource")["content"][0]
    assert resource["resource"]["uri"] == "test://embedded-resource"
    mixed = server.modern.call("test_multiple_content_types")["content"]
    assert [block["type"] for block in mixed] == ["text", "image", "resource"]
    failure = server.modern.call("test_error_handling")
    assert failure["isError"] is True
    assert failure["content"][0]["text"]


def test_json_schema_tool_checks_its_arguments(make: MakeServer) -> None:
    server = make()
    echoed = server.modern.call("json_schema_2020_12_tool", {"name": "n", "address": {"city": "c"}})
    assert echoed["content"][0]["text"] == 'Received: {"address": {"city": "c"}, "name": "n"}'
    bad_arguments: list[JsonObject] = [
        {"extra": 1},
        {"name": 3},
        {"address": {"city": 4}},
        {"address": []},
    ]
    for bad in bad_arguments:
        _, error = server.modern.error(
            "tools/call", {"name": "json_schema_2020_12_tool", "arguments": bad}
        )
        assert error["code"] == -32602, bad

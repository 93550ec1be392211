"""Reading tasks tolerantly and writing header values exactly."""

from __future__ import annotations

import pytest

from mcptask.errors import (
    ProtocolViolation,
)
from mcptask.protocol.handshake import encode_header_value
from mcptask.protocol.tasks import Task


def test_tolerant_task_reading() -> None:
    wrapped = Task.from_result({"task": {"taskId": "w", "status": "working"}}, method="m")
    assert wrapped.taskId == "w"
    assert wrapped.ttl is None
    flat = Task.from_result({"taskId": "f", "status": "completed", "vendor": {"x": 1}}, method="m")
    assert flat.to_wire() == {"taskId": "f", "status": "completed", "vendor": {"x": 1}}
    with pytest.raises(ProtocolViolation, match="not a task"):
        Task.from_result({"status": "working"}, method="tasks/get")


def test_header_values_that_are_not_header_safe_use_the_base64_sentinel() -> None:
    assert encode_header_value("plain-id_1") == "plain-id_1"
    assert encode_header_value("Hello, 世界") == "=?base64?SGVsbG8sIOS4lueVjA==?="
    assert encode_header_value(" padded ") == "=?base64?IHBhZGRlZCA=?="
    assert encode_header_value("line1\nline2") == "=?base64?bGluZTEKbGluZTI=?="
    assert encode_header_value("=?base64?literal?=") == "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="

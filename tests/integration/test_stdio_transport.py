"""The stdio transport against tiny scripted servers (real pipes, a real child process): a
silence is a lost answer the client may ask again, a late answer is set aside, and a server
left writing what is no longer read is not left blocked."""

from __future__ import annotations

import shlex
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mcptask.client.exchange import RetryPolicy
from mcptask.client.session import McpClient
from mcptask.errors import AnswerLost, ProtocolViolation, ResponseTimeout
from mcptask.protocol.jsonrpc import request_message
from mcptask.transport.limits import ENV_MAX_ANSWER_BYTES
from mcptask.transport.stdio import StdioTransport
from tests.cli_process import run_mcptask

# Answers every request with its own id, except that the first one is answered only after
# the second has arrived (so: late, after the client gave up on it).
LATE_FIRST = """
import json, sys
held = None
for line in sys.stdin:
    message = json.loads(line)
    answer = {"jsonrpc": "2.0", "id": message["id"], "result": {"n": message["id"]}}
    if held is None and message["id"] == 1:
        held = answer
        continue
    if held is not None:
        print(json.dumps(held), flush=True)
        held = None
    print(json.dumps(answer), flush=True)
"""

# Writes one endless line (far larger than the client reads), and says what became of it.
FLOOD = """
import os, sys
sys.stdin.readline()
try:
    while True:
        os.write(1, b"x" * 65536)
except BrokenPipeError:
    os.write(2, b"broken pipe\\n")
    sys.exit(3)
"""

# Answers its first request, then answers every later one with an error whose id is null
# (as a server does for a line it cannot parse).
NULL_ID_AFTER_FIRST = """
import json, sys
for n, line in enumerate(sys.stdin):
    message = json.loads(line)
    if n == 0:
        answer = {"jsonrpc": "2.0", "id": message["id"], "result": {}}
    else:
        answer = {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "Parse error"}}
    print(json.dumps(answer), flush=True)
"""


def spawn(script: str, **kwargs: object) -> StdioTransport:
    return StdioTransport([sys.executable, "-c", textwrap.dedent(script)], **kwargs)  # type: ignore[arg-type]


def test_a_silent_server_is_a_lost_answer() -> None:
    assert issubclass(ResponseTimeout, AnswerLost)
    transport = spawn(LATE_FIRST, timeout=0.2)
    try:
        with pytest.raises(ResponseTimeout, match=r"did not answer tasks/get within 0\.2s"):
            transport.request(request_message(1, "tasks/get", {"taskId": "a"}))
        # The late answer to id 1 arrives with the answer to id 2: each goes to its own id.
        assert transport.request(request_message(2, "tasks/get", {})) == {
            "jsonrpc": "2.0",
            "id": 2,
            "result": {"n": 2},
        }
    finally:
        transport.close()


def test_an_idempotent_request_is_asked_again_after_a_silence() -> None:
    logged: list[str] = []
    transport = spawn(LATE_FIRST, timeout=0.2)
    client = McpClient(transport, retry=RetryPolicy(sleep=lambda _: None, log=logged.append))
    try:
        answer = client.request("tasks/get", {"taskId": "a"})
        assert answer["id"] == 2  # the second attempt, with a fresh id
        assert len(logged) == 1
        assert logged[0].startswith("retry 1/4 of tasks/get")
    finally:
        transport.close()


def test_a_server_left_writing_an_oversized_line_gets_a_broken_pipe(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(ENV_MAX_ANSWER_BYTES, "65536")
    transport = spawn(FLOOD)
    try:
        with pytest.raises(ProtocolViolation, match="larger than 65536 bytes"):
            transport.request(request_message(1, "tasks/get", {}))
        # Not blocked on its write until close() terminates it: it saw the pipe close.
        assert transport._process.wait(timeout=30) == 3
        transport._stderr_reader.join(timeout=5)
        assert list(transport._stderr_tail) == ["broken pipe"]
    except subprocess.TimeoutExpired:
        pytest.fail("the server is still blocked writing to a pipe nobody reads")
    finally:
        transport.close()


def test_an_error_with_a_null_id_goes_to_the_request_still_waiting() -> None:
    transport = spawn(NULL_ID_AFTER_FIRST, timeout=10)
    try:
        assert transport.request(request_message(1, "ping", None))["result"] == {}
        # Not filed under id 1 (answered long ago), which left this one to time out.
        answer = transport.request(request_message(2, "ping", None))
        assert answer["error"] == {"code": -32700, "message": "Parse error"}
        assert transport._answers == {}  # nothing kept for anyone
    finally:
        transport.close()


def test_the_discover_probe_of_a_silent_server_follows_a_short_timeout(tmp_path: Path) -> None:
    # A server that reads every line and answers none: the probe gets --timeout (0.5 s),
    # not its usual 5 s, and then stands for the server's answer.
    script = tmp_path / "silent.py"
    script.write_text("import sys\nfor line in sys.stdin:\n    pass\n")
    server = shlex.join([sys.executable, str(script)])
    result = run_mcptask(
        "connect", "--server", server, "--protocol", "2026-07-28", "--timeout", "0.5"
    )
    result.assert_one_line_error(
        5, "does not speak 2026-07-28: the server did not answer server/discover within 0.5s"
    )

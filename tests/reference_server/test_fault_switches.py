"""The fault switches: their options, the deterministic draw, --die-after's count, and what
each kind puts on the wire, over the in-process HTTP and stdio transports (wire_harness.py;
no sleeping: a slow answer's delay goes to a recorded or test-controlled sleep)."""

from __future__ import annotations

import contextlib
import http.client
import json
import logging
import re
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import replace

import pytest

from mcptask.reference_server import main
from mcptask.reference_server.cli_options import UsageError, parse_config
from mcptask.reference_server.config import (
    DEFAULT_OVERSIZE_BYTES,
    STDIO_KINDS,
    AnswerMode,
    FaultKind,
    FaultSwitches,
)
from mcptask.reference_server.faults import PADDING_KEY, PIECE_BYTES, FaultPlan, padded
from tests.reference_server.harness import DEADLINE, JsonObject
from tests.reference_server.wire_harness import (
    http_server,
    request,
    sse_data,
    stdio_server,
    tasks_request,
)

WORKING = (("working", 3),)
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/tasks": {}}
    },
}


def only(kind: FaultKind, **settings: object) -> FaultSwitches:
    """Every task request gets this fault."""
    return replace(FaultSwitches(rate=1.0, kinds=(kind,), seed=1), **settings)  # type: ignore[arg-type]


# -- the command line ---------------------------------------------------------------------------


def test_the_switches_are_off_by_default() -> None:
    switches = parse_config([]).fault_switches
    assert switches == FaultSwitches()
    assert not switches.active
    assert switches.kinds == tuple(FaultKind)
    assert (switches.retry_after_s, switches.delay_ms) == (0, 2000)
    assert switches.oversize_bytes == DEFAULT_OVERSIZE_BYTES > 32 * 1024 * 1024


def test_the_switches_on_the_command_line() -> None:
    switches = parse_config(
        [
            "--fault-rate",
            "0.25",
            "--fault-kind",
            "busy,lost,busy",
            "--fault-seed",
            "9",
            "--fault-retry-after",
            "1",
            "--fault-delay",
            "150",
            "--fault-oversize",
            "4096",
            "--die-after",
            "12",
        ]
    ).fault_switches
    assert switches == FaultSwitches(
        rate=0.25,
        kinds=(FaultKind.BUSY, FaultKind.LOST),
        seed=9,
        retry_after_s=1,
        delay_ms=150,
        oversize_bytes=4096,
        die_after=12,
    )
    assert switches.active
    assert parse_config(["--stdio", "--fault-rate", "0.5"]).fault_switches.kinds == STDIO_KINDS
    assert parse_config(["--stdio", "--die-after", "1"]).fault_switches.active


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--fault-rate", "1.5"], "argument --fault-rate: invalid number from 0 to 1 value"),
        (["--fault-rate", "0.1", "--fault-kind", "flaky"], "unknown fault kind 'flaky'"),
        (["--fault-kind", "busy"], "--fault-kind and --fault-seed need --fault-rate"),
        (["--fault-seed", "3"], "--fault-kind and --fault-seed need --fault-rate"),
        (
            ["--stdio", "--fault-rate", "0.1", "--fault-kind", "lost,sse-cut,busy"],
            "--fault-kind sse-cut,busy: HTTP-only (stdio has reset, lost, slow, oversized)",
        ),
        (["--die-after", "0"], "argument --die-after: invalid integer >= 1 value"),
        (["--fault-delay", "-5"], "argument --fault-delay: invalid integer >= 0 value"),
    ],
)
def test_bad_switches_are_usage_errors(argv: list[str], message: str) -> None:
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_config(argv)


def test_help_documents_every_switch_and_kind(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    for option in (
        "--fault-rate",
        "--fault-kind",
        "--fault-seed",
        "--fault-retry-after",
        "--fault-delay",
        "--fault-oversize",
        "--die-after",
        "--drop-session-after",
        "--fault ",
        "--latency",
    ):
        assert option in text, option
    for kind in FaultKind:
        assert f"- {kind.value}:" in text, kind
    assert "tasks/get, tasks/list, tasks/cancel, tasks/result" in text
    assert "HTTP only" in text
    assert "stdio: the request line is dropped unhandled" in text
    assert "exits at once with status 70" in text


# -- the draw -----------------------------------------------------------------------------------


def task_requests(count: int) -> list[JsonObject]:
    return [tasks_request("tasks/get", f"t{n}") for n in range(count)]


def draws(plan: FaultPlan, messages: list[JsonObject]) -> list[FaultKind | None]:
    return [plan.draw(message) for message in messages]


def test_the_same_seed_and_requests_give_the_same_faults() -> None:
    switches = FaultSwitches(rate=0.3, seed=42)
    messages = task_requests(400)
    first = draws(FaultPlan(switches), messages)
    assert first == draws(FaultPlan(switches), messages)
    assert first != draws(FaultPlan(replace(switches, seed=43)), messages)
    assert 80 < sum(kind is not None for kind in first) < 160


def test_only_task_requests_draw() -> None:
    plain = task_requests(50)
    mixed: list[JsonObject] = []
    for message in plain:
        mixed.append(request("tools/list"))
        mixed.append({"jsonrpc": "2.0", "method": "notifications/tasks/status", "params": {}})
        mixed.append(message)
    switches = FaultSwitches(rate=0.5, seed=5)
    expected = draws(FaultPlan(switches), plain)
    got = draws(FaultPlan(switches), mixed)
    assert got[2::3] == expected, "other messages draw nothing and change nothing"
    assert set(got[0::3]) == set(got[1::3]) == {None}
    for method in ("tasks/list", "tasks/cancel", "tasks/result", "tasks/update"):
        assert FaultPlan(FaultSwitches(rate=1.0, seed=1)).draw(request(method)) is not None
    assert FaultPlan(FaultSwitches(rate=1.0, seed=1)).draw(request("initialize")) is None


def test_rate_zero_draws_nothing_and_a_mix_is_drawn_evenly() -> None:
    assert set(draws(FaultPlan(FaultSwitches(seed=1)), task_requests(100))) == {None}
    plan = FaultPlan(FaultSwitches(rate=1.0, seed=7))
    counts = Counter(draws(plan, task_requests(7000)))
    assert set(counts) == set(FaultKind)
    assert all(800 < count < 1200 for count in counts.values()), counts
    assert None not in counts, "at rate 1 every task request gets a fault"
    chosen = FaultPlan(FaultSwitches(rate=0.5, kinds=(FaultKind.LOST, FaultKind.SLOW), seed=3))
    assert set(draws(chosen, task_requests(200))) == {None, FaultKind.LOST, FaultKind.SLOW}


def test_without_a_seed_one_is_chosen_and_announced(caplog: pytest.LogCaptureFixture) -> None:
    plan = FaultPlan(FaultSwitches(rate=0.1, die_after=4))
    plan.announce()
    assert f"--fault-seed {plan.seed}" in caplog.text
    assert "dies at answer 4" in caplog.text
    again = FaultPlan(FaultSwitches(rate=0.1, seed=plan.seed))
    messages = task_requests(100)
    assert draws(plan, messages) == draws(again, messages)


def test_die_after_counts_answered_requests() -> None:
    plan = FaultPlan(FaultSwitches(die_after=3))
    assert plan.answering(request("initialize")) is None
    assert plan.answering(request("tasks/list")) is None
    last = tasks_request("tasks/cancel", "working-004")
    words = plan.answering(last)
    assert words == (
        f"--die-after 3: handled request 3, tasks/cancel working-004 (id {last['id']}), and "
        "exiting with status 70 without answering it"
    )
    assert FaultPlan(FaultSwitches()).answering(last) is None


def test_a_padded_answer_is_valid_and_larger_than_asked() -> None:
    response: JsonObject = {"jsonrpc": "2.0", "id": 4, "result": {"taskId": "t", "_meta": {"a": 1}}}
    answer = padded(response, 200_000)
    pieces: list[bytes] = []
    answer.write(pieces.append)
    body = b"".join(pieces)
    assert len(body) == answer.size == 200_001
    assert max(len(piece) for piece in pieces) <= PIECE_BYTES
    decoded = json.loads(body)
    padding = decoded["result"]["_meta"].pop(PADDING_KEY)
    assert set(padding) == {"x"}
    assert decoded == response
    error = padded({"jsonrpc": "2.0", "id": 5, "error": {"code": -1, "message": "m"}}, 10)
    error_pieces: list[bytes] = []
    error.write(error_pieces.append)
    assert json.loads(b"".join(error_pieces))["error"]["data"] == {PADDING_KEY: ""}


# -- HTTP ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(("kind", "status"), [(FaultKind.BUSY, 503), (FaultKind.RATE_LIMITED, 429)])
def test_busy_and_rate_limited_refuse_the_request_unhandled(kind: FaultKind, status: int) -> None:
    with http_server(seed=WORKING, fault_switches=only(kind, retry_after_s=1)) as server:
        session = server.initialize()
        cancel = tasks_request("tasks/cancel", "working-001")
        answer = server.post(cancel, session)
        assert answer.status_code == status
        assert answer.headers["Retry-After"] == "1"
        assert answer.json()["id"] == cancel["id"]
        assert "try again in 1 s" in answer.json()["error"]["message"]
        assert server.status("working-001") == "working"


def test_reset_aborts_the_connection_before_handling() -> None:
    with http_server(seed=WORKING, fault_switches=only(FaultKind.RESET)) as server:
        session = server.initialize()
        outcome = server.raw_post(tasks_request("tasks/cancel", "working-001"), session)
        assert isinstance(outcome, ConnectionResetError)
        assert server.status("working-001") == "working"


def test_lost_handles_the_request_then_closes_without_a_byte() -> None:
    with http_server(seed=WORKING, fault_switches=only(FaultKind.LOST)) as server:
        session = server.initialize()
        assert server.raw_post(tasks_request("tasks/cancel", "working-001"), session) == b""
        assert server.status("working-001") == "cancelled"


@pytest.mark.parametrize("answer", ["json", "sse"])
def test_sse_cut_delivers_the_response_on_the_resumed_stream(answer: str) -> None:
    with http_server(
        seed=WORKING, answer=AnswerMode(answer), fault_switches=only(FaultKind.SSE_CUT)
    ) as server:
        session = server.initialize()
        cancel = tasks_request("tasks/cancel", "working-001")
        cut = server.post(cancel, session)
        assert cut.headers["Content-Type"] == "text/event-stream"
        assert cut.headers["Connection"] == "close"
        fields = dict(line.split(": ", 1) for line in cut.text.splitlines() if ": " in line)
        assert fields["retry"] == "0"
        assert sse_data(cut.text) == []
        resumed = server.client.get(
            server.url,
            headers={
                "Accept": "text/event-stream",
                "Mcp-Session-Id": session,
                "Last-Event-ID": fields["id"],
            },
        )
        responses = [m for m in sse_data(resumed.text) if "id" in m]
        assert responses == [
            {"jsonrpc": "2.0", "id": cancel["id"], "result": responses[0]["result"]}
        ]
        assert responses[0]["result"]["status"] == "cancelled"
        assert server.status("working-001") == "cancelled"


def test_sse_cut_on_a_modern_request_loses_the_answer() -> None:
    with http_server(seed=WORKING, fault_switches=only(FaultKind.SSE_CUT)) as server:
        get = request("tasks/get", {"taskId": "working-001", "_meta": MODERN_META})
        headers = {"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tasks/get"}
        answer = server.client.post(
            server.url,
            content=json.dumps(get),
            headers={**server.headers(None), **headers, "Mcp-Name": "working-001"},
        )
        assert answer.status_code == 200
        assert answer.headers["Content-Type"] == "text/event-stream"
        assert answer.content == b""


def test_slow_handles_at_once_and_answers_after_the_delay() -> None:
    holding, release = threading.Event(), threading.Event()
    held: list[float] = []

    def sleep(seconds: float) -> None:
        held.append(seconds)
        holding.set()
        release.wait(DEADLINE)

    switches = only(FaultKind.SLOW, delay_ms=1500)
    with http_server(sleep=sleep, seed=WORKING, fault_switches=switches) as server:
        session = server.initialize()
        cancel = tasks_request("tasks/cancel", "working-001")
        answers: list[JsonObject] = []
        thread = threading.Thread(
            target=lambda: answers.append(sse_data(server.post(cancel, session).text)[-1])
        )
        thread.start()
        assert holding.wait(DEADLINE)
        assert held == [1.5]
        assert server.status("working-001") == "cancelled", "handled before the delay"
        assert answers == []
        release.set()
        thread.join(DEADLINE)
        assert answers[0]["id"] == cancel["id"]


@pytest.mark.parametrize("answer", ["json", "sse"])
def test_oversized_answers_are_over_the_size_and_valid(answer: str) -> None:
    switches = only(FaultKind.OVERSIZED, oversize_bytes=300_000)
    with http_server(seed=WORKING, answer=AnswerMode(answer), fault_switches=switches) as server:
        session = server.initialize()
        get = tasks_request("tasks/get", "working-001")
        got = server.post(get, session)
        if answer == "json":
            assert int(got.headers["Content-Length"]) == 300_001
            message = got.json()
        else:
            assert got.headers["Transfer-Encoding"] == "chunked"
            (message,) = sse_data(got.text)
            assert len(got.content) > 300_001
        assert message["id"] == get["id"]
        assert message["result"]["taskId"] == "working-001"
        assert len(message["result"]["_meta"][PADDING_KEY]) > 299_000


class _Oversized(logging.Handler):
    """Hears the server's log line about an oversized answer."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.lines: list[str] = []
        self.heard = threading.Event()

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("oversized answer"):
            self.lines.append(record.getMessage())
            self.heard.set()


@contextlib.contextmanager
def hearing_oversized() -> Iterator[_Oversized]:
    """The server's log lines about oversized answers, while in the block."""
    logger = logging.getLogger("mcptask.reference_server")
    heard, level = _Oversized(), logger.level
    logger.addHandler(heard)
    logger.setLevel(logging.INFO)
    try:
        yield heard
    finally:
        logger.removeHandler(heard)
        logger.setLevel(level)


def test_an_oversized_answer_is_not_written_to_a_client_that_went_away() -> None:
    size = 256 * 1024 * 1024
    switches = only(FaultKind.OVERSIZED, oversize_bytes=size)
    with (
        hearing_oversized() as heard,
        http_server(seed=WORKING, answer=AnswerMode.JSON, fault_switches=switches) as server,
    ):
        session = server.initialize()
        host, port = server.url.split("//")[1].split("/")[0].split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=DEADLINE)
        body = json.dumps(tasks_request("tasks/get", "working-001"))
        connection.request("POST", "/mcp", body, server.headers(session))
        response = connection.getresponse()
        assert int(response.headers["Content-Length"]) == size + 1
        response.read(1000)
        connection.close()  # as a client does that refuses the answer by its length
        assert heard.heard.wait(DEADLINE), "the server logged the oversized answer"
    (line,) = heard.lines
    assert line.startswith("oversized answer: the client went away after"), line
    written, total = (int(n) for n in re.findall(r"\d+", line))
    assert total == size + 1
    assert written < size // 4, "nobody read it: the server could write only what buffers hold"


# -- stdio --------------------------------------------------------------------------------------


def test_stdio_reset_drops_the_line_and_lost_drops_the_answer() -> None:
    switches = FaultSwitches(rate=1.0, kinds=(FaultKind.RESET,), seed=1)
    with stdio_server(seed=WORKING, fault_switches=switches) as server:
        server.write(tasks_request("tasks/cancel", "working-001"))
        ping = request("ping")
        server.write(ping)
        assert server.read()["id"] == ping["id"], "the dropped request got no answer"
        assert server.status("working-001") == "working"
    with stdio_server(seed=WORKING, fault_switches=only(FaultKind.LOST)) as server:
        server.write(tasks_request("tasks/cancel", "working-001"))
        ping = request("ping")
        server.write(ping)
        assert server.read()["id"] == ping["id"]
        assert server.status("working-001") == "cancelled"


def test_stdio_slow_answers_that_line_late_and_others_meanwhile() -> None:
    release = threading.Event()
    with stdio_server(
        sleep=lambda seconds: release.wait(DEADLINE),
        seed=WORKING,
        fault_switches=only(FaultKind.SLOW),
    ) as server:
        cancel = tasks_request("tasks/cancel", "working-001")
        server.write(cancel)
        ping = request("ping")
        server.write(ping)
        assert server.read()["id"] == ping["id"]
        assert server.status("working-001") == "cancelled"
        release.set()
        assert server.read()["id"] == cancel["id"]


def test_stdio_oversized_is_one_long_valid_line() -> None:
    switches = only(FaultKind.OVERSIZED, oversize_bytes=150_000)
    with stdio_server(seed=WORKING, fault_switches=switches) as server:
        get = tasks_request("tasks/get", "working-002")
        server.write(get)
        line = server.read_line()
        assert line is not None
        assert len(line) == 150_001
        assert json.loads(line)["result"]["taskId"] == "working-002"

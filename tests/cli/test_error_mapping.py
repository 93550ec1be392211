"""`mcptask.cli.app.run` is the one place where exceptions become exit codes: every error
class of the tree ends as its documented code and exactly one line on stderr."""

from __future__ import annotations

import os
import signal

import pytest

from mcptask import errors
from mcptask.cli.app import run
from mcptask.client.session import McpClient

URL = "http://127.0.0.1:9/mcp"  # never reached: the handshake is replaced below

# The exit codes design.md documents, written out here so that a class that drifts from its
# documented code fails this test (rather than being read back from the class itself).
DOCUMENTED: dict[type[Exception], int] = {
    errors.McptaskError: 1,
    errors.OutputFailure: 1,
    errors.UsageError: 2,
    errors.StateError: 2,
    errors.StoreFailure: 2,
    errors.UnreachableError: 3,
    errors.ResponseTimeout: 3,
    errors.HttpTimeout: 3,
    errors.EndpointNotFound: 3,
    errors.ServerExited: 3,
    errors.TlsFailure: 3,
    errors.TransientError: 3,
    errors.NotDelivered: 3,
    errors.ServerBusy: 3,
    errors.AnswerLost: 3,
    errors.GatewayFailure: 3,
    errors.AuthError: 4,
    errors.SignInRequired: 4,
    errors.AuthDiscoveryError: 4,
    errors.TokenRequestRefused: 4,
    errors.InsufficientScope: 4,
    errors.UnsupportedError: 5,
    errors.UnsupportedVersionError: 5,
    errors.NoTaskList: 5,
    errors.TaskCallForbidden: 5,
    errors.TaskError: 6,
    errors.SessionGone: 6,
    errors.RpcError: 6,
    errors.TaskNotFound: 6,
    errors.SessionTaskGone: 6,
    errors.CancelRefused: 6,
    errors.ProtocolViolation: 8,
    errors.HttpStatusError: 8,
}


def _all_subclasses(base: type[Exception]) -> set[type[Exception]]:
    found: set[type[Exception]] = {base}
    for sub in base.__subclasses__():
        found |= _all_subclasses(sub)
    return found


def _instance(kind: type[Exception]) -> Exception:
    text = "it went wrong \x1b[31mred\x1b[0m [bold]x[/bold]"
    if kind is errors.UnsupportedVersionError:
        return kind(text, supported=("2025-11-25",))
    if kind is errors.TaskNotFound:
        return kind("t1", -32602, text)
    if kind is errors.SessionTaskGone:
        return kind("t1", text)
    if issubclass(kind, errors.RpcError):
        return kind(-32000, text)
    return kind(text)


def test_every_error_class_has_a_documented_code() -> None:
    assert _all_subclasses(errors.McptaskError) == set(DOCUMENTED)


@pytest.mark.parametrize("kind", sorted(DOCUMENTED, key=str))
def test_each_error_class_maps_to_its_code_and_one_clean_line(
    kind: type[Exception],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    failure = _instance(kind)

    def handshake(self: McpClient, **options: object) -> None:
        raise failure

    monkeypatch.setattr(McpClient, "connect", handshake)
    code = run(["get", "t1", "--url", URL, "--no-color"])
    out, err = capsys.readouterr()
    assert code == DOCUMENTED[kind]
    assert out == ""
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    assert lines[0].startswith("mcptask: error: ")
    assert "\x1b" not in err
    assert "[bold]x[/bold]" in err  # shown as text, never read as Rich markup


def test_an_unexpected_exception_is_exit_1_with_a_bug_report_hint(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def handshake(self: McpClient, **options: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(McpClient, "connect", handshake)
    monkeypatch.delenv("MCPTASK_DEBUG", raising=False)
    code = run(["get", "t1", "--url", URL])
    out, err = capsys.readouterr()
    assert (code, out) == (1, "")
    assert "internal error (RuntimeError: boom); this is a bug in mcptask" in err
    assert "Traceback" not in err


def test_mcptask_debug_lets_the_traceback_through(monkeypatch: pytest.MonkeyPatch) -> None:
    def handshake(self: McpClient, **options: object) -> None:
        raise RuntimeError("boom")

    monkeypatch.setattr(McpClient, "connect", handshake)
    monkeypatch.setenv("MCPTASK_DEBUG", "1")
    with pytest.raises(RuntimeError, match="boom"):
        run(["get", "t1", "--url", URL])


def test_ctrl_c_is_130_with_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def handshake(self: McpClient, **options: object) -> None:
        os.kill(os.getpid(), signal.SIGINT)  # the handler `run` installed turns it into 130

    monkeypatch.setattr(McpClient, "connect", handshake)
    monkeypatch.setattr("mcptask.cli.app._signalled", [])
    previous = {signum: signal.getsignal(signum) for signum in (signal.SIGINT, signal.SIGTERM)}
    try:
        assert run(["get", "t1", "--url", URL]) == 130
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
    assert capsys.readouterr().err.strip() == "mcptask: error: interrupted"


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["get"], "Missing argument 'ID'"),
        (["list", "--limit", "0"], "--limit"),
        (["cancel", "--bogus"], "(a task id that starts with '-' goes after '--'"),
        (["list", "--bogus"], "No such option: --bogus"),
        (["--bogus", "list"], "No such option: --bogus"),
        (["frobnicate"], "No such command 'frobnicate'"),
    ],
)
def test_parser_errors_are_usage_errors_with_a_help_pointer(
    argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert fragment in err
    assert "--help)" in err
    # The hint about ids that start with '-' only where a command takes ids.
    assert ("goes after '--'" in err) == (argv[0] == "cancel")
    assert len(err.strip().splitlines()) == 1

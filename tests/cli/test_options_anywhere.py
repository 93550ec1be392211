"""The server options work before and after the command name; the later one wins."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from mcptask.cli.app import run
from mcptask.client.session import McpClient
from mcptask.errors import UsageError

A = "http://127.0.0.1:9/a"
B = "http://127.0.0.1:9/b"

# Each server command with the arguments it needs to get as far as connecting.
COMMANDS: dict[str, list[str]] = {
    "connect": ["connect"],
    "list": ["list"],
    "get": ["get", "t1"],
    "cancel": ["cancel", "t1"],
    "watch": ["watch", "t1"],
}


@dataclass
class Seen:
    """What the client would have connected to."""

    targets: list[str] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    timeouts: list[float] = field(default_factory=list)


@pytest.fixture
def seen(monkeypatch: pytest.MonkeyPatch) -> Seen:
    record = Seen()

    def handshake(self: McpClient, **options: object) -> None:
        transport = self.transport
        record.targets.append(transport.target)
        client = transport._client  # type: ignore[attr-defined]
        record.headers.append({k: v for k, v in client.headers.items() if k.startswith("x-")})
        record.timeouts.append(client.timeout.read)
        raise UsageError("stop before sending anything")

    monkeypatch.setattr(McpClient, "connect", handshake)
    monkeypatch.delenv("MCPTASK_URL", raising=False)
    monkeypatch.delenv("MCPTASK_PROFILE", raising=False)
    return record


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_before_or_after_the_command(command: str, seen: Seen) -> None:
    words = COMMANDS[command]
    assert run(["--url", A, *words]) == 2
    assert run([*words, "--url", A]) == 2
    assert seen.targets == [A, A]


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_the_later_one_wins(command: str, seen: Seen) -> None:
    words = COMMANDS[command]
    run(["--url", A, "--timeout", "5", *words, "--url", B])
    run(["--timeout", "5", *words, "--url", B, "--timeout", "7"])
    assert seen.targets == [B, B]
    assert seen.timeouts == [5.0, 7.0]


def test_headers_from_both_places_add_up(seen: Seen) -> None:
    run(["-H", "X-One: 1", "list", "--url", A, "-H", "X-Two: 2"])
    assert seen.headers == [{"x-one": "1", "x-two": "2"}]


def test_output_and_verbosity_before_the_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # -o before the command is the command's: connect has no ids output.
    assert run(["-o", "ids", "connect", "--url", A]) == 2
    assert "connect has no ids output" in capsys.readouterr().err


def test_an_unknown_option_before_the_command_names_itself(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert run(["--bogus", "list"]) == 2
    err = capsys.readouterr().err
    assert "No such option: --bogus" in err
    assert "goes after '--'" not in err

"""TAB completion through the app, in the wire formats of bash, zsh and fish (what the
scripts in completions/ ask for): command and option names, the values that live on this
machine (profile names, recorded task ids with their status), help on one line each."""

from __future__ import annotations

from pathlib import Path

import pytest

from mcptask.cli.app import COMMANDS, run
from mcptask.protocol.tasks import Task
from mcptask.store.identity import ServerIdentity
from mcptask.store.known_tasks import KnownTasks
from mcptask.store.profiles import Profile, save_profile


@pytest.fixture(autouse=True)
def profiles_and_known_tasks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPTASK_CONFIG_DIR", str(tmp_path))
    monkeypatch.setenv("MCPTASK_STATE_DIR", str(tmp_path / "state"))
    for variable in ("MCPTASK_URL", "MCPTASK_SERVER", "COLUMNS", "TERMINAL_WIDTH"):
        monkeypatch.delenv(variable, raising=False)
    for name in ("alpha-prod", "beta-staging", "alpha-dev"):
        save_profile(tmp_path / "profiles.toml", Profile(name=name, url="http://127.0.0.1:9/mcp"))
    for url, ids in (
        ("http://127.0.0.1:9/a", ["t-a1", "t-a2"]),
        ("http://127.0.0.1:9/b", ["t-b1"]),
    ):
        record = KnownTasks.open(ServerIdentity.for_url(url))
        page = [(Task(task_id, "working"), None) for task_id in ids]
        record.seen_page(page, via="tasks/get", first=True, last=False)
        record.close()


def complete(
    shell: str,
    line: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    fish_action: str = "get-args",
) -> tuple[str, int]:
    """What `mcptask` answers a TAB at the end of `line`, and its exit status."""
    monkeypatch.setenv("_MCPTASK_COMPLETE", f"complete_{shell}")
    if shell == "bash":
        words = line.split()
        monkeypatch.setenv("COMP_WORDS", line)
        monkeypatch.setenv("COMP_CWORD", str(len(words) - (0 if line.endswith(" ") else 1)))
    else:
        monkeypatch.setenv("_TYPER_COMPLETE_ARGS", line)
        monkeypatch.setenv("_TYPER_COMPLETE_FISH_ACTION", fish_action)
    with pytest.raises(SystemExit) as exit:
        run([])
    return capsys.readouterr().out, int(exit.value.code or 0)


@pytest.mark.parametrize(
    ("line", "answer"),
    [
        ("mcptask ", list(COMMANDS)),
        ("mcptask nosuch ", list(COMMANDS)),
        ("mcptask ca", ["cancel"]),
        ("mcptask --profile al", ["alpha-dev", "alpha-prod"]),
        ("mcptask list --profile=al", ["alpha-dev", "alpha-prod"]),
        ("mcptask profiles --default be", ["beta-staging"]),
        ("mcptask get ", ["t-b1", "t-a1", "t-a2"]),
        ("mcptask cancel --url http://127.0.0.1:9/b ", ["t-b1"]),
        ("mcptask watch --url=http://127.0.0.1:9/a t", ["t-a1", "t-a2"]),
        ("mcptask cancel abc --y", ["--yes"]),
        ("mcptask list -o ", [""]),
        ("mcptask reference-server ", [""]),
        ("mcptask cancel -- -", [""]),
        # Typer's completion runs the eager --version callback: it must not print.
        ("mcptask --version ", list(COMMANDS)),
    ],
)
def test_bash(
    line: str,
    answer: list[str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert complete("bash", line, monkeypatch, capsys) == ("\n".join(answer) + "\n", 0)


def test_options_not_given_yet_in_declared_order(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    out, _ = complete("bash", "mcptask list --status working --", monkeypatch, capsys)
    names = out.split()
    assert names[:3] == ["--limit", "--known", "--order"]
    assert "--status" not in names
    assert names[-1] == "--help"
    out, _ = complete("bash", "mcptask list -", monkeypatch, capsys)
    assert out.split()[-2:] == ["-h", "--help"]


def test_zsh_and_fish_say_each_ids_status(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    zsh = complete("zsh", "mcptask get ", monkeypatch, capsys)
    assert zsh == ("_arguments '*: :((\"t-b1\":\"working\"\n\"t-a1\":\"working\"\n"
                   "\"t-a2\":\"working\"))'\n", 0)  # fmt: skip
    fish = complete("fish", "mcptask get ", monkeypatch, capsys)
    assert fish == ("t-b1\tworking\nt-a1\tworking\nt-a2\tworking\n", 0)


@pytest.mark.parametrize("columns", [None, "40"])
def test_help_stays_on_one_line_whatever_the_width(
    columns: str | None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if columns:
        monkeypatch.setenv("COLUMNS", columns)
    long_help = (
        "Act on the tasks recorded here for this server, each refreshed with tasks/get first "
        "(the way to work in bulk without tasks/list)."
    )
    fish, _ = complete("fish", "mcptask list --kn", monkeypatch, capsys)
    assert fish == f"--known\t{long_help}\n"
    zsh, _ = complete("zsh", "mcptask list --kn", monkeypatch, capsys)
    assert zsh == f'_arguments \'*: :(("--known":"{long_help}"))\'\n'
    fish, _ = complete("fish", "mcptask ca", monkeypatch, capsys)
    assert fish == "cancel\tCancel tasks by id, from a file or stdin,...\n"


def test_help_width_is_restored_after_completing(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from typer import rich_utils

    width = rich_utils.MAX_WIDTH
    complete("zsh", "mcptask list --kn", monkeypatch, capsys)
    assert width == rich_utils.MAX_WIDTH


@pytest.mark.parametrize("line", ["mcptask list --profile al", "mcptask list --st", "mcptask x "])
def test_fish_asks_whether_there_are_arguments(
    line: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert complete("fish", line, monkeypatch, capsys, fish_action="is-args") == ("", 0)


def test_recorded_ids_with_control_characters_are_not_offered(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import mcptask.store.database as task_ids

    recorded = [("ok-1", "working"), ("evil\x1b[31m", "working"), ("ok-2", "work\x07ing")]
    monkeypatch.setattr(task_ids, "complete_task_ids", lambda environ, identity, prefix: recorded)
    out, _ = complete("fish", "mcptask get ", monkeypatch, capsys)
    assert out == "ok-1\tworking\nok-2\tworking\n"

"""TAB completion without the app (mcptask/completion.py) answers exactly what Typer's own
completion answers, for every shell the scripts in completions/ speak, and its table is
current with the app."""

from __future__ import annotations

import io
import json
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mcptask import completion
from mcptask.cli.app import app
from mcptask.cli.completion_table import build
from mcptask.completion import SPEC_FILE, complete
from mcptask.store.identity import ServerIdentity
from mcptask.store.known import KnownTasks, Sighting
from mcptask.store.profiles import Profile, save_profile

LINES = [
    "mcptask ",
    "mcptask c",
    "mcptask ca",
    "mcptask -",
    "mcptask --",
    "mcptask --pro",
    "mcptask --profile ",
    "mcptask --profile al",
    "mcptask -P b",
    "mcptask --url http://h/mcp l",
    "mcptask list ",
    "mcptask list -",
    "mcptask list --",
    "mcptask list --st",
    "mcptask list --status working --",
    "mcptask list --profile ",
    "mcptask list --profile=al",
    "mcptask list --token-file ",
    "mcptask list --token-file /tm",
    "mcptask list -o ",
    "mcptask list -H 'X: 1' -",
    "mcptask cancel --all-working --",
    "mcptask cancel abc ",
    "mcptask cancel abc --y",
    "mcptask cancel -- -",
    "mcptask connect ",
    "mcptask connect http://h/mcp --",
    "mcptask connect --save p --",
    "mcptask get ",
    "mcptask watch --exit-status --",
    "mcptask profiles --delete ",
    "mcptask profiles --default be",
    "mcptask reference-server ",
    "mcptask reference-server --",
    "mcptask nosuch ",
    "mcptask nosuch --",
    "mcptask watch --interval 1 --no-color -",
    "mcptask get ",
    "mcptask get t-",
    "mcptask cancel t-a ",
    "mcptask cancel --url http://127.0.0.1:9/b ",
    "mcptask watch --url=http://127.0.0.1:9/a t",
    "mcptask result ",
    "mcptask forget --all ",
    "mcptask start ",
    "mcptask start long_job --",
    "mcptask list --known --",
]


@pytest.fixture(autouse=True)
def profiles_and_known_tasks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPTASK_CONFIG_DIR", str(tmp_path))
    monkeypatch.setenv("MCPTASK_STATE_DIR", str(tmp_path / "state"))
    for variable in ("MCPTASK_URL", "MCPTASK_SERVER"):
        monkeypatch.delenv(variable, raising=False)
    for name in ("alpha-prod", "beta-staging", "alpha-dev"):
        save_profile(tmp_path / "profiles.toml", Profile(name=name, url="http://127.0.0.1:9/mcp"))
    store = KnownTasks.open()
    try:
        for url, ids in (
            ("http://127.0.0.1:9/a", ["t-a1", "t-a2"]),
            ("http://127.0.0.1:9/b", ["t-b1"]),
        ):
            sightings = [Sighting(task_id, "working", None, None, "tasks/get") for task_id in ids]
            store.server(ServerIdentity.for_url(url)).write(sightings)
    finally:
        store.close()


def shell_environment(shell: str, line: str) -> dict[str, str]:
    if shell == "bash":
        words = line.split()
        cword = len(words) if line.endswith(" ") else len(words) - 1
        return {"COMP_WORDS": line, "COMP_CWORD": str(cword)}
    env = {"_TYPER_COMPLETE_ARGS": line}
    if shell == "fish":
        env["_TYPER_COMPLETE_FISH_ACTION"] = "get-args"
    return env


def typer_answer(shell: str, env: dict[str, str]) -> tuple[str, int]:
    # Unwrapped help: Typer wraps it to the terminal's width (see completion_table.UNWRAPPED).
    variables = {"_MCPTASK_COMPLETE": f"complete_{shell}", "COLUMNS": "100000", **env}
    result = CliRunner().invoke(app, [], prog_name="mcptask", env=variables)
    return result.output, result.exit_code


def fast_answer(
    shell: str, env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> tuple[str, int]:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    out = io.StringIO()
    with redirect_stdout(out):
        code = complete(f"complete_{shell}", dict(__import__("os").environ))
    assert code is not None
    return out.getvalue(), code


def help_in_one_order(answer: tuple[str, int]) -> tuple[str, int]:
    """Click orders the help option's names (-h, --help) as a set iterates: per process."""
    text, code = answer
    closing = "))'\n" if text.endswith("))'\n") else ""
    lines = text.removesuffix(closing).split("\n")
    helps = [i for i, line in enumerate(lines) if line.lstrip('"').startswith(("-h", "--help"))]
    for index, line in zip(helps, sorted(lines[i] for i in helps), strict=True):
        lines[index] = line
    return "\n".join(lines) + closing, code


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
@pytest.mark.parametrize("line", LINES)
def test_the_fast_path_answers_what_typer_answers(
    shell: str, line: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = shell_environment(shell, line)
    expected = help_in_one_order(typer_answer(shell, env))
    assert help_in_one_order(fast_answer(shell, env, monkeypatch)) == expected


@pytest.mark.parametrize("line", ["mcptask list --profile al", "mcptask list --st", "mcptask x "])
def test_fish_asks_whether_there_are_arguments(line: str, monkeypatch: pytest.MonkeyPatch) -> None:
    env = {"_TYPER_COMPLETE_ARGS": line, "_TYPER_COMPLETE_FISH_ACTION": "is-args"}
    assert fast_answer("fish", env, monkeypatch)[1] == typer_answer("fish", env)[1]


def test_the_table_is_current_with_the_app() -> None:
    assert json.loads(SPEC_FILE.read_text(encoding="utf-8")) == build(), (
        "regenerate: python -m mcptask.cli.completion_table > mcptask/completion_spec.json"
    )


def test_a_tab_imports_neither_typer_nor_httpx_nor_rich_nor_pydantic(tmp_path: Path) -> None:
    import subprocess

    tab = {
        "_MCPTASK_COMPLETE": "complete_bash",
        "COMP_WORDS": "mcptask list --profile al",
        "COMP_CWORD": "3",
    }
    probe = (
        "import os, sys\n"
        f"os.environ.update({tab!r})\n"
        "sys.argv = ['mcptask']\n"
        "from mcptask.entry import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = sorted(m for m in ('typer', 'httpx', 'rich', 'pydantic') if m in sys.modules)\n"
        "print('HEAVY', heavy)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        check=True,
        env={**__import__("os").environ, "MCPTASK_CONFIG_DIR": str(tmp_path)},
    )
    assert "HEAVY []" in done.stdout


def test_a_tab_after_version_does_not_print_the_version(monkeypatch: pytest.MonkeyPatch) -> None:
    # Typer's own completion runs the eager --version callback and prints "mcptask 0.1.0"
    # into the shell's completion list; the fast path does not.
    env = shell_environment("bash", "mcptask --version ")
    assert "mcptask 0." not in fast_answer("bash", env, monkeypatch)[0]


def test_recorded_ids_with_control_characters_are_not_offered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import mcptask.store.task_ids as task_ids

    recorded = [("ok-1", "working"), ("evil\x1b[31m", "working"), ("ok-2", "work\x07ing")]
    monkeypatch.setattr(task_ids, "complete_task_ids", lambda environ, identity, prefix: recorded)
    assert completion.SOURCES["task"]("", {}) == [("ok-1", "working"), ("ok-2", "working")]

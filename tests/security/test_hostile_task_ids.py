"""Attack: a server's task ids are run or globbed by the shell's TAB completion.

Task ids are server text. A server that once offered `deploy-42;touch${IFS}MARKER;#` has it in
the record of known tasks, and `mcptask cancel dep<TAB>` offers it: inserted unquoted, Enter
runs `touch`; an id `*` expanded to the files of the current directory. Here the record holds
hostile ids as a `list` would have recorded them, and real bash, zsh and fish complete through
the scripts in completions/: no command runs, nothing is globbed, and safe ids still complete.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from mcptask.protocol.tasks import Task
from mcptask.store.database import FILE_NAME
from mcptask.store.identity import ServerIdentity
from mcptask.store.known_tasks import KnownTasks

COMPLETIONS = Path(__file__).resolve().parents[2] / "completions"
URL = "http://127.0.0.1:9/mcp"


def hostile_ids(marker: Path) -> list[str]:
    return [
        f"deploy-42;touch${{IFS}}{marker};#",
        f"deploy-43$(touch {marker})",
        f"deploy-44`touch {marker}`",
        f"deploy-45\\$(touch {marker})",  # zsh's script evaluates Typer's answer
        f"deploy-46'\"$(touch {marker})\"'",
        f"deploy-47 x\ntouch {marker}",
        "*",
        "deploy-*",
        "-rf",
    ]


@pytest.fixture
def attacked(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """The environment of a user whose record holds hostile ids, and the marker file a
    successful attack creates."""
    marker = tmp_path / "pwned"
    state = tmp_path / "state"
    state.mkdir()
    record = KnownTasks(state / FILE_NAME, ServerIdentity.for_url(URL))
    try:
        for task_id in [*hostile_ids(marker), "deploy-safe-1"]:
            task = Task.from_wire(
                {
                    "taskId": task_id,
                    "status": "working",
                    "createdAt": "2026-01-01T00:00:00Z",
                    "lastUpdatedAt": "2026-01-01T00:00:00Z",
                    "ttl": None,
                }
            )
            record.seen(task, via="tasks/list", session_id=None, tool=None)
        record.flush()
    finally:
        record.close()
    # A directory with files for `*` to expand to.
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (cwd / "secret-file-name").write_text("")
    env = {key: value for key, value in os.environ.items() if not key.startswith("MCPTASK_")}
    env["MCPTASK_STATE_DIR"] = str(state)
    env["MCPTASK_CONFIG_DIR"] = str(tmp_path / "config")
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env, marker


def require(shell: str) -> str:
    found = shutil.which(shell)
    assert found, f"{shell} is not installed (.ci/run installs it from Debian's packages)"
    return found


def bash_complete(env: dict[str, str], cwd: Path, words: str, then: str = "") -> list[str]:
    """COMPREPLY for the line `words` (the last word is completed), then `then` is run in the
    same shell: as bash would insert the only candidate and run the line on Enter."""
    script = (
        f"source {COMPLETIONS / 'mcptask.bash'}\n"
        f"COMP_WORDS=({words}); COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))\n"
        "_mcptask_completion mcptask\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n' + then
    )
    done = subprocess.run(
        [require("bash"), "--norc", "--noprofile", "-c", script],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=60,
        check=True,
    )
    return done.stdout.splitlines()


def test_bash_completion_runs_no_command_and_globs_nothing(
    attacked: tuple[dict[str, str], Path], tmp_path: Path
) -> None:
    env, marker = attacked
    cwd = tmp_path / "cwd"
    offered = bash_complete(env, cwd, f"mcptask cancel --url {URL} dep")
    assert offered == ["deploy-safe-1"]
    # Each candidate as bash would put it on the command line, run with Enter (an `echo`).
    for line in bash_complete(env, cwd, "mcptask cancel dep"):
        subprocess.run(
            [require("bash"), "--norc", "--noprofile", "-c", f"echo {line}"],
            env=env,
            cwd=cwd,
            timeout=60,
            check=False,
            capture_output=True,
        )
    assert not marker.exists()
    everything = bash_complete(env, cwd, "mcptask get ''")
    assert "deploy-safe-1" in everything
    assert "secret-file-name" not in everything
    assert not any(word in ("*", "-rf") or "touch" in word for word in everything)
    assert not marker.exists()


def test_bash_script_quotes_what_mcptask_would_not_offer(tmp_path: Path) -> None:
    """The script's own end: a candidate that is not a plain word (from another mcptask, say)
    is read by line, never globbed, and quoted for the shell."""
    marker = tmp_path / "pwned"
    fake = tmp_path / "bin"
    fake.mkdir()
    answer = f"deploy-42;touch${{IFS}}{marker};#\n*\nok-1\n"
    (fake / "mcptask").write_text(f"#!/bin/sh\nprintf '%s' '{answer}'\n")
    (fake / "mcptask").chmod(0o755)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    (cwd / "secret-file-name").write_text("")
    env = dict(os.environ, PATH=os.pathsep.join([str(fake), os.environ.get("PATH", "")]))
    offered = bash_complete(env, cwd, "mcptask get ''")
    # Each candidate as bash puts it on the command line, run with Enter: the same word.
    words = [
        subprocess.run(
            [require("bash"), "--norc", "--noprofile", "-c", f"printf '%s\\n' {line}"],
            cwd=cwd,
            timeout=60,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        for line in offered
    ]
    assert words == [f"{word}\n" for word in answer.splitlines()]
    assert not marker.exists()


def test_zsh_completion_runs_no_command(
    attacked: tuple[dict[str, str], Path], tmp_path: Path
) -> None:
    env, marker = attacked
    env = dict(env, ZDOTDIR=str(tmp_path), TERM="dumb", PS1="READY> ")
    child = pexpect.spawn(
        require("zsh"), ["-f", "-i"], env=env, encoding="utf-8", timeout=30, cwd=tmp_path / "cwd"
    )
    try:
        child.sendline(
            f"autoload -Uz compinit && compinit -u -D; source {COMPLETIONS / 'mcptask.zsh'}; "
            "PS1='READY> '"
        )
        child.expect("READY> ")
        child.send("mcptask cancel dep\t")
        child.expect("deploy-safe-1")
    finally:
        child.close(force=True)
    assert not marker.exists()


def test_fish_completion_offers_only_plain_words(
    attacked: tuple[dict[str, str], Path], tmp_path: Path
) -> None:
    env, marker = attacked
    script = f"source {COMPLETIONS / 'mcptask.fish'}; complete -C 'mcptask cancel dep'"
    done = subprocess.run(
        [require("fish"), "--no-config", "-c", script],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path / "cwd",
        timeout=60,
        check=True,
    )
    assert [line.split("\t")[0] for line in done.stdout.splitlines()] == ["deploy-safe-1"]
    assert not marker.exists()

"""Real bash, zsh and fish completing a profile name through the scripts in completions/."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest

from mcptask.store.profiles import Profile, save_profile

COMPLETIONS = Path(__file__).resolve().parents[2] / "completions"


@pytest.fixture
def shell_env(tmp_path: Path) -> dict[str, str]:
    config = tmp_path / "config"
    path = config / "profiles.toml"
    save_profile(path, Profile(name="alpha-prod", url="http://127.0.0.1:9/a"))
    save_profile(path, Profile(name="beta-staging", url="http://127.0.0.1:9/b"))
    env = {key: value for key, value in os.environ.items() if not key.startswith("MCPTASK_")}
    env["MCPTASK_CONFIG_DIR"] = str(config)
    # The installed `mcptask` beside this Python, as after `pip install`.
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def require(shell: str) -> str:
    found = shutil.which(shell)
    # .ci/run installs bash, zsh and fish; a missing shell is a broken setup, not a skip.
    assert found, f"{shell} is not installed (.ci/run installs it from Debian's packages)"
    return found


def test_bash_completes_a_profile_name(shell_env: dict[str, str]) -> None:
    script = (
        f"source {COMPLETIONS / 'mcptask.bash'}\n"
        "COMP_WORDS=(mcptask list --profile alp); COMP_CWORD=3\n"
        "_mcptask_completion mcptask\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    done = subprocess.run(
        [require("bash"), "--norc", "--noprofile", "-c", script],
        capture_output=True,
        text=True,
        env=shell_env,
        timeout=60,
        check=True,
    )
    assert done.stdout.split() == ["alpha-prod"]


def test_fish_completes_a_profile_name(shell_env: dict[str, str]) -> None:
    script = f"source {COMPLETIONS / 'mcptask.fish'}; complete -C 'mcptask --profile be'"
    done = subprocess.run(
        [require("fish"), "--no-config", "-c", script],
        capture_output=True,
        text=True,
        env=shell_env,
        timeout=60,
        check=True,
    )
    assert [line.split("\t")[0] for line in done.stdout.splitlines()] == ["beta-staging"]


def test_zsh_completes_a_profile_name(shell_env: dict[str, str], tmp_path: Path) -> None:
    env = dict(shell_env, ZDOTDIR=str(tmp_path), TERM="dumb", PS1="READY> ")
    child = pexpect.spawn(require("zsh"), ["-f", "-i"], env=env, encoding="utf-8", timeout=30)
    try:
        child.sendline(
            f"autoload -Uz compinit && compinit -u -D; source {COMPLETIONS / 'mcptask.zsh'}; "
            "PS1='READY> '"
        )
        child.expect("READY> ")
        child.send("mcptask cancel --profile alp\t")
        child.expect("alpha-prod")
    finally:
        child.close(force=True)

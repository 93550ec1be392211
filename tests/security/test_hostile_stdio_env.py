"""Attack: a stdio server reads the secrets in mcptask's environment.

A CI job holds MCPTASK_TOKEN, a client secret and cloud keys; a `--server` process must see
only the short allow-list the official SDKs pass, plus what `--env` and the profile hand it.
The hostile server here is a script that dumps its whole environment to a file and exits.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.cli_process import run_mcptask

DUMP_ENVIRONMENT = """
import json, os, sys
with open(sys.argv[1], "w") as out:
    json.dump(dict(os.environ), out)
sys.exit(1)
"""

SECRETS = {
    "MCPTASK_TOKEN": "tok-sentinel-1",
    "MCPTASK_CLIENT_SECRET": "secret-sentinel-2",
    "AWS_SECRET_ACCESS_KEY": "aws-sentinel-3",
    "GITHUB_TOKEN": "gh-sentinel-4",
}


def _run(tmp_path: Path, *extra: str) -> dict[str, str]:
    script = tmp_path / "dump_env.py"
    script.write_text(DUMP_ENVIRONMENT)
    dump = tmp_path / "environment.json"
    server = f"{sys.executable} {script} {dump}"
    result = run_mcptask(
        "list", "--server", server, "--retries", "0", *extra, env={**SECRETS, "HOME": str(tmp_path)}
    )
    # The server exits at once: one clear line, exit 3 (the attack is what it read).
    result.assert_one_line_error(3, "exited with code 1")
    environment: dict[str, str] = json.loads(dump.read_text())
    return environment


def test_a_stdio_server_sees_no_secret_of_mcptasks_environment(tmp_path: Path) -> None:
    seen = _run(tmp_path, "--env", "API_KEY=given-on-purpose")
    for name, value in SECRETS.items():
        assert name not in seen
        assert value not in json.dumps(seen)
    assert not any(name.startswith("MCPTASK_") for name in seen)
    # The allow-list and what --env passes do arrive.
    assert seen["HOME"] == str(tmp_path)
    assert "PATH" in seen
    assert seen["API_KEY"] == "given-on-purpose"


def test_a_variable_is_passed_on_only_when_named(tmp_path: Path) -> None:
    seen = _run(tmp_path, "-e", f"GITHUB_TOKEN={SECRETS['GITHUB_TOKEN']}")
    assert seen["GITHUB_TOKEN"] == SECRETS["GITHUB_TOKEN"]
    assert "MCPTASK_TOKEN" not in seen
    assert "AWS_SECRET_ACCESS_KEY" not in seen


def test_inherit_env_is_the_explicit_opt_in_to_everything(tmp_path: Path) -> None:
    seen = _run(tmp_path, "--inherit-env")
    for name, value in SECRETS.items():
        assert seen[name] == value


def test_inherit_env_is_refused_for_a_url_server() -> None:
    run_mcptask("list", "--url", "http://127.0.0.1:9/mcp", "--inherit-env").assert_one_line_error(
        2, "--inherit-env applies to --server"
    )

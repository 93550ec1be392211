"""Attack on the operator's own screen: `profiles` prints the credentials a saved target holds.

`connect URL --save NAME` keeps the URL as given, user info and query keys included
(`https://alice:pw@host/mcp?api_key=...`), and a stdio server's command line may hold secret
arguments. The profiles file keeps them (they are how the server is reached), but `profiles`
shows them as credential headers are shown: `<redacted>`, in every output format.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest

from mcptask.store.profiles import Profile, save_profile
from tests.cli_process import run_mcptask
from tests.conftest import StartServer

PASSWORD = "pw-sentinel-1"
API_KEY = "key-sentinel-2"
STDIO_SECRETS = ("tok-sentinel-3", "ghp_sentinel4sentinel4", "pw-sentinel-5", "db-sentinel-6")


@pytest.fixture
def config(tmp_path: Path) -> dict[str, str]:
    return {"MCPTASK_CONFIG_DIR": str(tmp_path / "config"), "HOME": str(tmp_path)}


def shown_everywhere(config: dict[str, str]) -> str:
    """What `profiles` prints in each output format."""
    printed = []
    for output in ("table", "json", "jsonl", "ids"):
        result = run_mcptask("profiles", "-o", output, env=config)
        assert result.code == 0, result.stderr
        printed.append(result.stdout + result.stderr)
    return "\n".join(printed)


def test_a_saved_urls_user_info_and_key_are_not_printed(
    shared_reference_server: StartServer, config: dict[str, str]
) -> None:
    parts = urlsplit(shared_reference_server())
    url = f"http://alice:{PASSWORD}@{parts.netloc}{parts.path}?api_key={API_KEY}&tenant=t1"
    saved = run_mcptask("connect", url, "--save", "p", env=config)
    assert saved.code == 0, saved.stderr
    assert PASSWORD not in saved.stdout + saved.stderr
    assert API_KEY not in saved.stdout + saved.stderr
    # The file keeps the target as given: later commands reach the server with it.
    assert API_KEY in (Path(config["MCPTASK_CONFIG_DIR"]) / "profiles.toml").read_text()
    shown = shown_everywhere(config)
    assert PASSWORD not in shown
    assert API_KEY not in shown
    assert "alice" not in shown
    assert f"http://<redacted>@{parts.netloc}{parts.path}?api_key=<redacted>&tenant=t1" in shown


def test_a_saved_commands_secret_arguments_are_not_printed(config: dict[str, str]) -> None:
    token, github, password, database = STDIO_SECRETS
    command = (
        f"my-server --token {token} {github} --password={password} "
        f"DATABASE_URL=postgres://app:{database}@db/app --port 8080"
    )
    save_profile(
        Path(config["MCPTASK_CONFIG_DIR"]) / "profiles.toml", Profile(name="s", server=command)
    )
    shown = shown_everywhere(config)
    for secret in STDIO_SECRETS:
        assert secret not in shown
    assert "my-server --token '<redacted>' '<redacted>'" in shown
    assert "--port 8080" in shown

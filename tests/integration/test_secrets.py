"""No credential mcptask handles ever reaches its output: not stdout, not stderr, not the `-v`
wire log, not an `MCPTASK_DEBUG=1` traceback, and no file but the user's own 0600 profiles.

Every secret is a distinct marker, and every byte mcptask wrote (and every file under the
test's home, config and state directories) is searched for each one."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.cli_process import Result, reference_stdio_command, run_mcptask
from tests.conftest import StartServer

TOKEN = "tok-3f9a1c-SECRET"
FILE_TOKEN = "file-tok-77b2-SECRET"
ENV_TOKEN = "env-tok-91d0-SECRET"
HEADER = "hdr-4c2e-SECRET"
URL_PASSWORD = "pw-0e5b-SECRET"
URL_QUERY = "qry-a81f-SECRET"
STDIO_ENV = "stdio-env-6d3a-SECRET"
ALL = (TOKEN, FILE_TOKEN, ENV_TOKEN, HEADER, URL_PASSWORD, URL_QUERY, STDIO_ENV)

# Loaded by every Python process started with this directory on PYTHONPATH: it makes the
# answer parser fail with an unexpected error, so that mcptask prints an internal error
# (and, with MCPTASK_DEBUG=1, its whole traceback) in the middle of a request.
SITECUSTOMIZE = """
import os
if os.environ.get("LEAK_TEST_BREAK"):
    import mcptask.transport.http as http

    def broken(*args, **kwargs):
        raise RuntimeError("an unexpected failure while reading the answer")

    http.decode = broken  # JSON answers, and answers in an event stream
"""


@pytest.fixture
def home(tmp_path: Path) -> dict[str, str]:
    """A private HOME, config and state directory, so that every file mcptask writes is seen."""
    (tmp_path / "home").mkdir()
    return {
        "HOME": str(tmp_path / "home"),
        "MCPTASK_CONFIG_DIR": str(tmp_path / "config"),
        "MCPTASK_STATE_DIR": str(tmp_path / "state"),
        "TOKEN_VARIABLE": ENV_TOKEN,
    }


def assert_clean(
    results: list[Result], *roots: Path, allowed: frozenset[Path] = frozenset()
) -> None:
    for result in results:
        for secret in ALL:
            assert secret not in result.stdout, (secret, result.stdout[-500:])
            assert secret not in result.stderr, (secret, result.stderr[-500:])
    for root in roots:
        for path in root.rglob("*"):
            if not path.is_file():
                continue
            text = path.read_bytes().decode("utf-8", "replace")
            found = [secret for secret in ALL if secret in text]
            if path in allowed:
                assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
            else:
                assert found == [], (path, found)


def test_http_credentials_never_show(
    reference_server: StartServer, home: dict[str, str], tmp_path: Path
) -> None:
    url = reference_server("--require-token", TOKEN, "--seed", "working=2", "--scope", "session")
    parts = urlsplit(url)
    userinfo_url = f"http://admin:{URL_PASSWORD}@{parts.netloc}{parts.path}?key={URL_QUERY}"
    token_file = tmp_path / "token"
    token_file.write_text(FILE_TOKEN + "\n", encoding="utf-8")
    header = ("-H", f"X-Api-Key: {HEADER}")
    debug = dict(home, MCPTASK_DEBUG="1")
    breaking = dict(
        debug,
        LEAK_TEST_BREAK="1",
        PYTHONPATH=os.pathsep.join([str(tmp_path / "site"), *sys.path]),
    )
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(SITECUSTOMIZE, encoding="utf-8")

    runs = [
        # the right token, from each source, with the wire log on
        run_mcptask("list", "--url", url, "-v", *header, env=dict(home, MCPTASK_TOKEN=TOKEN)),
        run_mcptask(
            "list", "--url", userinfo_url, "-v", *header, env=dict(debug, MCPTASK_TOKEN=TOKEN)
        ),
        # wrong tokens: 401 with the challenge shown
        run_mcptask(
            "list", "--url", url, "-v", "--token-file", str(token_file), *header, env=debug
        ),
        run_mcptask(
            "list", "--url", url, "-v", "--token-env", "TOKEN_VARIABLE", *header, env=debug
        ),
        # an internal error in the middle of a request, traceback and all
        run_mcptask(
            "get",
            "working-001",
            "--url",
            url,
            "-v",
            *header,
            env=dict(breaking, MCPTASK_TOKEN=TOKEN),
        ),
        # saved as references, then used; and saved as text only when asked
        run_mcptask("connect", url, "--token-env", "TOKEN_VARIABLE", "--save", "p", "-v", env=home),
        run_mcptask("--profile", "p", "list", "-v", env=home),
        run_mcptask(
            "connect",
            url,
            *header,
            "--save",
            "q",
            "--save-secrets",
            "-v",
            env=dict(home, MCPTASK_TOKEN=TOKEN),
        ),
        run_mcptask("profiles", "-o", "json", env=home),
        run_mcptask("profiles", env=home),
    ]
    assert runs[0].code == 0, runs[0].stderr
    assert "X-Api-Key" in runs[0].stderr  # the header is logged, its value redacted
    assert runs[2].code == 4
    assert runs[3].code == 4
    assert runs[4].code == 1
    assert "Traceback" in runs[4].stderr  # the traceback did come through
    assert "an unexpected failure while reading the answer" in runs[4].stderr
    config = Path(home["MCPTASK_CONFIG_DIR"])
    assert HEADER in (config / "profiles.toml").read_text(encoding="utf-8")  # asked for
    assert_clean(
        runs,
        Path(home["HOME"]),
        config,
        tmp_path / "state",
        allowed=frozenset({config / "profiles.toml"}),
    )


def test_stdio_credentials_never_show(home: dict[str, str]) -> None:
    server = reference_stdio_command("--seed", "working=1")
    runs = [
        run_mcptask("list", "--server", server, "-v", "-e", f"API_KEY={STDIO_ENV}", env=home),
        run_mcptask("connect", server, "-e", f"API_KEY={STDIO_ENV}", "--save", "s", env=home),
    ]
    assert runs[0].code == 0, runs[0].stderr
    assert runs[1].code == 2  # a credential-like variable is not saved unless asked
    assert "looks like a credential" in runs[1].stderr
    assert_clean(runs, Path(home["HOME"]), Path(home["MCPTASK_CONFIG_DIR"]))

"""An attack on the browser sign-in's loopback redirect, against the real `mcptask` process:
another program on the machine calls the callback first, with a forged state (and one that
is not ASCII), to abort the sign-in a person is finishing."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.cli_process import run_mcptask
from tests.conftest import StartServer

FOLLOW_REDIRECTS = Path(__file__).resolve().parents[1] / "conformance" / "follow_redirects.py"

# The browser: a forged callback first, twice, then the real sign-in page.
BROWSER = """
import subprocess, sys, urllib.parse, urllib.request
url = sys.argv[1]
query = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(url).query))
for forged in ("code=forged&state=forged", "code=forged&state=%C3%A9", "error=access_denied"):
    try:
        urllib.request.urlopen(query["redirect_uri"] + "?" + forged, timeout=10).read()
    except OSError:
        pass
sys.exit(subprocess.call([sys.executable, {follow!r}, url]))
"""


def test_a_forged_callback_does_not_abort_the_sign_in(
    reference_server: StartServer, tmp_path: Path
) -> None:
    url = reference_server("--oauth", "--seed", "working=1")
    script = tmp_path / "browser.py"
    script.write_text(BROWSER.replace("{follow!r}", repr(str(FOLLOW_REDIRECTS))))
    browser = tmp_path / "browser"
    browser.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{script}" "$@"\n')
    browser.chmod(0o700)
    env = {
        "MCPTASK_STATE_DIR": str(tmp_path / "state"),
        "MCPTASK_CONFIG_DIR": str(tmp_path / "config"),
        "BROWSER": str(browser),
    }
    login = run_mcptask("login", url, "-o", "json", env=env)
    assert login.code == 0, login.stderr
    assert login.json()["signedIn"] is True
    listed = run_mcptask("list", "--url", url, "-o", "ids", env={**env, "BROWSER": ""})
    assert listed.stdout.split() == ["working-001"]

"""Sign-in end to end: the real CLI against the reference server's authorization server
(`reference-server --oauth`), the browser step played by follow_redirects.py via BROWSER.

Ends with the leak test: every secret of the run (client secrets, the private key, every
access and refresh token the cache ever held) is looked for in every output of every command
(stdout and stderr, with -v) and in every file mcptask wrote, except the 0600 token cache
that is the user's own.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.cli_process import Result, mcptask_argv, run_mcptask
from tests.conftest import StartServer
from tests.reference_server_process import stop_process

FOLLOW_REDIRECTS = Path(__file__).resolve().parents[1] / "conformance" / "follow_redirects.py"
CI_CLIENT = "ci-robot"
CI_SECRET = "s3cret-ci-" + "x" * 20


@dataclass
class Session:
    """One user's machine: its directories, environment, and everything printed so far."""

    root: Path
    env: dict[str, str]
    outputs: list[Result] = field(default_factory=list)
    tokens_seen: set[str] = field(default_factory=set)

    def run(self, *args: str, **extra: str) -> Result:
        result = run_mcptask(*args, env={**self.env, **extra})
        self.outputs.append(result)
        self.remember_tokens()
        return result

    @property
    def cache(self) -> Path:
        return self.root / "state" / "tokens.json"

    def cached(self) -> dict[str, Any]:
        document: dict[str, Any] = json.loads(self.cache.read_text())
        return document

    def remember_tokens(self) -> None:
        if not self.cache.exists():
            return
        document = self.cached()
        for entry in document["tokens"]:
            self.tokens_seen.add(entry["access_token"])
            if entry.get("refresh_token"):
                self.tokens_seen.add(entry["refresh_token"])
        for client in document["clients"]:
            if client.get("client_secret"):
                self.tokens_seen.add(client["client_secret"])


@pytest.fixture
def machine(tmp_path: Path) -> Session:
    browser = tmp_path / "browser"
    browser.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{FOLLOW_REDIRECTS}" "$@"\n')
    browser.chmod(0o700)
    env = {
        "MCPTASK_STATE_DIR": str(tmp_path / "state"),
        "MCPTASK_CONFIG_DIR": str(tmp_path / "config"),
        "BROWSER_PROGRAM": str(browser),
        "BROWSER": "",  # no browser unless a step sets one (whatever the developer's is)
    }
    return Session(tmp_path, env)


def ci_key(tmp_path: Path) -> tuple[Path, Path]:
    """An EC P-256 key pair: the private key for mcptask, the public one for the server."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    key = ec.generate_private_key(ec.SECP256R1())
    private = tmp_path / "ci-key.pem"
    private.touch(mode=0o600)
    private.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    public = tmp_path / "ci-key.pub.pem"
    public.write_bytes(
        key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return private, public


def test_login_list_refresh_logout_and_ci_without_a_leak(
    reference_server: StartServer, machine: Session, tmp_path: Path
) -> None:
    private_key, public_key = ci_key(tmp_path)
    url = reference_server(
        "--oauth",
        "--oauth-token-ttl",
        "4",
        "--seed",
        "working=2",
        "--oauth-client",
        f"{CI_CLIENT}:{CI_SECRET}",
        "--oauth-client-key",
        f"jwt-robot={public_key}",
    )
    browser = machine.env["BROWSER_PROGRAM"]

    # Without sign-in, no terminal and no BROWSER: exit 4, the challenge and the way out.
    refused = machine.run("list", "--url", url)
    refused.assert_one_line_error(4, "requires sign-in", "mcptask login", "client-credentials")
    assert 'resource_metadata="' in refused.stderr

    # A person signs in; the browser step is follow_redirects.py.
    login = machine.run("login", url, "-o", "json", BROWSER=browser)
    assert login.code == 0, login.stderr
    signed = login.json()
    assert signed["signedIn"] is True
    assert signed["grant"] == "authorization_code"
    assert signed["refreshable"] is True
    assert "tasks:write" in signed["scope"].split()
    assert signed["resource"] == url
    assert stat.S_IMODE(machine.cache.stat().st_mode) == 0o600
    assert stat.S_IMODE(machine.cache.parent.stat().st_mode) == 0o700
    first_access = machine.cached()["tokens"][0]["access_token"]

    # Later commands use the cached token: no browser (BROWSER is not even set).
    listed = machine.run("list", "--url", url, "-o", "ids", "-v")
    assert listed.code == 0, listed.stderr
    assert sorted(listed.stdout.split()) == ["working-001", "working-002"]
    assert "refresh" not in listed.stderr

    # After expiry the refresh token renews it silently: wait until the cached token (4 s
    # after it was issued) says it has expired, as the server's clock agrees.
    expires_at = machine.cached()["tokens"][0]["expires_at"]
    time.sleep(max(0.0, expires_at - time.time()) + 0.1)
    renewed = machine.run("list", "--url", url, "-o", "ids", "-v")
    assert renewed.code == 0, renewed.stderr
    assert "grant refresh_token" in renewed.stderr
    assert machine.cached()["tokens"][0]["access_token"] != first_access

    # A write needs tasks:write, which the browser grant carries.
    cancelled = machine.run("cancel", "working-001", "--url", url, "-o", "json")
    assert cancelled.code == 0, cancelled.stderr

    # logout forgets the token; the server refuses again.
    logout = machine.run("logout", url, "-o", "json")
    assert logout.code == 0
    assert [entry["grant"] for entry in logout.json()["forgotten"]] == ["authorization_code"]
    assert machine.cached()["tokens"] == []
    machine.run("list", "--url", url).assert_one_line_error(4, "requires sign-in")

    # CI: client credentials with a secret, asking only for tasks:read; a cancel then gets
    # 403 insufficient_scope, and mcptask steps up once (client credentials again).
    issuer = url.removesuffix("/mcp")  # the reference server is its own authorization server
    ci = {
        "MCPTASK_CLIENT_ID": CI_CLIENT,
        "MCPTASK_CLIENT_SECRET": CI_SECRET,
        "MCPTASK_CLIENT_ISSUER": issuer,
    }
    read_only = machine.run(
        "list", "--url", url, "--auth", "client-credentials", "--scope", "tasks:read", "-v", **ci
    )
    assert read_only.code == 0, read_only.stderr
    assert "grant client_credentials" in read_only.stderr
    # The same --scope: should the read-only token expire first (its lifetime is 4 s, and a
    # loaded machine is slow), the new sign-in asks for tasks:read again, and the 403 comes.
    step_up = machine.run(
        "cancel",
        "working-002",
        "--url",
        url,
        "--auth",
        "client-credentials",
        "--scope",
        "tasks:read",
        "-v",
        **ci,
    )
    assert step_up.code == 0, step_up.stderr
    assert "stepping up" in step_up.stderr
    grants = {entry["client_id"]: entry for entry in machine.cached()["tokens"]}
    assert "tasks:write" in grants[CI_CLIENT]["scope"].split()

    # CI: a wrong secret is refused by the authorization server: exit 4, one line.
    wrong = machine.run(
        "list",
        "--url",
        url,
        "--auth",
        "client-credentials",
        MCPTASK_CLIENT_ID="other-robot",
        MCPTASK_CLIENT_SECRET="not-the-secret",
        MCPTASK_CLIENT_ISSUER=issuer,
    )
    wrong.assert_one_line_error(4, "invalid_client")

    # CI: private_key_jwt, from a profile that names the key file (no secret anywhere).
    saved = machine.run(
        "connect",
        url,
        "--auth",
        "client-credentials",
        "--client-id",
        "jwt-robot",
        "--client-key-file",
        str(private_key),
        "--client-issuer",
        issuer,
        "--save",
        "ci",
        "-o",
        "json",
    )
    assert saved.code == 0, saved.stderr
    profile_text = (machine.root / "config" / "profiles.toml").read_text()
    assert 'auth = "client-credentials"' in profile_text
    assert f'client_issuer = "{issuer}"' in profile_text
    with_profile = machine.run("list", "--profile", "ci", "-o", "ids", "-v")
    assert with_profile.code == 0, with_profile.stderr
    jwt_entries = [t for t in machine.cached()["tokens"] if t["client_id"] == "jwt-robot"]
    assert [t["auth_method"] for t in jwt_entries] == ["private_key_jwt"]
    assert [t["grant"] for t in jwt_entries] == ["client_credentials"]

    # The leak check: no secret in any output, nor in any file but the token cache.
    secrets = {CI_SECRET, *machine.tokens_seen}
    key_body = "".join(private_key.read_text().splitlines()[1:-1])
    assert len(secrets) >= 6
    for result in machine.outputs:
        for secret in secrets:
            assert secret not in result.stdout
            assert secret not in result.stderr
        assert key_body[:40] not in result.stdout + result.stderr
    for path in machine.root.rglob("*"):
        if not path.is_file() or path in (machine.cache, private_key):
            continue
        text = path.read_bytes().decode("utf-8", "replace")
        for secret in secrets:
            assert secret not in text, f"a secret is in {path}"
        assert key_body[:40] not in text, f"the private key is in {path}"
    for path in (machine.root / "state").rglob("*"):
        assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, f"{path} is readable by others"
    assert os.environ.get("MCPTASK_CLIENT_SECRET") is None


def test_no_browser_prints_the_url_and_waits_for_the_redirect(
    reference_server: StartServer, machine: Session
) -> None:
    import re
    import subprocess

    from tests.cli_process import mcptask_argv

    url = reference_server("--oauth")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPTASK_")}
    env.update({**machine.env, "NO_COLOR": "1"})
    login = subprocess.Popen(
        [*mcptask_argv(), "login", url, "--no-browser", "-o", "json"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert login.stderr is not None
        shown = ""
        while "open this URL" not in shown:
            line = login.stderr.readline()
            assert line, f"login ended without a URL: {shown}"
            shown += line
        authorize = re.search(r"(http://\S+/oauth/authorize\S+)", shown)
        assert authorize is not None
        assert "code_challenge_method=S256" in authorize.group(1)
        assert "resource=" in authorize.group(1)
        followed = subprocess.run(
            [sys.executable, str(FOLLOW_REDIRECTS), authorize.group(1)], check=False, timeout=30
        )
        assert followed.returncode == 0
        stdout, _ = login.communicate(timeout=30)
    finally:
        if login.poll() is None:
            login.kill()
            login.wait()
    assert login.returncode == 0
    assert json.loads(stdout)["signedIn"] is True


def two_signed_out_servers(reference_server: StartServer, machine: Session) -> None:
    """Profiles `one` and `two`: reference servers that each need a sign-in."""
    urls = {name: reference_server("--oauth", "--seed", "working=1") for name in ("one", "two")}
    config = Path(machine.env["MCPTASK_CONFIG_DIR"])
    config.mkdir(parents=True)
    (config / "profiles.toml").write_text(
        "".join(f'[profiles.{name}]\nurl = "{url}"\n\n' for name, url in urls.items()),
        encoding="utf-8",
    )


def test_servers_signed_in_to_at_once_open_one_browser_at_a_time(
    reference_server: StartServer, machine: Session, tmp_path: Path
) -> None:
    """A fleet run whose servers both need a browser sign-in: the second browser opens only
    once the first sign-in is over. The stand-in browser notes when it opens and when it is
    done, and before following the URL gives another browser up to 3 s to open beside it
    (which they did before the sign-ins took turns)."""
    two_signed_out_servers(reference_server, machine)
    log = tmp_path / "browsers.log"
    browser = tmp_path / "taking-turns-browser"
    browser.write_text(
        "#!/bin/sh\n"
        f'echo open >> "{log}"\n'
        "n=0\n"
        f'while [ "$(grep -c open "{log}")" -lt 2 ] && [ $n -lt 30 ]; do\n'
        "  sleep 0.1; n=$((n + 1))\n"
        "done\n"
        f'"{sys.executable}" "{FOLLOW_REDIRECTS}" "$@"; status=$?\n'
        f'echo done >> "{log}"\n'
        "exit $status\n"
    )
    browser.chmod(0o700)
    result = machine.run(
        "list", "-P", "one,two", "--auth", "browser", "-o", "json", BROWSER=str(browser)
    )
    assert result.code == 0, result.stderr
    assert [section["outcome"] for section in result.json()["servers"]] == ["ok", "ok"]
    assert log.read_text().split() == ["open", "done", "open", "done"]
    assert result.stderr.count("signing in to ") == 2


def test_ctrl_c_ends_the_sign_in_in_progress_and_the_one_waiting_its_turn(
    reference_server: StartServer, machine: Session
) -> None:
    """A browser that opens and is never finished (/bin/true): Ctrl-C ends that sign-in and
    the other server's, still waiting for its turn, instead of each waiting out its 300 s."""
    two_signed_out_servers(reference_server, machine)
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPTASK_")}
    env.update(machine.env, BROWSER="/bin/true", NO_COLOR="1")
    argv = [*mcptask_argv(), "list", "-P", "one,two", "--auth", "browser", "-o", "json"]
    process = subprocess.Popen(
        argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
    )
    try:
        assert process.stderr is not None
        shown = []
        for line in process.stderr:
            shown.append(line.decode())
            if b"opening the browser" in line:
                break
        process.send_signal(signal.SIGINT)
        stdout, rest = process.communicate(timeout=60)
    finally:
        stop_process(process)
    stderr = "".join(shown) + rest.decode()
    assert process.returncode == 130, stderr
    assert "Traceback" not in stderr
    assert stderr.count("opening the browser") == 1
    found = [section["outcome"] for section in json.loads(stdout)["servers"]]
    assert found == ["failed", "failed"]
    assert stderr.count("the browser sign-in was stopped before it finished") == 2

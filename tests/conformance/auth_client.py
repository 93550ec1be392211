"""The client the conformance runner starts for its `auth/*` scenarios: `auth_client.py URL`.

It runs `mcptask connect URL` as users do, configured only through mcptask's documented
variables, which it takes from what the runner hands over:

- MCP_CONFORMANCE_CONTEXT `client_id` -> MCPTASK_CLIENT_ID, `client_secret` ->
  MCPTASK_CLIENT_SECRET, `private_key_pem` -> a 0600 key file named by
  MCPTASK_CLIENT_KEY_FILE; with them MCPTASK_CLIENT_ISSUER, the scenario's authorization
  server, which a CI job knows from its own configuration and this client reads from the
  server's protected resource metadata (the runner does not hand it over);
- the `auth/client-credentials-*` scenarios (SEP-1046, machine-to-machine) run in CI mode,
  `--auth client-credentials`; every other scenario in the default `--auth auto`;
- BROWSER names follow_redirects.py, which plays the person who approves in the browser;
- MCPTASK_CLIENT_METADATA_URL is the scenario's Client ID Metadata Document URL, as a
  deployment that publishes one would set it (used only where the server supports them);
- MCPTASK_STATE_DIR / MCPTASK_CONFIG_DIR are a fresh directory (no token from elsewhere).

`auth/scope-step-up` needs a `tools/call` after the handshake: no mcptask command sends one
to a server without tasks, so this client then sends it through mcptask's own connection
code (`Invocation.client`, the path every command takes), in a second process that starts
from the token cache the first one left.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
CIMD_URL = "https://conformance-test.local/client-metadata.json"
STEP_UP = "auth/scope-step-up"


def issuer_of(url: str) -> str:
    """The first authorization server that `url`'s protected resource metadata names (RFC 9728,
    at the path-based well-known location the scenarios serve it at)."""
    import httpx

    resource = httpx.URL(url)
    metadata = resource.copy_with(
        path="/.well-known/oauth-protected-resource" + resource.path.rstrip("/"), query=None
    )
    servers = httpx.get(metadata, timeout=10).raise_for_status().json()["authorization_servers"]
    return str(servers[0])


def mcptask_argv() -> list[str]:
    script = Path(sys.executable).parent / "mcptask"
    return [str(script)] if script.exists() else [sys.executable, "-m", "mcptask"]


def environment(work: Path, url: str) -> tuple[dict[str, str], list[str]]:
    """mcptask's variables for this scenario, and the extra options of its command line."""
    scenario = os.environ.get("MCP_CONFORMANCE_SCENARIO", "")
    context = json.loads(os.environ.get("MCP_CONFORMANCE_CONTEXT") or "{}")
    env = {k: v for k, v in os.environ.items() if not k.startswith("MCPTASK_")}
    browser = work / "browser"
    browser.write_text(
        f'#!/bin/sh\nexec "{sys.executable}" "{HERE / "follow_redirects.py"}" "$@"\n'
    )
    browser.chmod(0o700)
    env.update(
        {
            "MCPTASK_STATE_DIR": str(work / "state"),
            "MCPTASK_CONFIG_DIR": str(work / "config"),
            "MCPTASK_CLIENT_METADATA_URL": CIMD_URL,
            "BROWSER": str(browser),
            "NO_COLOR": "1",
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")])),
        }
    )
    if "client_id" in context:
        env["MCPTASK_CLIENT_ID"] = context["client_id"]
    if "client_secret" in context:
        env["MCPTASK_CLIENT_SECRET"] = context["client_secret"]
    if "private_key_pem" in context:
        key = work / "client-key.pem"
        key.touch(mode=0o600)
        key.write_text(context["private_key_pem"])
        env["MCPTASK_CLIENT_KEY_FILE"] = str(key)
    if "client_secret" in context or "private_key_pem" in context:
        env["MCPTASK_CLIENT_ISSUER"] = issuer_of(url)
    options = ["--auth", "client-credentials"] if "client-credentials" in scenario else []
    return env, options


def call_tool(url: str) -> int:
    """`tools/call test-tool` through mcptask's connection code (the step-up scenario)."""
    from mcptask.cli.invocation import Invocation
    from mcptask.cli.options import Common
    from mcptask.errors import McptaskError

    try:
        invocation = Invocation(Common(url=url, protocol="2025-11-25"))
        with invocation.client() as client:
            client.call("tools/call", {"name": "test-tool", "arguments": {}})
    except McptaskError as error:
        print(f"tools/call failed: {error.message}", file=sys.stderr)
        return int(error.exit_code)
    print("tools/call test-tool: ok", file=sys.stderr)
    return 0


def main(argv: list[str]) -> int:
    if len(argv) == 3 and argv[1] == "--call-tool":
        return call_tool(argv[2])
    if len(argv) != 2:
        print("usage: auth_client.py SERVER_URL", file=sys.stderr)
        return 2
    url = argv[1]
    work = Path(tempfile.mkdtemp(prefix="mcptask-conformance-client-"))
    try:
        env, options = environment(work, url)
        done = subprocess.run(
            [*mcptask_argv(), "connect", url, "-o", "json", "-v", *options],
            env=env,
            check=False,
        )
        if done.returncode != 0 or os.environ.get("MCP_CONFORMANCE_SCENARIO") != STEP_UP:
            return done.returncode
        again = subprocess.run(
            [sys.executable, str(Path(__file__)), "--call-tool", url], env=env, check=False
        )
        return again.returncode
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv))

"""Run the official conformance runner's client `auth/*` scenarios with mcptask as the client.

The runner (``conformance client --command CMD --scenario NAME``) starts its own MCP server
and authorization server for the scenario, runs ``CMD SERVER_URL`` with the scenario's
context in MCP_CONFORMANCE_CONTEXT, and records checks. CMD is ``auth_client.py`` (the
adapter that maps the context to mcptask's variables and runs ``mcptask connect``).

Both pinned runners that run.py installs are used: 0.1.16 (the latest release) and
0.2.0-alpha.12; each lists every scenario below under the same name. Their servers listen
on every interface (``listen(0)``); a preload makes them bind 127.0.0.1.

A scenario passes when its checks have at least one SUCCESS and no FAILURE, SKIPPED or
WARNING (the runner itself counts a warning as an overall failure: here a warning is a
SHOULD of the spec that mcptask did not do), and the runner exited 0 (it fails a client that
exits non-zero, except in scenarios where an error exit is the expected end).

Usage::

    python tests/conformance/client_auth.py               # every scenario, a table
    python tests/conformance/client_auth.py --only auth/scope-step-up --results-dir /tmp/c
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.conformance import run

HERE = Path(__file__).resolve().parent
RUNNERS: tuple[run.Runner, ...] = (run.BASIC, run.TASKS)
ADAPTER = HERE / "auth_client.py"
PRELOAD = HERE / "loopback_only.cjs"
SCENARIO_TIMEOUT_MS = 60_000

SCENARIOS: tuple[str, ...] = (
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/resource-mismatch",
    "auth/client-credentials-jwt",
    "auth/client-credentials-basic",
)
"""The scenarios issue 11 names, in the runner's order; each is required to pass (but the
2025-03-26 endpoint fallback, which needs a registration at a guessed endpoint: NOT_COVERED)."""

_OFFLINE = ("auth/offline-access-scope", "auth/offline-access-not-supported")
EXTRA_SCENARIOS: dict[str, tuple[str, ...]] = {
    run.BASIC.version: _OFFLINE,
    run.TASKS.version: (
        *_OFFLINE,
        "auth/iss-supported",
        "auth/iss-not-advertised",
        "auth/iss-supported-missing",
        "auth/iss-wrong-issuer",
        "auth/iss-unexpected",
        "auth/iss-normalized",
        "auth/metadata-issuer-mismatch",
    ),
}
"""Per runner version: further auth scenarios (drafts, RFC 9207 `iss`), required to pass too."""

_TOKEN_EXCHANGE = (
    "enterprise extension (token exchange with an identity provider's ID token): not part "
    "of mcptask's sign-in"
)
_DPOP = "DPoP-bound tokens (RFC 9449, SEP-1932): mcptask sends Bearer tokens only"
_GUESSED_ENDPOINTS = (
    "a 2025-03-26 server without any OAuth metadata, whose checks require a registration "
    "POSTed to the guessed /register (and /authorize, /token): mcptask guesses no endpoint "
    "(issue 21: a static-token server got a registration); it says the server publishes no "
    "OAuth metadata and points at MCPTASK_TOKEN / --token-file"
)
NOT_COVERED: dict[str, dict[str, str]] = {
    run.BASIC.version: {
        "auth/cross-app-access-complete-flow": _TOKEN_EXCHANGE,
        "auth/2025-03-26-oauth-endpoint-fallback": _GUESSED_ENDPOINTS,
    },
    run.TASKS.version: {
        "auth/2025-03-26-oauth-endpoint-fallback": _GUESSED_ENDPOINTS,
        "auth/enterprise-managed-authorization": _TOKEN_EXCHANGE,
        "auth/dpop": _DPOP,
        "auth/dpop-nonce": _DPOP,
        "auth/wif-jwt-bearer": "workload identity federation (a JWT bearer grant from the "
        "platform's identity token): not part of mcptask's sign-in",
        "auth/authorization-server-migration": "needs a second authorized request in one "
        "connection after the server moves to another authorization server; `mcptask "
        "connect` makes one (mcptask does discover anew at every 401, and keeps clients per "
        "issuer)",
    },
}
"""Per runner version: the auth scenarios not run here, and why."""


def scenarios(runner: run.Runner) -> tuple[str, ...]:
    """Every scenario required of mcptask with this runner."""
    return (*SCENARIOS, *EXTRA_SCENARIOS[runner.version])


def list_auth_scenarios(tools: run.Tools, runner: run.Runner) -> list[str]:
    """The `auth/*` client scenarios the installed runner lists."""
    done = subprocess.run(
        [str(tools.node), str(tools.runner_entry(runner)), "list", "--client"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=run._node_env(),
    )
    if done.returncode != 0:
        raise run.HarnessError(f"conformance list --client failed: {done.stderr.strip()}")
    return re.findall(r"^\s*-\s+(auth/\S+)", done.stdout, flags=re.MULTILINE)


def classify(checks: Sequence[run.Check], runner_exit: int | None) -> tuple[run.Outcome, str]:
    """pass: SUCCESS present; no FAILURE, SKIPPED or WARNING; the runner exited 0."""
    outcome, detail = run.classify(checks)
    warnings = [check.id for check in checks if check.status == "WARNING"]
    if outcome == "pass" and warnings:
        return "fail", "warnings: " + ", ".join(warnings)
    if outcome == "pass" and runner_exit != 0:
        return "fail", f"the runner exited {runner_exit} (the client failed where it must not)"
    return outcome, detail


def run_scenario(
    tools: run.Tools, runner: run.Runner, scenario: str, *, results_dir: Path | None = None
) -> run.ScenarioResult:
    """Run one client scenario with mcptask as the client."""
    started = time.monotonic()
    result = run.ScenarioResult(runner.version, scenario, True, "error")
    with tempfile.TemporaryDirectory(prefix="mcptask-conformance-client-") as tmp:
        out = Path(tmp)
        argv = [
            str(tools.node),
            "--require",
            str(PRELOAD),
            str(tools.runner_entry(runner)),
            "client",
            "--command",
            f"{sys.executable} {ADAPTER}",
            "--scenario",
            scenario,
            "--output-dir",
            str(out),
            "--timeout",
            str(SCENARIO_TIMEOUT_MS),
        ]
        done: subprocess.CompletedProcess[str] | None
        try:
            done = subprocess.run(
                argv,
                cwd=out,
                capture_output=True,
                text=True,
                timeout=SCENARIO_TIMEOUT_MS / 1000 + 60,
                check=False,
                env=run._node_env(),
            )
            output = done.stdout + done.stderr
        except subprocess.TimeoutExpired as expired:
            output = f"timed out; {expired.stdout!r}"
            done = None
        found = sorted(out.rglob("checks.json"))
        if found:
            raw = json.loads(found[-1].read_text())
            result.checks = [run.Check.from_json(item) for item in raw]
            result.outcome, result.detail = classify(
                result.checks, done.returncode if done is not None else None
            )
        else:
            exit_note = "" if done is None else f"runner exit {done.returncode}, "
            result.detail = exit_note + "no checks.json: " + run._crash_summary(output)
        if result.outcome != "pass":
            result.detail += "\n" + _client_output(out, output)
        if results_dir is not None:
            target = results_dir / runner.version / scenario.replace("/", "_")
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(out, target)
            (target / "runner-output.txt").write_text(output)
    result.seconds = time.monotonic() - started
    return result


def _client_output(out: Path, output: str) -> str:
    """What mcptask printed (the runner saves it), for the failure report."""
    parts = []
    for name in ("stdout.txt", "stderr.txt"):
        for path in out.rglob(name):
            parts.append(f"--- client {name} ---\n{path.read_text()[-4000:]}")
    return "\n".join(parts) or f"--- runner output ---\n{output[-4000:]}"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", action="append", default=[], metavar="SCENARIO")
    parser.add_argument("--results-dir", type=Path)
    parser.add_argument("--runner", action="append", default=[], metavar="VERSION")
    args = parser.parse_args(argv)
    unknown = set(args.only) - {s for r in RUNNERS for s in scenarios(r)}
    if unknown:
        print(f"unknown scenario(s): {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    try:
        tools = run.ensure_tools()
    except run.HarnessError as error:
        print(f"conformance: harness error: {error}", file=sys.stderr)
        return 2
    results = []
    for runner in [r for r in RUNNERS if not args.runner or r.version in args.runner]:
        for scenario in [s for s in scenarios(runner) if not args.only or s in args.only]:
            print(
                f"conformance {runner.version} client {scenario} ...",
                file=sys.stderr,
                end=" ",
                flush=True,
            )
            result = run_scenario(tools, runner, scenario, results_dir=args.results_dir)
            print(f"{result.outcome} ({result.seconds:.1f}s)", file=sys.stderr, flush=True)
            results.append(result)
    print(run.format_table(results))
    for result in results:
        if result.outcome != "pass":
            print(f"\n{result.scenario}: {result.outcome}\n{run.format_details([result])}")
    return 0 if all(r.outcome == "pass" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())

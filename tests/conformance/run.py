"""Run the official MCP conformance runner against mcptask's embedded reference server.

The runner is the npm package ``@modelcontextprotocol/conformance`` and needs Node 22. Both
come from the npm registry, pinned by ``tests/conformance/npm/package-lock.json``, and are
installed once with ``npm ci`` into ``<repo>/.conformance/`` (override with the environment
variable MCPTASK_CONFORMANCE_DIR); the install is redone only when that lock file changes.
The directory ignores itself (it holds a ``.gitignore`` of ``*``; the repository's
``.gitignore`` lists it too).

Two runner versions are used:

- 0.1.16, the latest release: the basic server scenarios (initialize, ping, logging,
  tools/list, SSE streams, DNS-rebinding protection, ...), spec 2025-11-25;
- 0.2.0-alpha.12, the newest pre-release: its ``tasks-*`` scenarios, which test the
  ``io.modelcontextprotocol/tasks`` extension (SEP-2663) over the stateless 2026-07-28
  protocol (no initialize, no session; ``_meta`` carries the client's capabilities).

Every scenario of a runner's catalogue below is expected to pass except the ones in
NOT_APPLICABLE, each with its reason. For each scenario a fresh reference server is started
(``python -m tests.conformance.fixture_server --http 127.0.0.1:0 ...``: the reference server
with the tools the scenarios call, greet, slow_compute, test_simple_text, ..., from
fixtures/), the runner is run against its URL with ``--scenario``, and the server is stopped
by PID. A scenario passes when its ``checks.json`` has at least one SUCCESS
and no FAILURE or SKIPPED check, and every check that REQUIRED_CHECKS names for it succeeded
(where the runner only warns about a missing fixture); a runner crash, a timeout, or only
skipped/informational checks is not a pass.

The runner's client scenarios (`auth/*`, with `mcptask connect` as the client) are run by
client_auth.py beside this file, from the same install.

Usage::

    python tests/conformance/run.py                 # install if needed, run, print a table
    python tests/conformance/run.py --list          # the catalogue and what applies
    python tests/conformance/run.py --only ping --only tasks-lifecycle
    python tests/conformance/run.py --include-not-applicable --results-dir /tmp/conf

Exit status: 0 when every required scenario passed, 1 when one did not, 2 when the harness
itself failed (npm missing, install failed, the server did not start, the catalogue changed).
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import json
import os
import platform
import queue
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Literal

HERE = Path(__file__).resolve().parent
REPO_ROOT = HERE.parents[1]
NPM_PROJECT = HERE / "npm"
TOOLS_DIR_ENV = "MCPTASK_CONFORMANCE_DIR"
DEFAULT_TOOLS_DIR = REPO_ROOT / ".conformance"
NODE_VERSION = "22.23.3"
MARKER_NAME = ".mcptask-conformance-installed"
LOCK_NAME = ".mcptask-conformance.lock"

INSTALL_TIMEOUT = 900.0
SERVER_START_TIMEOUT = 30.0
SCENARIO_TIMEOUT = 150.0
MESSAGE_WIDTH = 600  # longer check messages are cut in the printed details (not in --json)
URL_LINE = re.compile(r"mcptask reference server listening on (http://\S+/mcp)")


@dataclass(frozen=True)
class Runner:
    """One pinned version of the conformance runner and the server scenarios used from it."""

    version: str
    # The runner's own server scenarios that this harness covers, in the runner's order.
    # A test checks this against the runner's `list --server`, so it cannot go stale.
    scenarios: tuple[str, ...]
    # Which names of `list --server` belong to `scenarios` (the rest are out of scope).
    prefix: str = ""
    extra_args: tuple[str, ...] = ()

    @property
    def package(self) -> str:
        """The npm alias (directory under node_modules) that package.json installs it as."""
        return f"conformance-{self.version}"


BASIC = Runner(
    version="0.1.16",
    scenarios=(
        "server-initialize",
        "logging-set-level",
        "ping",
        "completion-complete",
        "tools-list",
        "tools-call-simple-text",
        "tools-call-image",
        "tools-call-audio",
        "tools-call-embedded-resource",
        "tools-call-mixed-content",
        "tools-call-with-logging",
        "tools-call-error",
        "tools-call-with-progress",
        "tools-call-sampling",
        "tools-call-elicitation",
        "json-schema-2020-12",
        "elicitation-sep1034-defaults",
        "server-sse-polling",
        "server-sse-multiple-streams",
        "elicitation-sep1330-enums",
        "resources-list",
        "resources-read-text",
        "resources-read-binary",
        "resources-templates-read",
        "resources-subscribe",
        "resources-unsubscribe",
        "prompts-list",
        "prompts-get-simple",
        "prompts-get-with-args",
        "prompts-get-embedded-resource",
        "prompts-get-with-image",
        "dns-rebinding-protection",
    ),
)
TASKS = Runner(
    version="0.2.0-alpha.12",
    scenarios=(
        "tasks-lifecycle",
        "tasks-capability-negotiation",
        "tasks-wire-fields",
        "tasks-request-state-removal",
        "tasks-mrtr-input",
        "tasks-request-headers",
        "tasks-dispatch-and-envelope",
        "tasks-status-notifications",
        "tasks-required-task-error",
        "tasks-mrtr-composition",
    ),
    prefix="tasks-",
    extra_args=("--timeout", "30000"),
)
RUNNERS: tuple[Runner, ...] = (BASIC, TASKS)

_SERVER_REQUESTS = (
    "needs {what} requests from the server to the client during a 2025-11-25 tools/call; "
    "the reference server, a tasks server, never sends requests to clients: it gathers "
    "input the 2026-07-28 way (task inputRequests + tasks/update, multi round-trip "
    "requests), as tasks-mrtr-input and tasks-mrtr-composition test"
)
_ELICITATION = _SERVER_REQUESTS.format(what="elicitation/create")
_NO_RESOURCES = "resources feature: the server offers no resources (it is a tasks server)"
_NO_PROMPTS = "prompts feature: the server offers no prompts (it is a tasks server)"
# Scenarios that cannot apply to the reference server, with the reason. Everything else in a
# runner's catalogue is expected to pass.
NOT_APPLICABLE: dict[str, str] = {
    "completion-complete": "completion/complete completes prompt and resource-template "
    "arguments: the server has no prompts, resources or completions capability",
    "tools-call-sampling": _SERVER_REQUESTS.format(what="sampling/createMessage"),
    "tools-call-elicitation": _ELICITATION,
    "elicitation-sep1034-defaults": _ELICITATION,
    "elicitation-sep1330-enums": _ELICITATION,
    "resources-list": _NO_RESOURCES,
    "resources-read-text": _NO_RESOURCES,
    "resources-read-binary": _NO_RESOURCES,
    "resources-templates-read": _NO_RESOURCES.replace("resources", "resource templates", 2),
    "resources-subscribe": _NO_RESOURCES + " and no resources/subscribe",
    "resources-unsubscribe": _NO_RESOURCES + " and no resources/subscribe",
    "prompts-list": _NO_PROMPTS,
    "prompts-get-simple": _NO_PROMPTS,
    "prompts-get-with-args": _NO_PROMPTS,
    "prompts-get-embedded-resource": _NO_PROMPTS,
    "prompts-get-with-image": _NO_PROMPTS,
    "tasks-status-notifications": "a stub in 0.2.0-alpha.12: it emits one SKIPPED check "
    "(its harness awaits a rewrite for the subscriptions/listen stream) and tests nothing",
}

# Scenarios known to fail, with the reason (an issue, say). They do not fail the run, are
# reported as "xfail", and fail it as soon as they pass ("xpass"), so the entry gets removed.
# Keep this empty unless a failure must not block CI; nothing here counts as a pass.
KNOWN_FAILURES: dict[str, str] = {}

# Checks that must be SUCCESS for a scenario to pass, where the runner reports their failure
# only as a WARNING (or INFO): without this, a server lacking the fixture would still pass.
# server-sse-polling warns when test_reconnection is missing, when the stream is not closed
# mid-call, or when the resumed stream does not deliver the response.
REQUIRED_CHECKS: dict[str, frozenset[str]] = {
    "server-sse-polling": frozenset(
        {"server-sse-priming-event", "server-sse-retry-field", "server-sse-disconnect-resume"}
    ),
}

# Reference-server options per scenario. The runner calls fixture tools of fixed names
# (greet, slow_compute, test_simple_text, ...): fixture_server.py offers them, so that the
# reference server's own tool list stays long_job alone.
SCENARIO_SERVER_ARGS: dict[str, tuple[str, ...]] = {}

Outcome = Literal["pass", "fail", "error", "skipped", "n/a", "xfail", "xpass"]
NOT_PASSING: frozenset[str] = frozenset({"fail", "error", "skipped", "xpass"})


class HarnessError(RuntimeError):
    """The harness could not do its job (install, server start, catalogue)."""


# --------------------------------------------------------------------------------------------
# Installing Node 22 and the runners
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Tools:
    """Where the installed tools are."""

    root: Path
    node: Path

    def runner_entry(self, runner: Runner) -> Path:
        return self.root / "node_modules" / runner.package / "dist" / "index.js"


def tools_dir() -> Path:
    override = os.environ.get(TOOLS_DIR_ENV)
    return Path(override).resolve() if override else DEFAULT_TOOLS_DIR


def _node_package() -> str:
    machine = platform.machine().lower()
    arch = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64"}.get(machine)
    if sys.platform != "linux" or arch is None:
        raise HarnessError(
            f"no pinned Node 22 package for {sys.platform}/{machine} in {NPM_PROJECT}/package.json"
        )
    return f"node-linux-{arch}"


def _lock_digest() -> str:
    digest = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        digest.update(name.encode() + b"\0" + (NPM_PROJECT / name).read_bytes() + b"\0")
    return digest.hexdigest()


def _node_path(root: Path) -> Path:
    return root / "node_modules" / _node_package() / "bin" / "node"


def _is_installed(root: Path, digest: str) -> bool:
    marker = root / MARKER_NAME
    if not marker.is_file() or marker.read_text().strip() != digest:
        return False
    if not _node_path(root).is_file():
        return False
    return all(Tools(root, _node_path(root)).runner_entry(r).is_file() for r in RUNNERS)


def _npm_ci(root: Path, log: IO[str]) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise HarnessError(
            "npm is not on PATH; it is needed once to install Node 22 and the runner"
        )
    (root / MARKER_NAME).unlink(missing_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(NPM_PROJECT / name, root / name)
    argv = [npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"]
    print(f"conformance: installing into {root}: {' '.join(argv[1:])}", file=log, flush=True)
    started = time.monotonic()
    try:
        done = subprocess.run(
            argv, cwd=root, capture_output=True, text=True, timeout=INSTALL_TIMEOUT, check=False
        )
    except subprocess.TimeoutExpired:
        raise HarnessError(f"npm ci did not finish within {INSTALL_TIMEOUT:.0f}s") from None
    if done.returncode != 0:
        raise HarnessError(
            f"npm ci failed (exit {done.returncode}) in {root}\n--- stdout ---\n{done.stdout}"
            f"\n--- stderr ---\n{done.stderr}"
        )
    print(f"conformance: installed in {time.monotonic() - started:.0f}s", file=log, flush=True)


def ensure_tools(log: IO[str] = sys.stderr) -> Tools:
    """Install Node 22 and the pinned runners once (``npm ci``); return where they are.

    Reused while the marker file holds the hash of package.json + package-lock.json and the
    files are there. An fcntl lock keeps concurrent callers from installing at once.
    """
    root = tools_dir()
    root.mkdir(parents=True, exist_ok=True)
    ignore = root / ".gitignore"
    if not ignore.exists():
        ignore.write_text("# installed by tests/conformance/run.py\n*\n")
    digest = _lock_digest()
    with open(root / LOCK_NAME, "a+b") as lock:
        fcntl.flock(lock.fileno(), fcntl.LOCK_EX)
        try:
            if not _is_installed(root, digest):
                _npm_ci(root, log)
                (root / MARKER_NAME).write_text(digest + "\n")
        finally:
            fcntl.flock(lock.fileno(), fcntl.LOCK_UN)
    tools = Tools(root, _node_path(root))
    version = node_version(tools)
    if version != f"v{NODE_VERSION}":
        raise HarnessError(f"{tools.node} reports {version!r}, expected v{NODE_VERSION}")
    return tools


def node_version(tools: Tools) -> str:
    done = subprocess.run(
        [str(tools.node), "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    return done.stdout.strip()


def _node_env() -> dict[str, str]:
    env = dict(os.environ)
    env["NO_COLOR"] = "1"
    env["FORCE_COLOR"] = "0"
    return env


def list_server_scenarios(tools: Tools, runner: Runner) -> list[str]:
    """The server scenario names that ``conformance list --server`` prints, in order."""
    done = subprocess.run(
        [str(tools.node), str(tools.runner_entry(runner)), "list", "--server"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=_node_env(),
    )
    if done.returncode != 0:
        raise HarnessError(f"conformance {runner.version} list failed: {done.stderr.strip()}")
    names = re.findall(r"^\s*-\s+(\S+)", done.stdout, flags=re.MULTILINE)
    return [name for name in names if name.startswith(runner.prefix)]


def catalogue_problems(tools: Tools, runner: Runner) -> list[str]:
    """Differences between ``runner.scenarios`` and what the installed runner lists."""
    listed = list_server_scenarios(tools, runner)
    problems = [
        f"{runner.version}: {name} is listed by the runner but not in the catalogue"
        for name in listed
        if name not in runner.scenarios
    ]
    problems += [
        f"{runner.version}: {name} is in the catalogue but not listed by the runner"
        for name in runner.scenarios
        if name not in listed
    ]
    return problems


# --------------------------------------------------------------------------------------------
# The reference server
# --------------------------------------------------------------------------------------------


def server_args(scenario: str, extra: Sequence[str] = ()) -> list[str]:
    return [*SCENARIO_SERVER_ARGS.get(scenario, ()), *extra]


def _drain(stream: IO[bytes], first: queue.Queue[bytes]) -> None:
    with stream:
        first.put(stream.readline())
        for _ in iter(stream.readline, b""):
            pass


@contextlib.contextmanager
def reference_server(args: Sequence[str]) -> Iterator[str]:
    """Start the fixture server (``--http 127.0.0.1:0 ARGS``); yield its URL; stop it."""
    argv = [sys.executable, "-m", "tests.conformance.fixture_server", "--http", "127.0.0.1:0"]
    argv += args
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    env["PYTHONUNBUFFERED"] = "1"
    with tempfile.TemporaryFile() as stderr:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=stderr,
            cwd=REPO_ROOT,
            env=env,
        )
        try:
            assert proc.stdout is not None
            first: queue.Queue[bytes] = queue.Queue()
            threading.Thread(target=_drain, args=(proc.stdout, first), daemon=True).start()
            try:
                line = first.get(timeout=SERVER_START_TIMEOUT).decode(errors="replace")
            except queue.Empty:
                line = ""
            match = URL_LINE.search(line)
            if match is None:
                stop_process(proc)
                stderr.seek(0)
                raise HarnessError(
                    f"the reference server did not start: {' '.join(argv)}\nstdout: {line!r}\n"
                    f"stderr:\n{stderr.read().decode(errors='replace')}"
                )
            yield match.group(1)
        finally:
            stop_process(proc)


def stop_process(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the process by its PID, wait, SIGKILL if it lingers."""
    if proc.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        proc.wait(timeout=10)


# --------------------------------------------------------------------------------------------
# Running scenarios
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Check:
    id: str
    status: str
    description: str
    message: str

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> Check:
        message = raw.get("errorMessage") or ""
        if not message and raw.get("status") not in ("SUCCESS", "INFO"):
            details = raw.get("details")
            message = json.dumps(details)[:500] if details else ""
        return cls(
            id=str(raw.get("id", "?")),
            status=str(raw.get("status", "?")),
            description=str(raw.get("description", "")),
            message=str(message),
        )


@dataclass
class ScenarioResult:
    runner: str
    scenario: str
    required: bool
    outcome: Outcome
    checks: list[Check] = field(default_factory=list)
    detail: str = ""
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.outcome not in NOT_PASSING if self.required else True

    def count(self, status: str) -> int:
        return sum(1 for check in self.checks if check.status == status)

    def problems(self) -> list[Check]:
        """The checks that are not SUCCESS or INFO (failures, warnings, skips)."""
        return [check for check in self.checks if check.status not in ("SUCCESS", "INFO")]


def classify(
    checks: Sequence[Check], required: frozenset[str] = frozenset()
) -> tuple[Outcome, str]:
    """pass: some SUCCESS and no FAILURE/SKIPPED; WARNING and INFO do not decide, except for
    the `required` check ids, each of which must be there with SUCCESS."""
    statuses = {check.status for check in checks}
    if "FAILURE" in statuses:
        return "fail", ""
    if "SKIPPED" in statuses:
        return "skipped", "the runner skipped checks"
    if "SUCCESS" not in statuses:
        return "skipped", "no check succeeded (only " + (
            ", ".join(sorted(statuses)) or "none"
        ) + ")"
    unknown = statuses - {"SUCCESS", "WARNING", "INFO"}
    if unknown:
        return "error", f"unknown check statuses {sorted(unknown)}"
    succeeded = {check.id for check in checks if check.status == "SUCCESS"}
    missing = sorted(required - succeeded)
    if missing:
        return "fail", "required checks did not succeed: " + ", ".join(missing)
    return "pass", ""


def _crash_summary(output: str) -> str:
    """The runner's own words about a crash, without stack frames and banner lines."""
    lines = [
        " ".join(line.split())
        for line in output.splitlines()
        if line.strip()
        and not line.lstrip().startswith("at ")
        and not line.startswith(("Running client scenario", "Results saved to"))
    ]
    return " | ".join(lines[:6])


def run_scenario(
    tools: Tools,
    runner: Runner,
    scenario: str,
    *,
    extra_server_args: Sequence[str] = (),
    results_dir: Path | None = None,
) -> ScenarioResult:
    """Start a fresh reference server, run one scenario against it, stop the server."""
    required = scenario not in NOT_APPLICABLE
    started = time.monotonic()
    result = ScenarioResult(runner.version, scenario, required, "error")
    with tempfile.TemporaryDirectory(prefix="mcptask-conformance-") as tmp:
        out = Path(tmp)
        with reference_server(server_args(scenario, extra_server_args)) as url:
            argv = [
                str(tools.node),
                str(tools.runner_entry(runner)),
                "server",
                "--url",
                url,
                "--scenario",
                scenario,
                "--output-dir",
                str(out),
                *runner.extra_args,
            ]
            try:
                done = subprocess.run(
                    argv,
                    cwd=out,
                    capture_output=True,
                    text=True,
                    timeout=SCENARIO_TIMEOUT,
                    check=False,
                    env=_node_env(),
                )
                output = done.stdout + done.stderr
            except subprocess.TimeoutExpired as expired:
                output = f"timed out after {SCENARIO_TIMEOUT:.0f}s; {expired.stdout!r}"
                done = None
        found = sorted(out.glob("*/checks.json"))
        if found:
            raw = json.loads(found[-1].read_text())
            result.checks = [Check.from_json(item) for item in raw]
            result.outcome, result.detail = classify(
                result.checks, REQUIRED_CHECKS.get(scenario, frozenset())
            )
        else:
            exit_note = "" if done is None else f"runner exit {done.returncode}, "
            result.detail = exit_note + "no checks.json: " + _crash_summary(output)
        if results_dir is not None:
            target = results_dir / runner.version / scenario
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(out, target)
            (target / "runner-output.txt").write_text(output)
    if scenario in KNOWN_FAILURES and required:
        result.outcome = "xpass" if result.outcome == "pass" else "xfail"
        result.detail = (result.detail + "; " if result.detail else "") + KNOWN_FAILURES[scenario]
    result.seconds = time.monotonic() - started
    return result


def selected(only: Sequence[str], runners: Sequence[str]) -> list[tuple[Runner, str]]:
    pairs = [
        (runner, scenario)
        for runner in RUNNERS
        if not runners or runner.version in runners
        for scenario in runner.scenarios
    ]
    if only:
        unknown = set(only) - {scenario for _, scenario in pairs}
        if unknown:
            raise HarnessError(f"unknown scenario(s): {', '.join(sorted(unknown))}")
        pairs = [(runner, scenario) for runner, scenario in pairs if scenario in only]
    return pairs


# --------------------------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------------------------


def format_table(results: Sequence[ScenarioResult]) -> str:
    header = ("scenario", "runner", "expected", "result", "checks (ok/fail/warn/skip)", "time")
    rows = [header]
    for r in results:
        counts = (
            "-"
            if r.outcome == "n/a"
            else f"{r.count('SUCCESS')}/{r.count('FAILURE')}/{r.count('WARNING')}/"
            f"{r.count('SKIPPED')}"
        )
        rows.append(
            (
                r.scenario,
                r.runner,
                "pass" if r.required else "n/a",
                r.outcome.upper() if r.outcome in NOT_PASSING and r.required else r.outcome,
                counts,
                "-" if r.outcome == "n/a" else f"{r.seconds:.1f}s",
            )
        )
    widths = [max(len(row[i]) for row in rows) for i in range(len(header))]
    lines = [
        "  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True))
        for row in rows
    ]
    lines.insert(1, "  ".join("-" * width for width in widths))
    return "\n".join(line.rstrip() for line in lines)


def format_details(results: Sequence[ScenarioResult]) -> str:
    blocks: list[str] = []
    for r in results:
        if r.outcome == "n/a":
            continue
        problems = r.problems()
        if r.outcome == "pass" and not problems:
            continue
        head = f"{r.scenario} ({r.runner}): {r.outcome}"
        if not r.required:
            head += " [not applicable: " + NOT_APPLICABLE[r.scenario] + "]"
        lines = [head]
        if r.detail:
            lines.append(f"    {r.detail}")
        for check in problems:
            message = " ".join(check.message.split())
            if len(message) > MESSAGE_WIDTH:
                message = message[: MESSAGE_WIDTH - 3] + "..."
            lines.append(f"    [{check.status}] {check.id}: {message or check.description}")
        blocks.append("\n".join(lines))
    return "\n".join(blocks)


def format_not_applicable(results: Sequence[ScenarioResult]) -> str:
    lines = []
    for r in results:
        if not r.required:
            lines.append(f"  {r.scenario} ({r.runner}): {NOT_APPLICABLE[r.scenario]}")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------


def run_all(
    tools: Tools,
    pairs: Sequence[tuple[Runner, str]],
    *,
    include_not_applicable: bool = False,
    extra_server_args: Sequence[str] = (),
    results_dir: Path | None = None,
    log: IO[str] = sys.stderr,
) -> list[ScenarioResult]:
    results: list[ScenarioResult] = []
    for runner, scenario in pairs:
        if scenario in NOT_APPLICABLE and not include_not_applicable:
            results.append(ScenarioResult(runner.version, scenario, False, "n/a"))
            continue
        print(f"conformance {runner.version}: {scenario} ...", file=log, flush=True, end=" ")
        result = run_scenario(
            tools,
            runner,
            scenario,
            extra_server_args=extra_server_args,
            results_dir=results_dir,
        )
        print(f"{result.outcome} ({result.seconds:.1f}s)", file=log, flush=True)
        results.append(result)
    return results


def _parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description="Run the official MCP conformance runner against mcptask's reference server."
    )
    parser.add_argument(
        "--only", action="append", default=[], metavar="SCENARIO", help="run just this scenario"
    )
    parser.add_argument(
        "--runner",
        action="append",
        default=[],
        choices=[runner.version for runner in RUNNERS],
        help="run just this runner version's scenarios",
    )
    parser.add_argument(
        "--include-not-applicable",
        action="store_true",
        help="run the not-applicable scenarios too (informational; they never fail the run)",
    )
    parser.add_argument(
        "--server-arg",
        action="append",
        default=[],
        metavar="ARG",
        help="extra reference-server argument, e.g. --server-arg=--answer --server-arg=json",
    )
    parser.add_argument("--results-dir", type=Path, help="keep each scenario's output here")
    parser.add_argument("--json", type=Path, dest="json_path", help="write results as JSON")
    parser.add_argument("--list", action="store_true", help="print the catalogue and exit")
    parser.add_argument(
        "--install-only", action="store_true", help="install Node 22 and the runners, then exit"
    )
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = _parse_args(argv)
    try:
        pairs = selected(args.only, args.runner)
        if args.list:
            for runner, scenario in pairs:
                reason = NOT_APPLICABLE.get(scenario)
                verdict = f"n/a: {reason}" if reason else "required"
                print(f"{runner.version:16} {scenario:32} {verdict}")
            return 0
        started = time.monotonic()
        tools = ensure_tools()
        print(f"conformance: node {node_version(tools)} at {tools.node}", file=sys.stderr)
        if args.install_only:
            return 0
        problems = [p for runner in RUNNERS for p in catalogue_problems(tools, runner)]
        if problems:
            raise HarnessError("the runner's scenario list changed:\n" + "\n".join(problems))
        results = run_all(
            tools,
            pairs,
            include_not_applicable=args.include_not_applicable,
            extra_server_args=args.server_arg,
            results_dir=args.results_dir,
        )
    except HarnessError as error:
        print(f"conformance: harness error: {error}", file=sys.stderr)
        return 2
    print(format_table(results))
    details = format_details(results)
    if details:
        print("\nFailed, skipped and warning checks:\n" + details)
    na = format_not_applicable(results)
    if na:
        print("\nNot applicable to the reference server:\n" + na)
    failing = [r for r in results if not r.ok]
    passed = sum(1 for r in results if r.required and r.outcome == "pass")
    print(
        f"\nconformance: required scenarios: {passed} passing, {len(failing)} not passing "
        f"(of {sum(1 for r in results if r.required)} run; "
        f"{sum(1 for r in results if not r.required)} not applicable) "
        f"in {time.monotonic() - started:.0f}s"
    )
    if args.json_path is not None:
        args.json_path.write_text(
            json.dumps(
                [
                    {
                        "runner": r.runner,
                        "scenario": r.scenario,
                        "required": r.required,
                        "outcome": r.outcome,
                        "detail": r.detail,
                        "seconds": round(r.seconds, 2),
                        "checks": [check.__dict__ for check in r.checks],
                    }
                    for r in results
                ],
                indent=2,
            )
            + "\n"
        )
    return 1 if failing else 0


if __name__ == "__main__":
    sys.exit(main())

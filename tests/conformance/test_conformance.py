"""The official MCP conformance runner against the reference server, as pytest tests.

One test per required scenario (every scenario of run.py's catalogues that is not in
NOT_APPLICABLE): each starts a fresh reference server, runs the scenario with the pinned
runner, and fails unless the scenario passed. A skipped or empty scenario, a runner crash or
a harness problem (npm missing, install failed) is a failure or an error, never a skip.
The first run installs Node 22 and the runners into <repo>/.conformance (about 30 s, once).
"""

from __future__ import annotations

import pytest

from tests.conformance import run

REQUIRED = [
    pytest.param(runner, scenario, id=f"{runner.version}-{scenario}")
    for runner in run.RUNNERS
    for scenario in runner.scenarios
    if scenario not in run.NOT_APPLICABLE
]


@pytest.fixture(scope="session")
def tools() -> run.Tools:
    try:
        return run.ensure_tools()
    except run.HarnessError as error:
        pytest.fail(f"cannot install the conformance runner: {error}")


def test_node_is_the_pinned_22(tools: run.Tools) -> None:
    assert run.node_version(tools) == f"v{run.NODE_VERSION}"


@pytest.mark.parametrize("runner", run.RUNNERS, ids=[runner.version for runner in run.RUNNERS])
def test_catalogue_matches_the_runner(tools: run.Tools, runner: run.Runner) -> None:
    assert run.catalogue_problems(tools, runner) == []


@pytest.mark.parametrize(("runner", "scenario"), REQUIRED)
def test_scenario_passes(tools: run.Tools, runner: run.Runner, scenario: str) -> None:
    try:
        result = run.run_scenario(tools, runner, scenario)
    except run.HarnessError as error:
        pytest.fail(f"harness error: {error}")
    details = run.format_details([result])
    if result.outcome == "xfail":
        pytest.xfail(f"known failure ({run.KNOWN_FAILURES[scenario]}):\n{details}")
    if result.outcome == "xpass":
        pytest.fail(f"{scenario} passes now: remove it from KNOWN_FAILURES in run.py")
    assert result.outcome == "pass", f"conformance {runner.version} {scenario}:\n{details}"

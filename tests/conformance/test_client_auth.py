"""The official conformance runner's client `auth/*` scenarios, mcptask as the client.

One test per runner and scenario of client_auth.scenarios (the ones issue 11 names, and
the further ones mcptask passes): the runner starts
its MCP and authorization servers, runs `mcptask connect` through the adapter
(auth_client.py), and the scenario must pass: a skip, a warning, a runner crash or a
harness problem is a failure, never a pass.
"""

from __future__ import annotations

import pytest

from tests.conformance import client_auth, run


@pytest.fixture(scope="session")
def tools() -> run.Tools:
    try:
        return run.ensure_tools()
    except run.HarnessError as error:
        pytest.fail(f"cannot install the conformance runner: {error}")


@pytest.mark.parametrize("runner", client_auth.RUNNERS, ids=lambda runner: runner.version)
def test_every_auth_scenario_is_run_or_excused(tools: run.Tools, runner: run.Runner) -> None:
    listed = client_auth.list_auth_scenarios(tools, runner)
    assert [s for s in listed if s in client_auth.SCENARIOS] == list(client_auth.SCENARIOS)
    required = set(client_auth.scenarios(runner))
    assert required <= set(listed)
    assert set(listed) - required == set(client_auth.NOT_COVERED[runner.version])


@pytest.mark.parametrize(
    ("runner", "scenario"),
    [
        pytest.param(runner, scenario, id=f"{runner.version}-{scenario}")
        for runner in client_auth.RUNNERS
        for scenario in client_auth.scenarios(runner)
    ],
)
def test_auth_scenario_passes(tools: run.Tools, runner: run.Runner, scenario: str) -> None:
    result = client_auth.run_scenario(tools, runner, scenario)
    assert result.outcome == "pass", (
        f"conformance {result.runner} {scenario}: {result.detail}\n{run.format_details([result])}"
    )

"""The conformance tier's own rules, which need no network: its tables name catalogued
scenarios, and no skipped, warned or empty scenario counts as a pass. (The tier itself,
tests/conformance, runs under `pytest -m network`.)"""

from __future__ import annotations

from tests.conformance import client_auth, run


def test_exception_lists_name_catalogued_scenarios() -> None:
    catalogued = {scenario for runner in run.RUNNERS for scenario in runner.scenarios}
    assert set(run.NOT_APPLICABLE) - catalogued == set()
    assert set(run.KNOWN_FAILURES) - catalogued == set()
    assert set(run.KNOWN_FAILURES) & set(run.NOT_APPLICABLE) == set()
    assert all(reason.strip() for reason in run.NOT_APPLICABLE.values())


def test_classify_counts_no_skip_as_a_pass() -> None:
    def check(status: str) -> run.Check:
        return run.Check(id="c", status=status, description="", message="")

    assert run.classify([check("SUCCESS"), check("INFO"), check("WARNING")])[0] == "pass"
    assert run.classify([check("SUCCESS"), check("FAILURE")])[0] == "fail"
    assert run.classify([check("SUCCESS"), check("SKIPPED")])[0] == "skipped"
    assert run.classify([check("WARNING")])[0] == "skipped"
    assert run.classify([])[0] == "skipped"


def test_required_checks_must_succeed_even_where_the_runner_only_warns() -> None:
    def check(check_id: str, status: str) -> run.Check:
        return run.Check(id=check_id, status=status, description="", message="")

    required = frozenset({"a", "b"})
    assert run.classify([check("a", "SUCCESS"), check("b", "SUCCESS")], required)[0] == "pass"
    outcome, detail = run.classify([check("a", "SUCCESS"), check("b", "WARNING")], required)
    assert (outcome, detail) == ("fail", "required checks did not succeed: b")
    assert run.classify([check("a", "SUCCESS")], required)[0] == "fail"  # b missing
    catalogued = {scenario for runner in run.RUNNERS for scenario in runner.scenarios}
    assert set(run.REQUIRED_CHECKS) <= catalogued - set(run.NOT_APPLICABLE)


def test_a_warning_or_a_failed_client_is_no_pass() -> None:
    def check(status: str) -> run.Check:
        return run.Check(id="c", status=status, description="", message="")

    assert client_auth.classify([check("SUCCESS")], 0)[0] == "pass"
    assert client_auth.classify([check("SUCCESS"), check("WARNING")], 0)[0] == "fail"
    assert client_auth.classify([check("SUCCESS")], 1)[0] == "fail"
    assert client_auth.classify([check("SUCCESS"), check("SKIPPED")], 0)[0] == "skipped"
    assert client_auth.classify([], 0)[0] == "skipped"

"""The collector's pace around start-up (mcptask.cli.collector)."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from mcptask.cli import collector


@pytest.fixture
def usual_collector() -> Iterator[tuple[int, int, int]]:
    """The test process's thresholds, put back afterwards with nothing left frozen."""
    usual = gc.get_threshold()
    gc.unfreeze()
    yield usual
    collector._usual = None
    gc.unfreeze()
    gc.set_threshold(*usual)


def test_start_up_collects_rarely_until_started(usual_collector: tuple[int, int, int]) -> None:
    collector.defer()
    collector.defer()  # a second call must not take the raised threshold for the usual one
    assert gc.get_threshold() == (collector.STARTUP_THRESHOLD, *usual_collector[1:])
    assert gc.get_freeze_count() == 0

    collector.started()
    assert gc.get_threshold() == usual_collector
    assert gc.get_freeze_count() > 0  # what start-up built is left out of later collections


def test_started_without_defer_changes_nothing(usual_collector: tuple[int, int, int]) -> None:
    # In-process callers (the tests' runs of the app) never deferred: they keep their pace.
    collector.started()
    assert gc.get_threshold() == usual_collector
    assert gc.get_freeze_count() == 0


def test_ending_freezes_everything(usual_collector: tuple[int, int, int]) -> None:
    tracked = len(gc.get_objects())
    collector.ending()
    # All of them, save the few freed in between: finalization's collections find nothing.
    assert gc.get_freeze_count() >= tracked - 1000

"""The stop-signal handler must never block: it runs in the main thread, which may hold locks."""

from __future__ import annotations

import signal

import pytest

from mcptask.cli.invocation import StopSignal


def test_signal_handler_never_takes_the_event_lock() -> None:
    woken: list[bool] = []
    stop = StopSignal(on_stop=lambda: woken.append(True))
    # As if the signal arrived while the main thread was inside stop.event.wait(), holding the
    # event's lock: a handler that called event.set() here would deadlock.
    with stop.event._cond:  # type: ignore[attr-defined]
        stop._on_signal(signal.SIGINT, None)
        assert stop.stopped
    assert stop.event.wait(timeout=5)
    assert woken == [True]


def test_second_signal_interrupts_at_once() -> None:
    stop = StopSignal()
    stop._on_signal(signal.SIGINT, None)
    with pytest.raises(KeyboardInterrupt):
        stop._on_signal(signal.SIGINT, None)


def test_paused_gives_ctrl_c_back_to_the_prompt_and_takes_it_again() -> None:
    before = signal.getsignal(signal.SIGINT)
    with StopSignal() as stop:
        with stop.paused():
            assert signal.getsignal(signal.SIGINT) is before
            with pytest.raises(KeyboardInterrupt):
                signal.raise_signal(signal.SIGINT)
        assert not stop.stopped
        assert signal.getsignal(signal.SIGINT) == stop._on_signal
    assert signal.getsignal(signal.SIGINT) is before

"""wait: loops survive crashes and stop promptly; polling; backoff sequences."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

import pytest

from kgen_runtime.util import (
    Backoff,
    FakeClock,
    WaitTimeoutError,
    backoff_until,
    exponential_backoff,
    jitter,
    jitter_until,
    poll_until,
    until,
)
from tests.util._support import RecordingClock


@pytest.fixture
def recording_clock() -> RecordingClock:
    return RecordingClock()


class LoopRun:
    """Runs a loop in a thread on a fake clock and records the clock time of each call."""

    def __init__(self, clock: FakeClock) -> None:
        self.clock = clock
        self.stop = threading.Event()
        self.times: list[float] = []
        self.called = threading.Condition()

    def record(self) -> None:
        with self.called:
            self.times.append(self.clock.now())
            self.called.notify_all()

    def wait_calls(self, n: int) -> None:
        with self.called:
            assert self.called.wait_for(lambda: len(self.times) >= n, 5)

    def start(self, loop: Callable[[], None]) -> threading.Thread:
        t = threading.Thread(target=loop)
        t.start()
        return t

    def step_and_wait(self, seconds: float, calls: int) -> None:
        """Once the loop sleeps, step the clock and wait for the loop's next call."""
        assert self.clock.wait_for_sleepers(1)
        self.clock.step(seconds)
        self.wait_calls(calls)


def test_until_runs_every_period_after_fn_returns() -> None:
    run = LoopRun(FakeClock(start=0))
    t = run.start(lambda: until(run.record, 10, run.stop, clock=run.clock))
    run.wait_calls(1)
    run.step_and_wait(10, 2)
    run.step_and_wait(10, 3)
    run.stop.set()
    t.join(5)
    assert not t.is_alive()
    assert run.times == [0, 10, 20]


def test_a_crashing_function_never_stops_the_loop(caplog: pytest.LogCaptureFixture) -> None:
    run = LoopRun(FakeClock(start=0))

    def flaky() -> None:
        run.record()
        if len(run.times) % 2:
            raise RuntimeError(f"boom {len(run.times)}")

    t = run.start(lambda: until(flaky, 1, run.stop, clock=run.clock))
    run.wait_calls(1)
    for calls in range(2, 6):
        run.step_and_wait(1, calls)
    run.stop.set()
    t.join(5)
    assert run.times == [0, 1, 2, 3, 4]
    crashes = [r for r in caplog.records if r.name == "kgen_runtime.crash"]
    assert [r.getMessage() for r in crashes] == [
        "observed a crash: RuntimeError: boom 1",
        "observed a crash: RuntimeError: boom 3",
        "observed a crash: RuntimeError: boom 5",
    ]
    assert all(r.levelno == logging.ERROR and r.exc_info for r in crashes)


def test_non_sliding_period_includes_the_running_time() -> None:
    run = LoopRun(FakeClock(start=0))

    def slow() -> None:
        run.record()
        run.clock.step(4)  # the function takes 4 s

    t = run.start(
        lambda: jitter_until(slow, 10, run.stop, sliding=False, clock=run.clock)
    )
    run.wait_calls(1)
    run.step_and_wait(6, 2)  # 10 s after the previous start
    run.stop.set()
    t.join(5)
    assert run.times == [0, 10]


def test_sliding_period_starts_after_the_function() -> None:
    run = LoopRun(FakeClock(start=0))

    def slow() -> None:
        run.record()
        run.clock.step(4)

    t = run.start(lambda: until(slow, 10, run.stop, clock=run.clock))
    run.wait_calls(1)
    run.clock.wait_for_sleepers(1)
    run.clock.step(6)
    assert run.clock.wait_for_sleepers(1)
    assert len(run.times) == 1  # 6 s after the function returned: not yet
    run.step_and_wait(4, 2)
    run.stop.set()
    t.join(5)
    assert run.times == [0, 14]


def test_backoff_until_follows_the_backoff_delays() -> None:
    run = LoopRun(FakeClock(start=0))
    backoff = Backoff(duration=1, factor=2, steps=10, cap=5)
    t = run.start(lambda: backoff_until(run.record, backoff, run.stop, clock=run.clock))
    run.wait_calls(1)
    for calls, delay in enumerate([1, 2, 4, 5, 5], start=2):
        run.step_and_wait(delay, calls)
    run.stop.set()
    t.join(5)
    assert run.times == [0, 1, 3, 7, 12, 17]


def test_backoff_until_ends_when_the_delays_run_out() -> None:
    stop = threading.Event()
    calls: list[int] = []
    backoff_until(lambda: calls.append(1), [0.0, 0.0], stop)
    assert calls == [1, 1, 1]  # run, wait, run, wait, run, no delay left
    calls.clear()
    backoff_until(lambda: calls.append(1), [0.0], stop, sliding=False)
    assert calls == [1]


def test_loops_stop_promptly_on_the_real_clock() -> None:
    stop = threading.Event()
    started = threading.Event()
    loops = [
        lambda: until(started.set, 3600, stop),
        lambda: jitter_until(started.set, 3600, stop, jitter_factor=0.5, sliding=False),
        lambda: backoff_until(started.set, Backoff(duration=3600), stop),
    ]
    threads = [threading.Thread(target=loop) for loop in loops]
    for t in threads:
        t.start()
    assert started.wait(5)
    stop.set()
    for t in threads:
        t.join(5)
        assert not t.is_alive()


def test_loop_does_not_run_when_already_stopped() -> None:
    stop = threading.Event()
    stop.set()
    calls: list[int] = []
    until(lambda: calls.append(1), 1, stop)
    assert calls == []


def test_backoff_delays_match_client_go_step() -> None:
    assert _take(Backoff(duration=1, factor=2, steps=3), 5) == [1, 2, 4, 8, 8]
    assert _take(Backoff(duration=1, factor=3, steps=10, cap=5), 4) == [1, 3, 5, 5]
    assert _take(Backoff(duration=2, factor=0, steps=2), 3) == [2, 2, 2]
    assert _take(Backoff(duration=2, steps=0), 2) == [2, 2]
    jittered = Backoff(duration=1, factor=2, jitter=0.5, steps=3).delays(rand=lambda: 1.0)
    assert [next(jittered) for _ in range(3)] == [1.5, 3.0, 6.0]


def test_backoff_is_shareable_and_iterable() -> None:
    backoff = Backoff(duration=1, factor=2, steps=3)
    assert _take(backoff, 3) == _take(backoff, 3) == [1, 2, 4]
    assert list(zip(backoff, range(4), strict=False)) == [(1, 0), (2, 1), (4, 2), (8, 3)]


def test_jitter() -> None:
    assert jitter(10, 0.5, rand=lambda: 0.5) == 12.5
    assert jitter(10, 0, rand=lambda: 0.5) == 15.0  # a non-positive factor means 1.0
    assert 10 <= jitter(10, 0.1) < 11


def test_poll_until_immediate_and_interval(recording_clock: RecordingClock) -> None:
    answers = iter([False, False, True])
    poll_until(lambda: next(answers), 2, immediate=True, clock=recording_clock)
    assert recording_clock.sleeps == [2, 2]

    recording_clock.sleeps.clear()
    answers = iter([True])
    poll_until(lambda: next(answers), 2, clock=recording_clock)
    assert recording_clock.sleeps == [2]  # not immediate: waits one interval first


def test_poll_until_times_out(recording_clock: RecordingClock) -> None:
    checks: list[float] = []

    def never() -> bool:
        checks.append(recording_clock.now())
        return False

    with pytest.raises(WaitTimeoutError, match="timed out"):
        poll_until(never, 2, timeout=5, clock=recording_clock)
    assert recording_clock.sleeps == [2, 2, 1]
    assert checks == [2, 4]


def test_poll_until_stop_and_errors() -> None:
    stop = threading.Event()
    stop.set()
    with pytest.raises(WaitTimeoutError, match="stopped"):
        poll_until(lambda: False, 3600, stop=stop)

    def broken() -> bool:
        raise KeyError("condition failed")

    with pytest.raises(KeyError):
        poll_until(broken, 0.0, immediate=True)


def test_poll_until_real_clock_stop_from_another_thread() -> None:
    stop = threading.Event()
    checking = threading.Event()

    def condition() -> bool:
        checking.set()
        return False

    errors: list[BaseException] = []

    def poll() -> None:
        try:
            poll_until(condition, 0.001, stop=stop)
        except WaitTimeoutError as err:
            errors.append(err)

    t = threading.Thread(target=poll)
    t.start()
    assert checking.wait(5)
    stop.set()
    t.join(5)
    assert [str(e) for e in errors] == ["stopped while waiting for the condition"]


def test_exponential_backoff_tries_steps_times(recording_clock: RecordingClock) -> None:
    attempts: list[float] = []

    def never() -> bool:
        attempts.append(recording_clock.now())
        return False

    with pytest.raises(WaitTimeoutError):
        exponential_backoff(Backoff(duration=1, factor=2, steps=4), never, clock=recording_clock)
    assert attempts == [0, 1, 3, 7]
    assert recording_clock.sleeps == [1, 2, 4]


def test_exponential_backoff_returns_when_the_condition_holds(
    recording_clock: RecordingClock,
) -> None:
    answers = iter([False, True])
    exponential_backoff(
        Backoff(duration=1, steps=5), lambda: next(answers), clock=recording_clock
    )
    assert recording_clock.sleeps == [1]


def test_exponential_backoff_zero_steps_never_calls(recording_clock: RecordingClock) -> None:
    with pytest.raises(WaitTimeoutError):
        exponential_backoff(Backoff(duration=1, steps=0), _unreachable, clock=recording_clock)


def test_exponential_backoff_stop_and_errors() -> None:
    stop = threading.Event()
    stop.set()
    with pytest.raises(WaitTimeoutError, match="stopped"):
        exponential_backoff(Backoff(duration=3600, steps=3), lambda: False, stop=stop)
    with pytest.raises(ZeroDivisionError):
        exponential_backoff(Backoff(duration=1, steps=3), lambda: bool(1 / 0))


def _take(backoff: Backoff, n: int) -> list[float]:
    delays = backoff.delays()
    return [next(delays) for _ in range(n)]


def _unreachable() -> bool:
    raise AssertionError("called")

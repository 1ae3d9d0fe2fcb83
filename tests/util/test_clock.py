"""FakeClock and RealClock: time, sleeping, waking."""

from __future__ import annotations

import threading

from kgen_runtime.util import REAL_CLOCK, FakeClock


def test_fake_clock_moves_only_when_stepped() -> None:
    clock = FakeClock(start=5.0)
    assert clock.now() == 5.0
    clock.step(2.5)
    assert clock.now() == 7.5


def test_step_wakes_a_sleeper_when_its_time_comes() -> None:
    clock = FakeClock()
    stop = threading.Event()
    result: list[bool] = []
    t = threading.Thread(target=lambda: result.append(clock.sleep(stop, 10)))
    t.start()
    assert clock.wait_for_sleepers(1)
    clock.step(9)
    assert clock.wait_for_sleepers(1)
    assert t.is_alive()
    clock.step(1)
    t.join(5)
    assert result == [False]
    assert clock.sleeper_count() == 0


def test_stop_wakes_a_fake_sleeper() -> None:
    clock = FakeClock()
    stop = threading.Event()
    result: list[bool] = []
    t = threading.Thread(target=lambda: result.append(clock.sleep(stop, 10)))
    t.start()
    assert clock.wait_for_sleepers(1)
    stop.set()
    t.join(5)
    assert result == [True]


def test_wait_until_woken_by_step_or_notify() -> None:
    clock = FakeClock()
    cond = threading.Condition()
    woke = threading.Event()

    def waiter(deadline: float | None) -> None:
        with cond:
            clock.wait_until(cond, deadline)
        woke.set()

    t = threading.Thread(target=waiter, args=(clock.now() + 3,))
    t.start()
    assert clock.wait_for_sleepers(1)
    clock.step(3)
    t.join(5)
    assert woke.is_set()

    woke.clear()
    t = threading.Thread(target=waiter, args=(None,))
    t.start()
    assert clock.wait_for_sleepers(1)
    clock.step(1000)  # no deadline: time alone does not wake it
    assert clock.wait_for_sleepers(1)
    assert not woke.is_set()
    with cond:
        cond.notify_all()
    t.join(5)
    assert woke.is_set()


def test_wait_until_past_deadline_returns_at_once() -> None:
    clock = FakeClock()
    cond = threading.Condition()
    with cond:
        clock.wait_until(cond, clock.now())
    assert clock.sleeper_count() == 0


def test_wait_for_sleepers_times_out() -> None:
    assert FakeClock().wait_for_sleepers(1, timeout=0.01) is False


def test_real_clock() -> None:
    stop = threading.Event()
    before = REAL_CLOCK.now()
    assert REAL_CLOCK.sleep(stop, 0.001) is False
    assert REAL_CLOCK.now() > before
    stop.set()
    assert REAL_CLOCK.sleep(stop, 1000) is True
    assert REAL_CLOCK.sleep(stop, 0) is True
    cond = threading.Condition()
    with cond:
        REAL_CLOCK.wait_until(cond, REAL_CLOCK.now() + 0.001)
        REAL_CLOCK.wait_until(cond, REAL_CLOCK.now() - 1)

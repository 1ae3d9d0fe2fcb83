"""The client-side token bucket, on a fake clock."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from kgen_runtime.rest._ratelimit import TokenBucket, accept
from kgen_runtime.util.clock import REAL_CLOCK
from tests.rest.conftest import BOUND, FakeClock


def test_burst_is_free_then_one_token_per_interval(clock: FakeClock) -> None:
    bucket = TokenBucket(qps=4.0, burst=3, clock=clock)
    assert [bucket.reserve() for _ in range(3)] == [0.0, 0.0, 0.0]
    assert [bucket.reserve() for _ in range(3)] == [0.25, 0.5, 0.75]


def test_tokens_refill_with_time_up_to_burst(clock: FakeClock) -> None:
    bucket = TokenBucket(qps=2.0, burst=2, clock=clock)
    bucket.reserve(), bucket.reserve()
    clock.time += 0.5
    assert bucket.reserve() == 0.0
    assert bucket.reserve() == 0.5
    clock.time += 100.0
    assert [bucket.reserve() for _ in range(3)] == [0.0, 0.0, 0.5]


def test_accept_sleeps_the_reserved_delay(clock: FakeClock) -> None:
    bucket = TokenBucket(qps=10.0, burst=1, clock=clock)
    stop = threading.Event()
    assert all(accept(bucket, clock, stop) for _ in range(4))
    assert clock.sleeps == pytest.approx([0.1, 0.1, 0.1])


def test_accept_reports_a_stop(clock: FakeClock) -> None:
    bucket = TokenBucket(qps=1.0, burst=1, clock=clock)
    stop = threading.Event()
    stop.set()
    assert not accept(bucket, clock, stop)
    assert not accept(bucket, clock, stop)


def test_stop_wakes_a_real_sleeper() -> None:
    bucket = TokenBucket(qps=0.001, burst=1, clock=REAL_CLOCK)
    stop = threading.Event()
    bucket.reserve()
    threading.Timer(0.05, stop.set).start()
    with ThreadPoolExecutor(1) as pool:
        assert pool.submit(accept, bucket, REAL_CLOCK, stop).result(timeout=BOUND) is False


def test_concurrent_reservations_are_spaced_exactly(clock: FakeClock) -> None:
    bucket = TokenBucket(qps=100.0, burst=5, clock=clock)
    start = threading.Barrier(32)

    def take() -> list[float]:
        start.wait(BOUND)
        return [bucket.reserve() for _ in range(10)]

    with ThreadPoolExecutor(32) as pool:
        delays = sorted(d for f in [pool.submit(take) for _ in range(32)] for d in f.result(BOUND))
    assert delays[:5] == [0.0] * 5
    assert delays[5:] == pytest.approx([k / 100.0 for k in range(1, 316)])


@pytest.mark.parametrize(("qps", "burst"), [(0.0, 1), (-1.0, 1), (1.0, 0)])
def test_rejects_nonsense(qps: float, burst: int, clock: FakeClock) -> None:
    with pytest.raises(ValueError, match="qps > 0 and burst >= 1"):
        TokenBucket(qps, burst, clock)

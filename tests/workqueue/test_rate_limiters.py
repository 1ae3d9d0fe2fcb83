"""Rate limiters: the sequences of client-go's default_rate_limiters_test.go."""

from __future__ import annotations

import pytest

from kgen_runtime.util import FakeClock
from kgen_runtime.workqueue import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    WithMaxWaitRateLimiter,
    default_controller_rate_limiter,
)

MS = 0.001


def test_item_exponential_failure() -> None:
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(
        1 * MS, 1.0
    )
    assert [limiter.when("one") for _ in range(5)] == [1 * MS, 2 * MS, 4 * MS, 8 * MS, 16 * MS]
    assert limiter.num_requeues("one") == 5
    assert [limiter.when("two") for _ in range(2)] == [1 * MS, 2 * MS]
    assert limiter.num_requeues("two") == 2
    limiter.forget("one")
    assert limiter.num_requeues("one") == 0
    assert limiter.when("one") == 1 * MS


def test_item_exponential_failure_overflow() -> None:
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(
        1 * MS, 1000.0
    )
    for _ in range(5):
        limiter.when("one")
    assert limiter.when("one") == 32 * MS
    for _ in range(1000):
        limiter.when("overflow1")
    assert limiter.when("overflow1") == 1000.0

    limiter = ItemExponentialFailureRateLimiter(60.0, 1000 * 3600.0)
    for _ in range(2):
        limiter.when("two")
    assert limiter.when("two") == 4 * 60.0
    for _ in range(1000):
        limiter.when("overflow2")
    assert limiter.when("overflow2") == 1000 * 3600.0


def test_item_exponential_defaults_are_client_gos() -> None:
    limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter()
    assert [limiter.when("x") for _ in range(3)] == [0.005, 0.010, 0.020]
    for _ in range(30):
        limiter.when("x")
    assert limiter.when("x") == 1000.0


def test_item_fast_slow() -> None:
    limiter: ItemFastSlowRateLimiter[str] = ItemFastSlowRateLimiter(5 * MS, 10.0, 3)
    assert [limiter.when("one") for _ in range(5)] == [5 * MS, 5 * MS, 5 * MS, 10.0, 10.0]
    assert limiter.num_requeues("one") == 5
    assert [limiter.when("two") for _ in range(2)] == [5 * MS, 5 * MS]
    assert limiter.num_requeues("two") == 2
    limiter.forget("one")
    assert limiter.num_requeues("one") == 0
    assert limiter.when("one") == 5 * MS


def test_max_of() -> None:
    limiter: MaxOfRateLimiter[str] = MaxOfRateLimiter(
        ItemFastSlowRateLimiter(5 * MS, 3.0, 3),
        ItemExponentialFailureRateLimiter(1 * MS, 1.0),
    )
    assert [limiter.when("one") for _ in range(5)] == [5 * MS, 5 * MS, 5 * MS, 3.0, 3.0]
    assert limiter.num_requeues("one") == 5
    assert [limiter.when("two") for _ in range(2)] == [5 * MS, 5 * MS]
    assert limiter.num_requeues("two") == 2
    limiter.forget("one")
    assert limiter.num_requeues("one") == 0
    assert limiter.when("one") == 5 * MS


def test_with_max_wait() -> None:
    limiter: WithMaxWaitRateLimiter[str] = WithMaxWaitRateLimiter(
        ItemExponentialFailureRateLimiter(1.0, 100.0), 5.0
    )
    assert [limiter.when("one") for _ in range(5)] == [1.0, 2.0, 4.0, 5.0, 5.0]
    assert limiter.num_requeues("one") == 5
    limiter.forget("one")
    assert limiter.num_requeues("one") == 0
    assert limiter.when("one") == 1.0


def test_max_of_needs_a_limiter() -> None:
    with pytest.raises(ValueError):
        MaxOfRateLimiter()


def test_bucket_starts_full_then_spaces_by_qps() -> None:
    clock = FakeClock()
    limiter: BucketRateLimiter[str] = BucketRateLimiter(10.0, 100, clock=clock)
    assert [limiter.when("x") for _ in range(100)] == [0.0] * 100
    assert limiter.when("x") == pytest.approx(0.1)
    assert limiter.when("y") == pytest.approx(0.2)  # one bucket for every item
    assert limiter.num_requeues("x") == 0
    limiter.forget("x")  # does not refill
    assert limiter.when("x") == pytest.approx(0.3)
    clock.step(0.3)  # the three reserved tokens are paid off, none to spare
    assert limiter.when("x") == pytest.approx(0.1)
    clock.step(100)  # refills to burst, never beyond
    assert [limiter.when("x") for _ in range(100)] == [0.0] * 100
    assert limiter.when("x") == pytest.approx(0.1)


def test_bucket_rejects_nonsense() -> None:
    with pytest.raises(ValueError):
        BucketRateLimiter(0, 1)
    with pytest.raises(ValueError):
        BucketRateLimiter(1, 0)


def test_default_controller_limiter_is_max_of_exponential_and_bucket() -> None:
    clock = FakeClock()
    limiter: MaxOfRateLimiter[str] = default_controller_rate_limiter(clock=clock)
    assert [limiter.when("a") for _ in range(3)] == [0.005, 0.010, 0.020]
    for i in range(97):
        limiter.when(f"k{i}")  # the bucket's last burst tokens
    assert limiter.when("fresh") == pytest.approx(0.1)  # bucket empty: 10 qps dominates 5 ms
    assert limiter.num_requeues("a") == 3
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0

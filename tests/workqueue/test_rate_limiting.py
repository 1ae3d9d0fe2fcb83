"""RateLimitingQueue: retries wait what the limiter says; forget resets."""

from __future__ import annotations

from kgen_runtime.util import FakeClock
from kgen_runtime.workqueue import (
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    RateLimitingQueue,
)
from tests.util._support import eventually


def test_add_rate_limited_backs_off_exponentially_and_forget_resets() -> None:
    clock = FakeClock()
    q: RateLimitingQueue[str] = RateLimitingQueue(
        ItemExponentialFailureRateLimiter(1.0, 100.0), clock=clock
    )
    try:
        q.add_rate_limited("a")  # waits 1 s
        assert q.num_requeues("a") == 1
        q.add_rate_limited("a")  # would wait 2 s; the earlier ready time (1 s) wins
        assert q.num_requeues("a") == 2
        clock.step(1)
        eventually(lambda: len(q) == 1)
        assert q.get() == ("a", False)
        q.add_rate_limited("a")  # third failure: 4 s
        q.done("a")
        clock.step(3.5)
        assert clock.wait_for_sleepers(1)
        assert len(q) == 0
        clock.step(0.5)
        eventually(lambda: len(q) == 1)
        q.forget("a")
        assert q.num_requeues("a") == 0
        assert len(q) == 1  # forget does not remove the item
    finally:
        q.shut_down()


def test_default_limiter_is_the_controller_one() -> None:
    q: RateLimitingQueue[str] = RateLimitingQueue(clock=FakeClock())
    try:
        assert isinstance(q.rate_limiter, MaxOfRateLimiter)
        assert q.rate_limiter.when("x") == 0.005
    finally:
        q.shut_down()

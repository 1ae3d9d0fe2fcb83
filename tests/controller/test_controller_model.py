"""Hypothesis drives random reconcile outcomes through the worker loop and checks the queue
and rate limiter against a model of the contract after every step."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kgen_runtime.controller import Controller, ReconcilerFunc, Result, TerminalError
from kgen_runtime.util import FakeClock
from kgen_runtime.workqueue import ItemExponentialFailureRateLimiter
from tests.controller._support import eventually

MAX_RETRIES = 3
OUTCOMES = st.sampled_from(["success", "error", "terminal", "requeue", "requeue_after"])


@settings(max_examples=60, deadline=None)
@given(st.lists(OUTCOMES, min_size=1, max_size=25))
def test_worker_loop_follows_the_contract(outcomes: list[str]) -> None:
    clock = FakeClock()
    script = iter(outcomes)

    def sync(key: str) -> Result | None:
        outcome = next(script)
        if outcome == "error":
            raise ValueError("failed")
        if outcome == "terminal":
            raise TerminalError("never")
        if outcome == "requeue":
            return Result(requeue=True)
        if outcome == "requeue_after":
            return Result(requeue_after=5.0)
        return None

    c: Controller[str] = Controller(
        "model", ReconcilerFunc(sync), max_retries=MAX_RETRIES, clock=clock,
        rate_limiter=ItemExponentialFailureRateLimiter(0.0, 0.0))
    requeues = 0
    try:
        for outcome in outcomes:
            if len(c.queue) == 0:  # dropped, forgotten or done: a new event brings it back
                c.enqueue("k")
            assert c.process_next_work_item()
            queued, waiting = 0, 0
            if outcome == "requeue" or (outcome == "error" and requeues < MAX_RETRIES):
                requeues, queued = requeues + 1, 1  # a retry through the rate limiter
            elif outcome == "requeue_after":
                requeues, waiting = 0, 1
            else:  # success, terminal, or an error past the bound: forgotten, not requeued
                requeues = 0
            assert c.queue.num_requeues("k") == requeues
            assert len(c.queue) == queued
            assert c.queue.waiting_count() == waiting
            if waiting:
                clock.step(5.0)
                eventually(lambda: len(c.queue) == 1)
    finally:
        c.queue.shut_down()

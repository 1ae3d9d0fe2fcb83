"""Reconcile metrics: outcomes, errors, durations on the controller's clock, active workers."""

from __future__ import annotations

import threading

import pytest
from prometheus_client import CollectorRegistry

from kgen_runtime.controller import (
    Controller,
    ReconcileMetricsProvider,
    ReconcilerFunc,
    Result,
    TerminalError,
)
from kgen_runtime.util import FakeClock
from kgen_runtime.workqueue import ItemExponentialFailureRateLimiter
from tests.controller._support import Running, eventually


def test_outcomes_errors_and_durations_are_recorded() -> None:
    registry = CollectorRegistry()
    provider = ReconcileMetricsProvider(registry)
    clock = FakeClock()
    active: list[float | None] = []

    def sync(key: str) -> Result | None:
        active.append(registry.get_sample_value(
            "controller_runtime_active_workers", {"controller": "foos"}))
        clock.step(0.28)
        if key == "error":
            raise ValueError("failed")
        if key == "terminal":
            raise TerminalError("bad spec")
        if key == "requeue":
            return Result(requeue=True)
        if key == "later":
            return Result(requeue_after=60)
        return None

    c: Controller[str] = Controller(
        "foos", ReconcilerFunc(sync), metrics=provider, clock=clock,
        rate_limiter=ItemExponentialFailureRateLimiter(100.0, 100.0))
    for key in ("ok", "error", "terminal", "requeue", "later", "ok2"):
        c.enqueue(key)
        assert c.process_next_work_item()

    def value(name: str, **labels: str) -> float | None:
        return registry.get_sample_value(name, {"controller": "foos", **labels})

    totals = {r: value("controller_runtime_reconcile_total", result=r)
              for r in ("success", "error", "requeue", "requeue_after")}
    assert totals == {"success": 2, "error": 2, "requeue": 1, "requeue_after": 1}
    assert value("controller_runtime_reconcile_errors_total") == 2
    assert value("controller_runtime_terminal_reconcile_errors_total") == 1
    assert value("controller_runtime_reconcile_time_seconds_count") == 6
    assert value("controller_runtime_reconcile_time_seconds_sum") == pytest.approx(6 * 0.28)
    assert value("controller_runtime_reconcile_time_seconds_bucket", le="0.25") == 0
    assert value("controller_runtime_reconcile_time_seconds_bucket", le="0.3") == 6
    assert active == [1] * 6
    assert value("controller_runtime_active_workers") == 0
    c.queue.shut_down()


def test_worker_count_and_shared_numbers_per_name() -> None:
    registry = CollectorRegistry()
    provider = ReconcileMetricsProvider(registry)
    assert provider.for_controller("a") is provider.for_controller("a")
    seen = threading.Event()
    c: Controller[str] = Controller("a", ReconcilerFunc(lambda key: seen.set()), metrics=provider)
    running = Running(c, workers=3)
    c.enqueue("x")
    assert seen.wait(5)
    eventually(lambda: registry.get_sample_value(
        "controller_runtime_reconcile_total", {"controller": "a", "result": "success"}) == 1)
    assert registry.get_sample_value(
        "controller_runtime_max_concurrent_reconciles", {"controller": "a"}) == 3
    running.stop()

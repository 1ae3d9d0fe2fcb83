"""The public surface of kgen_runtime.workqueue, pinned."""

from __future__ import annotations

import kgen_runtime.workqueue as workqueue


def test_public_names() -> None:
    assert sorted(workqueue.__all__) == [
        "AsyncDelayingQueue",
        "AsyncQueue",
        "AsyncRateLimitingQueue",
        "BucketRateLimiter",
        "DelayingQueue",
        "GetResult",
        "ItemExponentialFailureRateLimiter",
        "ItemFastSlowRateLimiter",
        "MaxOfRateLimiter",
        "PrometheusMetricsProvider",
        "Queue",
        "RateLimiter",
        "RateLimitingQueue",
        "WithMaxWaitRateLimiter",
        "default_controller_rate_limiter",
        "set_metrics_provider",
    ]
    assert all(hasattr(workqueue, name) for name in workqueue.__all__)


def test_layering() -> None:
    assert issubclass(workqueue.RateLimitingQueue, workqueue.DelayingQueue)
    assert issubclass(workqueue.DelayingQueue, workqueue.Queue)
    assert issubclass(workqueue.AsyncRateLimitingQueue, workqueue.AsyncDelayingQueue)
    assert issubclass(workqueue.AsyncDelayingQueue, workqueue.AsyncQueue)

"""Work queues for controllers (client-go's ``util/workqueue``).

Layered as in client-go: :class:`Queue` (dedup + exclusive processing) → :class:`DelayingQueue`
(``add_after``) → :class:`RateLimitingQueue` (``add_rate_limited``/``forget``), with the
rate limiters and opt-in prometheus metrics beside them.
"""

from kgen_runtime.workqueue.delaying import DelayingQueue
from kgen_runtime.workqueue.metrics import PrometheusMetricsProvider, set_metrics_provider
from kgen_runtime.workqueue.queue import GetResult, Queue
from kgen_runtime.workqueue.rate_limiters import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    ItemFastSlowRateLimiter,
    MaxOfRateLimiter,
    RateLimiter,
    WithMaxWaitRateLimiter,
    default_controller_rate_limiter,
)
from kgen_runtime.workqueue.rate_limiting import RateLimitingQueue

__all__ = [
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

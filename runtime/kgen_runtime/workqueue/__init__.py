"""Work queues for controllers (client-go's ``util/workqueue``).

Layered as in client-go: :class:`Queue` (dedup + exclusive processing) → :class:`DelayingQueue`
(``add_after``) → :class:`RateLimitingQueue` (``add_rate_limited``/``forget``), with the
rate limiters and opt-in prometheus metrics beside them. Each queue has an asyncio twin
beside it (``queue_aio.py`` :class:`AsyncQueue` → ``delaying_aio.py``
:class:`AsyncDelayingQueue` → ``rate_limiting_aio.py`` :class:`AsyncRateLimitingQueue`) with
the same bookkeeping (``_state.py``) and the same rate limiters.
"""

from kgen_runtime.workqueue.delaying import DelayingQueue
from kgen_runtime.workqueue.delaying_aio import AsyncDelayingQueue
from kgen_runtime.workqueue.metrics import PrometheusMetricsProvider, set_metrics_provider
from kgen_runtime.workqueue.queue import GetResult, Queue
from kgen_runtime.workqueue.queue_aio import AsyncQueue
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
from kgen_runtime.workqueue.rate_limiting_aio import AsyncRateLimitingQueue

__all__ = [
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

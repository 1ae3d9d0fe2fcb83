"""Work-queue metrics through prometheus_client, with client-go's metric names.

Metrics are opt-in per queue: a queue records them only when it has a ``name`` and a
:class:`PrometheusMetricsProvider` (passed to the queue, or installed for every queue with
:func:`set_metrics_provider`, client-go's ``workqueue.SetProvider``). Every metric carries one
label, ``name``, the queue's name:

- ``workqueue_depth`` (gauge): items waiting to be handed out.
- ``workqueue_adds_total`` (counter): items added (duplicates of a waiting item not counted).
- ``workqueue_queue_duration_seconds`` (histogram): time from add to get.
- ``workqueue_work_duration_seconds`` (histogram): time from get to done.
- ``workqueue_unfinished_work_seconds`` (gauge): summed age of the items being processed.
- ``workqueue_longest_running_processor_seconds`` (gauge): age of the oldest of those.
- ``workqueue_retries_total`` (counter): delayed (and rate-limited) re-adds.

The two "in progress" gauges are computed when the registry is scraped, so no thread ticks
them. Two queues with the same name share their label set; the later queue owns the gauges.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import Generic, TypeVar

from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram

from kgen_runtime.util.clock import Clock

__all__ = ["PrometheusMetricsProvider", "QueueMetrics", "set_metrics_provider"]

T = TypeVar("T", bound=Hashable)

_DURATION_BUCKETS = tuple(10e-9 * 10**i for i in range(10))
"""client-go's ``ExponentialBuckets(10e-9, 10, 10)``: 10 ns to 10 s."""


class PrometheusMetricsProvider:
    """Owns the work-queue metric families in one registry (create one per registry).

    Thread-safe; the families are created once here and shared by every queue using this
    provider, each queue writing its own ``name`` label.
    """

    def __init__(self, registry: CollectorRegistry = REGISTRY) -> None:
        """Register the seven ``workqueue_*`` families in ``registry``."""
        labels = ["name"]
        self.depth = Gauge(
            "workqueue_depth", "Current depth of workqueue", labels, registry=registry
        )
        self.adds = Counter(
            "workqueue_adds_total", "Total number of adds handled by workqueue", labels,
            registry=registry,
        )
        self.latency = Histogram(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested.",
            labels, buckets=_DURATION_BUCKETS, registry=registry,
        )
        self.work_duration = Histogram(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes.",
            labels, buckets=_DURATION_BUCKETS, registry=registry,
        )
        self.unfinished_work = Gauge(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has done that is in progress and hasn't been observed "
            "by work_duration. Large values indicate stuck threads. One can deduce the number "
            "of stuck threads by observing the rate at which this increases.",
            labels, registry=registry,
        )
        self.longest_running = Gauge(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running.",
            labels, registry=registry,
        )
        self.retries = Counter(
            "workqueue_retries_total", "Total number of retries handled by workqueue", labels,
            registry=registry,
        )


_default_provider: PrometheusMetricsProvider | None = None


def set_metrics_provider(provider: PrometheusMetricsProvider | None) -> None:
    """Install the provider used by named queues created afterwards without their own one."""
    global _default_provider
    _default_provider = provider


def default_metrics_provider() -> PrometheusMetricsProvider | None:
    """Return the provider installed by :func:`set_metrics_provider`, if any."""
    return _default_provider


class QueueMetrics(Generic[T]):
    """One queue's metrics (client-go's ``defaultQueueMetrics``).

    The queue calls :meth:`add`, :meth:`get` and :meth:`done` while holding its own lock, so
    those are serialised; the processing start times are additionally guarded for the scrape
    thread.
    """

    def __init__(self, provider: PrometheusMetricsProvider, name: str, clock: Clock) -> None:
        """Bind the provider's families to the label ``name``."""
        self._clock = clock
        self._depth = provider.depth.labels(name)
        self._adds = provider.adds.labels(name)
        self._latency = provider.latency.labels(name)
        self._work_duration = provider.work_duration.labels(name)
        self._retries = provider.retries.labels(name)
        self._added_at: dict[T, float] = {}
        self._started_at: dict[T, float] = {}
        self._lock = threading.Lock()
        provider.unfinished_work.labels(name).set_function(self.unfinished_work_seconds)
        provider.longest_running.labels(name).set_function(
            self.longest_running_processor_seconds
        )

    def add(self, item: T) -> None:
        """Record that ``item`` entered the queue."""
        self._adds.inc()
        self._depth.inc()
        self._added_at.setdefault(item, self._clock.now())

    def get(self, item: T) -> None:
        """Record that ``item`` was handed to a worker."""
        now = self._clock.now()
        self._depth.dec()
        with self._lock:
            self._started_at[item] = now
        added = self._added_at.pop(item, None)
        if added is not None:
            self._latency.observe(now - added)

    def done(self, item: T) -> None:
        """Record that the worker finished ``item``."""
        with self._lock:
            started = self._started_at.pop(item, None)
        if started is not None:
            self._work_duration.observe(self._clock.now() - started)

    def retry(self) -> None:
        """Count one delayed re-add."""
        self._retries.inc()

    def unfinished_work_seconds(self) -> float:
        """Return the summed age of the items being processed."""
        now = self._clock.now()
        with self._lock:
            return sum(now - t for t in self._started_at.values())

    def longest_running_processor_seconds(self) -> float:
        """Return the age of the oldest item being processed (0 when none is)."""
        now = self._clock.now()
        with self._lock:
            oldest = min(self._started_at.values(), default=now)
        return now - oldest

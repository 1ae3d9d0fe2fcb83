"""Work-queue metrics for prometheus_client, with client-go's metric names.

Metrics are opt-in per queue: a queue records them only when it has a ``name`` and a
:class:`PrometheusMetricsProvider` (passed to the queue, or installed for every queue with
:func:`set_metrics_provider`, client-go's ``workqueue.SetProvider``). Every metric carries one
label, ``name``, the queue's name:

- ``workqueue_depth`` (gauge): items added and not yet handed out.
- ``workqueue_adds_total`` (counter): items added (duplicates of a waiting item not counted).
- ``workqueue_queue_duration_seconds`` (histogram): time from add to get.
- ``workqueue_work_duration_seconds`` (histogram): time from get to done.
- ``workqueue_unfinished_work_seconds`` (gauge): summed age of the items being processed.
- ``workqueue_longest_running_processor_seconds`` (gauge): age of the oldest of those.
- ``workqueue_retries_total`` (counter): delayed (and rate-limited) re-adds.

Queues record into plain numbers under a small lock and the provider's collector turns them
into metric families when the registry is scraped: a prometheus_client ``Counter``/``Histogram``
per event would cost several locks per item and slow a busy queue several-fold. Queues with
the same name share one set of numbers, as in client-go.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Hashable, Iterator
from dataclasses import dataclass, fields

from prometheus_client import REGISTRY, CollectorRegistry
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from kgen_runtime.util.clock import TimeSource

__all__ = ["PrometheusMetricsProvider", "QueueMetrics", "set_metrics_provider"]

DURATION_BUCKETS = tuple(10e-9 * 10**i for i in range(10))
"""client-go's ``ExponentialBuckets(10e-9, 10, 10)``: 10 ns to 10 s (upper bounds)."""

_BUCKET_LABELS = [*map(floatToGoString, DURATION_BUCKETS), "+Inf"]


class _Histogram:
    """Bucket counts and a sum; the caller serialises access."""

    __slots__ = ("counts", "total")

    def __init__(self) -> None:
        self.counts = [0] * (len(DURATION_BUCKETS) + 1)  # the last one is +Inf
        self.total = 0.0

    def observe(self, value: float) -> None:
        self.counts[bisect_left(DURATION_BUCKETS, value)] += 1
        self.total += value

    def cumulative(self) -> list[tuple[str, float]]:
        buckets, running = [], 0
        for bound, count in zip(_BUCKET_LABELS, self.counts, strict=True):
            running += count
            buckets.append((bound, float(running)))
        return buckets


class QueueMetrics:
    """The numbers behind one queue name's metrics (client-go's ``defaultQueueMetrics``).

    Thread-safe: queues call :meth:`add`, :meth:`get`, :meth:`done` and :meth:`retry` from
    any thread; the collector reads a consistent snapshot.
    """

    def __init__(self, clock: TimeSource) -> None:
        """Start at zero; ``clock`` times the durations."""
        self._clock = clock
        self._lock = threading.Lock()
        self.depth = 0
        self.adds = 0
        self.retries = 0
        self.latency = _Histogram()
        self.work_duration = _Histogram()
        self._added_at: dict[Hashable, float] = {}
        self._started_at: dict[Hashable, float] = {}

    def add(self, item: Hashable) -> None:
        """Record that ``item`` entered the queue."""
        now = self._clock.now()
        with self._lock:
            self.adds += 1
            self.depth += 1
            self._added_at.setdefault(item, now)

    def get(self, item: Hashable) -> None:
        """Record that ``item`` was handed to a worker."""
        now = self._clock.now()
        with self._lock:
            self.depth -= 1
            self._started_at[item] = now
            added = self._added_at.pop(item, None)
            if added is not None:
                self.latency.observe(now - added)

    def done(self, item: Hashable) -> None:
        """Record that the worker finished ``item``."""
        now = self._clock.now()
        with self._lock:
            started = self._started_at.pop(item, None)
            if started is not None:
                self.work_duration.observe(now - started)

    def retry(self) -> None:
        """Count one delayed re-add."""
        with self._lock:
            self.retries += 1

    def collect(self, name: str, families: _Families) -> None:
        """Add this queue's samples, labelled ``name``, to the scrape's ``families``."""
        labels = [name]
        now = self._clock.now()
        with self._lock:
            started = list(self._started_at.values())
            families.depth.add_metric(labels, self.depth)
            families.adds.add_metric(labels, self.adds)
            families.retries.add_metric(labels, self.retries)
            families.latency.add_metric(labels, self.latency.cumulative(), self.latency.total)
            families.work_duration.add_metric(
                labels, self.work_duration.cumulative(), self.work_duration.total
            )
        families.unfinished_work.add_metric(labels, sum(now - t for t in started))
        families.longest_running.add_metric(labels, now - min(started, default=now))


@dataclass(frozen=True)
class _Families:
    """One scrape's metric families, with client-go's names and help texts."""

    depth: GaugeMetricFamily
    adds: CounterMetricFamily
    latency: HistogramMetricFamily
    work_duration: HistogramMetricFamily
    unfinished_work: GaugeMetricFamily
    longest_running: GaugeMetricFamily
    retries: CounterMetricFamily

    @classmethod
    def empty(cls) -> _Families:
        labels = ["name"]
        return cls(
            depth=GaugeMetricFamily(
                "workqueue_depth", "Current depth of workqueue", labels=labels
            ),
            adds=CounterMetricFamily(
                "workqueue_adds", "Total number of adds handled by workqueue", labels=labels
            ),
            latency=HistogramMetricFamily(
                "workqueue_queue_duration_seconds",
                "How long in seconds an item stays in workqueue before being requested.",
                labels=labels,
            ),
            work_duration=HistogramMetricFamily(
                "workqueue_work_duration_seconds",
                "How long in seconds processing an item from workqueue takes.",
                labels=labels,
            ),
            unfinished_work=GaugeMetricFamily(
                "workqueue_unfinished_work_seconds",
                "How many seconds of work has done that is in progress and hasn't been "
                "observed by work_duration. Large values indicate stuck threads. One can "
                "deduce the number of stuck threads by observing the rate at which this "
                "increases.",
                labels=labels,
            ),
            longest_running=GaugeMetricFamily(
                "workqueue_longest_running_processor_seconds",
                "How many seconds has the longest running processor for workqueue been "
                "running.",
                labels=labels,
            ),
            retries=CounterMetricFamily(
                "workqueue_retries", "Total number of retries handled by workqueue",
                labels=labels,
            ),
        )

    def all(self) -> Iterator[Metric]:
        return (getattr(self, field.name) for field in fields(self))


class PrometheusMetricsProvider(Collector):
    """Serves the ``workqueue_*`` metrics of the queues using it from one registry.

    Create one per registry (registering twice in a registry is an error). Thread-safe.
    """

    def __init__(self, registry: CollectorRegistry = REGISTRY) -> None:
        """Register this provider as a collector in ``registry``."""
        self._lock = threading.Lock()
        self._queues: dict[str, QueueMetrics] = {}
        registry.register(self)

    def queue_metrics(self, name: str, clock: TimeSource) -> QueueMetrics:
        """Return the numbers for queue ``name``.

        Shared by every queue of that name; the first one's ``clock`` times them all.
        """
        with self._lock:
            metrics = self._queues.get(name)
            if metrics is None:
                metrics = self._queues[name] = QueueMetrics(clock)
            return metrics

    def describe(self) -> Iterator[Metric]:
        """Name the families (lets the registry reject duplicate registration)."""
        yield from _Families.empty().all()

    def collect(self) -> Iterator[Metric]:
        """Build the families from every queue's current numbers."""
        families = _Families.empty()
        with self._lock:
            queues = list(self._queues.items())
        for name, metrics in queues:
            metrics.collect(name, families)
        yield from families.all()


_default_provider: PrometheusMetricsProvider | None = None


def set_metrics_provider(provider: PrometheusMetricsProvider | None) -> None:
    """Install the provider used by named queues created afterwards without their own one."""
    global _default_provider
    _default_provider = provider


def default_metrics_provider() -> PrometheusMetricsProvider | None:
    """Return the provider installed by :func:`set_metrics_provider`, if any."""
    return _default_provider

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

Recording costs next to nothing on the hot path: each queue records into its own
:class:`QueueMetrics` while it already holds its own lock (no lock of its own, no
prometheus_client call: a ``Counter``/``Histogram`` per event would cost several locks per
item and slow a busy queue several-fold), durations are appended to a list and binned in
batches, counts that follow from the queue's own maps (depth, adds) are not kept at all, and
the provider's collector turns the numbers into metric families when the
registry is scraped — taking each queue's lock then, so a scrape is exact. Queues with the
same name are summed into one set of series, as client-go's share one.
"""

from __future__ import annotations

import threading
from bisect import bisect_right
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, fields
from typing import Any

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

    def observe_all(self, values: list[float]) -> None:
        """Count ``values`` (sorted in place) into the buckets: C-speed sort and bisects."""
        if not values:
            return
        self.total += sum(values)
        values.sort()
        below = 0
        for index, bound in enumerate(DURATION_BUCKETS):
            upto = bisect_right(values, bound)  # Prometheus buckets are "less or equal"
            self.counts[index] += upto - below
            below = upto
        self.counts[-1] += len(values) - below

    @property
    def count(self) -> int:
        """The number of values counted."""
        return sum(self.counts)

    def merge(self, other: _Histogram) -> None:
        for index, count in enumerate(other.counts):
            self.counts[index] += count
        self.total += other.total

    def cumulative(self) -> list[tuple[str, float]]:
        buckets, running = [], 0
        for bound, count in zip(_BUCKET_LABELS, self.counts, strict=True):
            running += count
            buckets.append((bound, float(running)))
        return buckets


class QueueMetrics:
    """The numbers of one queue (client-go's ``defaultQueueMetrics``).

    Thread-safety is the queue's: the queue appends to :attr:`waits` and :attr:`work` with
    ``lock`` (its own lock) held, and :meth:`collect` takes it. Depth, adds and the
    in-progress gauges are read at scrape time from the queue's own maps of waiting and
    processed items to the time each was added / handed out (:meth:`track`), so recording
    costs a clock read per step and a list append per get and per done.
    """

    #: Work durations waiting to be binned; binned at once past this many (the queue checks
    #: on ``done``, since waits never outnumber the dones plus the items in progress), and
    #: on every scrape.
    PENDING_LIMIT = 1024

    def __init__(self, clock: TimeSource, lock: threading.Lock | None = None) -> None:
        """Start at zero; ``clock`` times the durations, ``lock`` guards the numbers."""
        self.now = clock.now
        self.lock = lock if lock is not None else threading.Lock()
        self.retries = 0
        self.latency = _Histogram()
        self.work_duration = _Histogram()
        self.waits: list[float] = []
        """Times from add to get not yet binned; the queue appends one per get."""
        self.work: list[float] = []
        """Times from get to done not yet binned; the queue appends one per done."""
        self._waiting: Mapping[Any, float] = {}
        self._processing: Mapping[Any, float] = {}

    def track(
        self, waiting: Mapping[Any, float], processing: Mapping[Any, float]
    ) -> None:
        """Read depth and in-progress work from the queue's maps (item → time added /
        handed out), which the queue changes only with ``lock`` held."""
        self._waiting, self._processing = waiting, processing

    @property
    def depth(self) -> int:
        """Items added and not yet handed out."""
        return len(self._waiting)

    @property
    def adds(self) -> int:
        """Items added (not counting duplicates of a waiting item): every one of them was
        either handed out since (one wait recorded) or is still waiting, so no counter
        is kept on the hot path."""
        return self.latency.count + len(self.waits) + len(self._waiting)

    def retry(self) -> None:
        """Count one delayed re-add (takes the lock: called outside the queue's)."""
        with self.lock:
            self.retries += 1

    def bin(self) -> None:
        """Count the pending durations into the histograms (with ``lock`` held)."""
        self.latency.observe_all(self.waits)
        self.waits.clear()
        self.work_duration.observe_all(self.work)
        self.work.clear()

    def collect(self, name: str, families: _Families) -> None:
        """Add this queue's samples, labelled ``name``, to the scrape's ``families``."""
        with self.lock:
            self.bin()
            now = self.now()
            started = list(self._processing.values())
            families.add(name, self, now, started)


@dataclass
class _Totals:
    """The sums over the queues of one name."""

    depth: int = 0
    adds: int = 0
    retries: int = 0
    latency: _Histogram = field(default_factory=lambda: _Histogram())
    work_duration: _Histogram = field(default_factory=lambda: _Histogram())
    unfinished: float = 0.0
    longest: float = 0.0


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
    _totals: dict[str, _Totals] = field(default_factory=dict)

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

    def add(self, name: str, queue: QueueMetrics, now: float, started: list[float]) -> None:
        """Add one queue's numbers (called with its lock held) to the series of ``name``."""
        totals = self._totals.setdefault(name, _Totals())
        totals.depth += queue.depth
        totals.adds += queue.adds
        totals.retries += queue.retries
        totals.latency.merge(queue.latency)
        totals.work_duration.merge(queue.work_duration)
        totals.unfinished += sum(now - t for t in started)
        totals.longest = max(totals.longest, now - min(started, default=now))

    def all(self) -> Iterator[Metric]:
        for name, totals in self._totals.items():
            labels = [name]
            self.depth.add_metric(labels, totals.depth)
            self.adds.add_metric(labels, totals.adds)
            self.retries.add_metric(labels, totals.retries)
            self.latency.add_metric(labels, totals.latency.cumulative(), totals.latency.total)
            self.work_duration.add_metric(
                labels, totals.work_duration.cumulative(), totals.work_duration.total
            )
            self.unfinished_work.add_metric(labels, totals.unfinished)
            self.longest_running.add_metric(labels, totals.longest)
        return (getattr(self, field.name) for field in fields(self) if field.name != "_totals")


class PrometheusMetricsProvider(Collector):
    """Serves the ``workqueue_*`` metrics of the queues using it from one registry.

    Create one per registry (registering twice in a registry is an error). Thread-safe.
    """

    def __init__(self, registry: CollectorRegistry = REGISTRY) -> None:
        """Register this provider as a collector in ``registry``."""
        self._lock = threading.Lock()
        self._queues: list[tuple[str, QueueMetrics]] = []
        registry.register(self)

    def queue_metrics(
        self, name: str, clock: TimeSource, lock: threading.Lock | None = None
    ) -> QueueMetrics:
        """Return new numbers for a queue called ``name``, recorded under ``lock``.

        Every queue gets its own (so recording needs no lock beyond the queue's); a scrape
        sums those of one name into one set of series, as client-go's queues of one name
        share theirs. Kept for the provider's lifetime: counters never go back.
        """
        metrics = QueueMetrics(clock, lock)
        with self._lock:
            self._queues.append((name, metrics))
        return metrics

    def describe(self) -> Iterator[Metric]:
        """Name the families (lets the registry reject duplicate registration)."""
        yield from _Families.empty().all()

    def collect(self) -> Iterator[Metric]:
        """Build the families from every queue's current numbers."""
        families = _Families.empty()
        with self._lock:
            queues = list(self._queues)
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

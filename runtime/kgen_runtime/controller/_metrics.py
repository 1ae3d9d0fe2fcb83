"""The manager's metrics registry, and reconcile metrics with controller-runtime's names.

:data:`METRICS_REGISTRY` is controller-runtime's ``metrics.Registry``: a registry of
kgen_runtime's own, not prometheus_client's default one, that a :class:`Manager` serves on
``/metrics`` unless told otherwise. It is one per process rather than one per manager because
what it measures is: transports and informers are shared by everything in the process and
exist before (and apart from) any manager, and a collector's names may be registered only once
per registry. Being kgen_runtime's own, it holds exactly what an operator's dashboards expect
(below) and no surprises from other libraries that register in prometheus_client's default
registry; add your own metrics to it with ``registry=METRICS_REGISTRY``. It holds:

- the REST client metrics (``rest_client_*``, see :class:`~kgen_runtime.rest.RestClientMetrics`);
- the reflector metrics (``reflector_*``, see :class:`~kgen_runtime.cache.ReflectorMetrics`);
- ``kgen_events_dropped_total{reason}``: Events recorded but never written (see
  :class:`~kgen_runtime.controller.EventMetrics`);
- the work-queue metrics (``workqueue_*``, see :mod:`kgen_runtime.workqueue.metrics`) of named
  queues — every controller's: importing this module installs :data:`WORKQUEUE_METRICS` as the
  default work-queue provider unless one is installed already (controller-runtime does the
  same at start-up);
- the reconcile metrics below, recorded by every :class:`Controller` into
  :data:`RECONCILE_METRICS` unless it is given another provider (or ``None``);
- the Python process's metrics (``process_*``, ``python_gc_*``, ``python_info``), as
  controller-runtime serves the Go process's.

Reconcile metrics (controllers with the same name share their numbers) carry the label
``controller``:

- ``controller_runtime_reconcile_total`` (counter, also labelled ``result``: ``success``,
  ``error``, ``requeue``, ``requeue_after``): reconciles by outcome.
- ``controller_runtime_reconcile_errors_total`` (counter): reconciles that raised.
- ``controller_runtime_terminal_reconcile_errors_total`` (counter): those that raised
  ``TerminalError``.
- ``controller_runtime_reconcile_time_seconds`` (histogram): time per reconcile.
- ``controller_runtime_active_workers`` (gauge): workers reconciling right now.
- ``controller_runtime_max_concurrent_reconciles`` (gauge): the controller's worker count.

The controller's queue is named after it, so the work-queue metrics (see
:mod:`kgen_runtime.workqueue.metrics`) appear under the same name when a work-queue metrics
provider is installed. As there, numbers are kept under a small lock and turned into metric
families only when the registry is scraped.
"""

from __future__ import annotations

import threading
from bisect import bisect_left
from collections.abc import Iterator
from typing import Literal

from prometheus_client import (
    REGISTRY,
    CollectorRegistry,
    GCCollector,
    PlatformCollector,
    ProcessCollector,
)
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from kgen_runtime.cache import REFLECTOR_METRICS
from kgen_runtime.events import EVENT_METRICS
from kgen_runtime.rest import REST_CLIENT_METRICS
from kgen_runtime.workqueue import PrometheusMetricsProvider, set_metrics_provider
from kgen_runtime.workqueue.metrics import default_metrics_provider

__all__ = [
    "METRICS_REGISTRY",
    "RECONCILE_METRICS",
    "WORKQUEUE_METRICS",
    "ReconcileMetrics",
    "ReconcileMetricsProvider",
    "ReconcileOutcome",
]

ReconcileOutcome = Literal["success", "error", "requeue", "requeue_after"]

RECONCILE_TIME_BUCKETS = (
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8,
    0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0,
    15.0, 20.0, 25.0, 30.0, 40.0, 50.0, 60.0,
)
"""controller-runtime's buckets of ``reconcile_time_seconds`` (upper bounds)."""

_BUCKET_LABELS = [*map(floatToGoString, RECONCILE_TIME_BUCKETS), "+Inf"]

_OUTCOMES: tuple[ReconcileOutcome, ...] = ("success", "error", "requeue", "requeue_after")


class ReconcileMetrics:
    """The numbers of one controller name; thread-safe, cheap to record."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._outcomes = dict.fromkeys(_OUTCOMES, 0)
        self._errors = 0
        self._terminal = 0
        self._buckets = [0] * (len(RECONCILE_TIME_BUCKETS) + 1)  # the last one is +Inf
        self._seconds = 0.0
        self._active = 0
        self._workers = 0

    def set_workers(self, workers: int) -> None:
        with self._lock:
            self._workers = workers

    def started(self) -> None:
        """A worker began a reconcile."""
        with self._lock:
            self._active += 1

    def finished(self, outcome: ReconcileOutcome, seconds: float, *, terminal: bool) -> None:
        """A reconcile ended with ``outcome`` after ``seconds``."""
        with self._lock:
            self._active -= 1
            self._outcomes[outcome] += 1
            if outcome == "error":
                self._errors += 1
                self._terminal += terminal
            self._buckets[bisect_left(RECONCILE_TIME_BUCKETS, seconds)] += 1
            self._seconds += seconds

    def _collect(self, name: str, families: _Families) -> None:
        with self._lock:
            for outcome, count in self._outcomes.items():
                families.total.add_metric([name, outcome], count)
            families.errors.add_metric([name], self._errors)
            families.terminal.add_metric([name], self._terminal)
            running = 0
            buckets: list[tuple[str, float]] = []
            for bound, count in zip(_BUCKET_LABELS, self._buckets, strict=True):
                running += count
                buckets.append((bound, running))
            families.time.add_metric([name], buckets, self._seconds)
            families.active.add_metric([name], self._active)
            families.workers.add_metric([name], self._workers)


class ReconcileMetricsProvider(Collector):
    """Registers one collector in ``registry`` and hands out per-controller numbers."""

    def __init__(self, registry: CollectorRegistry = REGISTRY) -> None:
        self._lock = threading.Lock()
        self._metrics: dict[str, ReconcileMetrics] = {}
        registry.register(self)

    def for_controller(self, name: str) -> ReconcileMetrics:
        """The numbers of controller ``name`` (shared by controllers of that name)."""
        with self._lock:
            return self._metrics.setdefault(name, ReconcileMetrics())

    def describe(self) -> Iterator[Metric]:
        return _Families().all()

    def collect(self) -> Iterator[Metric]:
        families = _Families()
        with self._lock:
            metrics = list(self._metrics.items())
        for name, numbers in metrics:
            numbers._collect(name, families)
        return families.all()


_PREFIX = "controller_runtime_"


class _Families:
    """Fresh, empty metric families for one scrape."""

    def __init__(self) -> None:
        self.total = CounterMetricFamily(
            f"{_PREFIX}reconcile_total", "Total number of reconciliations per controller",
            labels=["controller", "result"])
        self.errors = CounterMetricFamily(
            f"{_PREFIX}reconcile_errors_total",
            "Total number of reconciliation errors per controller", labels=["controller"])
        self.terminal = CounterMetricFamily(
            f"{_PREFIX}terminal_reconcile_errors_total",
            "Total number of terminal reconciliation errors per controller",
            labels=["controller"])
        self.time = HistogramMetricFamily(
            f"{_PREFIX}reconcile_time_seconds",
            "Length of time per reconciliation per controller", labels=["controller"])
        self.active = GaugeMetricFamily(
            f"{_PREFIX}active_workers", "Number of currently used workers per controller",
            labels=["controller"])
        self.workers = GaugeMetricFamily(
            f"{_PREFIX}max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller", labels=["controller"])

    def all(self) -> Iterator[Metric]:
        return iter([self.total, self.errors, self.terminal, self.time, self.active,
                     self.workers])


METRICS_REGISTRY = CollectorRegistry()
"""kgen_runtime's registry: what a :class:`Manager` serves (see the module docstring)."""

RECONCILE_METRICS = ReconcileMetricsProvider(METRICS_REGISTRY)
"""Where controllers record reconcile metrics unless given another provider."""

WORKQUEUE_METRICS = PrometheusMetricsProvider(METRICS_REGISTRY)
"""The work-queue metrics of :data:`METRICS_REGISTRY` (the default provider, see above)."""

METRICS_REGISTRY.register(REST_CLIENT_METRICS)
METRICS_REGISTRY.register(EVENT_METRICS)
METRICS_REGISTRY.register(REFLECTOR_METRICS)
ProcessCollector(registry=METRICS_REGISTRY)
PlatformCollector(registry=METRICS_REGISTRY)
GCCollector(registry=METRICS_REGISTRY)
if default_metrics_provider() is None:
    set_metrics_provider(WORKQUEUE_METRICS)

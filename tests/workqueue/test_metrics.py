"""Metrics: client-go's names, recorded only for named queues with a provider."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from prometheus_client import CollectorRegistry, generate_latest

from kgen_runtime.util import FakeClock
from kgen_runtime.workqueue import (
    ItemExponentialFailureRateLimiter,
    PrometheusMetricsProvider,
    Queue,
    RateLimitingQueue,
    set_metrics_provider,
)
from kgen_runtime.workqueue.metrics import QueueMetrics


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


def sample(registry: CollectorRegistry, name: str, queue: str = "foos") -> float | None:
    return registry.get_sample_value(name, {"name": queue})


def test_metric_names_and_values(registry: CollectorRegistry) -> None:
    clock = FakeClock()
    provider = PrometheusMetricsProvider(registry)
    q: Queue[str] = Queue(name="foos", clock=clock, metrics_provider=provider)
    q.add("a")
    q.add("a")  # deduplicated: not counted
    q.add("b")
    assert sample(registry, "workqueue_adds_total") == 2
    assert sample(registry, "workqueue_depth") == 2

    clock.step(2)
    assert q.get() == ("a", False)
    assert sample(registry, "workqueue_depth") == 1
    assert sample(registry, "workqueue_queue_duration_seconds_count") == 1
    assert sample(registry, "workqueue_queue_duration_seconds_sum") == 2

    clock.step(3)
    assert q.get() == ("b", False)
    clock.step(1)
    assert sample(registry, "workqueue_unfinished_work_seconds") == 4 + 1
    assert sample(registry, "workqueue_longest_running_processor_seconds") == 4

    q.done("a")
    assert sample(registry, "workqueue_work_duration_seconds_count") == 1
    assert sample(registry, "workqueue_work_duration_seconds_sum") == 4
    assert sample(registry, "workqueue_unfinished_work_seconds") == 1
    q.done("b")
    assert sample(registry, "workqueue_longest_running_processor_seconds") == 0
    assert sample(registry, "workqueue_retries_total") == 0


def test_retries_counted_by_rate_limited_adds(registry: CollectorRegistry) -> None:
    provider = PrometheusMetricsProvider(registry)
    q: RateLimitingQueue[str] = RateLimitingQueue(
        ItemExponentialFailureRateLimiter(0.0, 0.0), name="foos", metrics_provider=provider
    )
    try:
        q.add_rate_limited("a")
        q.add_after("b", 0)
        assert sample(registry, "workqueue_retries_total") == 2
        assert sample(registry, "workqueue_adds_total") == 2
    finally:
        q.shut_down()


@pytest.fixture
def installed_provider(registry: CollectorRegistry) -> Iterator[PrometheusMetricsProvider]:
    provider = PrometheusMetricsProvider(registry)
    set_metrics_provider(provider)
    yield provider
    set_metrics_provider(None)


def test_installed_provider_serves_named_queues_only(
    registry: CollectorRegistry, installed_provider: PrometheusMetricsProvider
) -> None:
    named: Queue[str] = Queue(name="bars")
    anonymous: Queue[str] = Queue()
    named.add("x")
    anonymous.add("x")
    assert sample(registry, "workqueue_adds_total", "bars") == 1
    assert sample(registry, "workqueue_adds_total", "") is None


def test_no_provider_no_metrics(registry: CollectorRegistry) -> None:
    q: Queue[str] = Queue(name="foos")
    q.add("x")
    assert q._metrics is None
    assert sample(registry, "workqueue_adds_total") is None


def test_exposition_buckets_and_shared_names(registry: CollectorRegistry) -> None:
    clock = FakeClock()
    provider = PrometheusMetricsProvider(registry)
    first: Queue[str] = Queue(name="foos", clock=clock, metrics_provider=provider)
    second: Queue[str] = Queue(name="foos", clock=clock, metrics_provider=provider)
    first.add("a")
    second.add("a")  # another queue, same name: the same numbers
    clock.step(0.005)
    assert first.get() == ("a", False)
    text = generate_latest(registry).decode()
    assert 'workqueue_adds_total{name="foos"} 2.0' in text
    assert 'workqueue_depth{name="foos"} 1.0' in text
    assert 'workqueue_queue_duration_seconds_bucket{le="0.001",name="foos"} 0.0' in text
    assert 'workqueue_queue_duration_seconds_bucket{le="0.01",name="foos"} 1.0' in text
    assert 'workqueue_queue_duration_seconds_bucket{le="+Inf",name="foos"} 1.0' in text
    assert "# TYPE workqueue_retries_total counter" in text


def test_one_provider_per_registry(registry: CollectorRegistry) -> None:
    PrometheusMetricsProvider(registry)
    with pytest.raises(ValueError, match="Duplicated timeseries"):
        PrometheusMetricsProvider(registry)


def test_adds_count_re_adds_while_processing_and_not_duplicates(
    registry: CollectorRegistry,
) -> None:
    """``workqueue_adds_total`` is derived at scrape time (handed out + still waiting): an
    add while the item is processed counts (client-go's ``metrics.add`` runs before the
    processing check), a duplicate of a waiting item does not, and a get changes nothing."""
    provider = PrometheusMetricsProvider(registry)
    q: Queue[str] = Queue(name="foos", metrics_provider=provider)
    q.add("a")
    assert q.get() == ("a", False)
    assert sample(registry, "workqueue_adds_total") == 1
    q.add("a")  # while processing: dirty, queued again on done
    q.add("a")  # a duplicate of a waiting item
    assert sample(registry, "workqueue_adds_total") == 2
    assert sample(registry, "workqueue_depth") == 1
    q.done("a")
    assert q.get() == ("a", False)
    q.done("a")
    assert sample(registry, "workqueue_adds_total") == 2
    assert sample(registry, "workqueue_depth") == 0
    assert sample(registry, "workqueue_queue_duration_seconds_count") == 2
    assert sample(registry, "workqueue_work_duration_seconds_count") == 2


def test_counts_stay_exact_across_batches_binned_between_scrapes(
    registry: CollectorRegistry,
) -> None:
    """Durations are binned in batches on ``done`` (``QueueMetrics.PENDING_LIMIT``) and on
    every scrape: a scrape after several batches and a part batch counts every item once."""
    clock = FakeClock()
    provider = PrometheusMetricsProvider(registry)
    q: Queue[int] = Queue(name="foos", clock=clock, metrics_provider=provider)
    items = 2 * QueueMetrics.PENDING_LIMIT + 5
    for item in range(items):
        q.add(item)
    clock.step(0.5)
    for _ in range(items - 1):
        item, _shutdown = q.get()
        clock.step(2)
        q.done(item)  # type: ignore[arg-type]
    assert sample(registry, "workqueue_adds_total") == items
    assert sample(registry, "workqueue_depth") == 1
    assert sample(registry, "workqueue_work_duration_seconds_count") == items - 1
    assert sample(registry, "workqueue_work_duration_seconds_sum") == 2 * (items - 1)
    assert sample(registry, "workqueue_queue_duration_seconds_count") == items - 1
    bucket = {"name": "foos", "le": "10.0"}
    count = registry.get_sample_value("workqueue_work_duration_seconds_bucket", bucket)
    assert count == items - 1
    bucket["le"] = "1.0"
    assert registry.get_sample_value("workqueue_work_duration_seconds_bucket", bucket) == 0

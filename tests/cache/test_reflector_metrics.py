"""The reflectors' ``reflector_*`` metrics: one record per list and per watch, the same from
the blocking reflector and its async twin."""

from __future__ import annotations

import pytest
from prometheus_client import CollectorRegistry

from kgen_runtime.cache import REFLECTOR_METRICS, Reflector, ReflectorMetrics
from tests.cache._fakes import FakeListWatch, event, eventually, obj, page
from tests.cache.test_reflector import REFLECTORS, RecordingStore, opts, reflecting, running


def _values(registry: CollectorRegistry) -> dict[str, float]:
    """Every ``reflector_*`` sample of reflector "foos", by sample name."""
    values = {}
    for family in registry.collect():
        for sample in family.samples:
            if sample.name.startswith("reflector_"):
                assert sample.labels == {"name": "foos"}, sample
                values[sample.name] = sample.value
    return values


@pytest.mark.parametrize("kind", REFLECTORS)
def test_lists_and_watches_are_counted_with_their_items(kind: str) -> None:
    metrics = ReflectorMetrics()
    registry = CollectorRegistry()
    registry.register(metrics)
    lw = FakeListWatch([page("10", obj("a"), obj("b"), obj("c")), page("20", obj("a"))])
    store = RecordingStore()
    with reflecting(kind, lw, store, name="foos", options=opts(), metrics=metrics):
        first = lw.wait_for_watchers(1)
        first.push(event("MODIFIED", obj("a", rv="11")), event("DELETED", obj("b", rv="12")))
        store.wait_for(lambda calls: len(calls) == 3)
        first.end()  # a watch with events: resumed from "12" without a relist
        lw.wait_for_watchers(2).end()  # short and empty: the round fails, a relist follows
        lw.wait_for_watchers(3)
        eventually(lambda: _values(registry)["reflector_watches_total"] == 2.0)
    values = _values(registry)
    assert {name: values[name] for name in sorted(values) if not name.endswith("_created")
            and "duration" not in name} == {
        "reflector_items_per_list_count": 2.0,
        "reflector_items_per_list_sum": 4.0,
        "reflector_items_per_watch_count": 2.0,
        "reflector_items_per_watch_sum": 2.0,
        "reflector_last_resource_version": 20.0,
        "reflector_lists_total": 2.0,
        "reflector_short_watches_total": 1.0,
        "reflector_watches_total": 2.0,
    }
    assert values["reflector_list_duration_seconds_count"] == 2.0
    assert values["reflector_watch_duration_seconds_count"] == 2.0


def test_reflectors_record_into_the_process_wide_metrics_by_default() -> None:
    registry = CollectorRegistry()
    registry.register(REFLECTOR_METRICS)
    name = "bars.test-reflector-metrics.example.com"

    def lists() -> float:
        return registry.get_sample_value("reflector_lists_total", {"name": name}) or 0.0

    before = lists()
    lw = FakeListWatch([page("7", obj("a"))])
    with running(Reflector(lw, RecordingStore(), name=name, options=opts())):
        lw.wait_for_watchers(1)
    assert lists() == before + 1
    assert registry.get_sample_value("reflector_last_resource_version", {"name": name}) == 7.0

"""Reflector metrics, with the names client-go's reflector metrics provider had in Kubernetes
(``reflector_*``, one ``name`` label: the reflector's name, e.g. ``foos.example.com``).

client-go stopped serving them because its reflector names carried a per-instance counter,
so every restarted informer added series forever; kgen's reflector names are the resource's
(the shared informer factory's ``resource.group``), so the series stay bounded.

Every :class:`Reflector` records into one process-wide :data:`REFLECTOR_METRICS`, once per
list and per watch (never per event), whether or not a registry serves it; the Manager's
registry does (see :mod:`kgen_runtime.controller`).

- ``reflector_lists_total`` (counter), ``reflector_list_duration_seconds`` and
  ``reflector_items_per_list`` (summaries): full lists (all pages, or a streaming list's
  initial events) applied to the store.
- ``reflector_watches_total``, ``reflector_short_watches_total`` (counters),
  ``reflector_watch_duration_seconds`` and ``reflector_items_per_watch`` (summaries): watches
  that ended (not those closed by the reflector's stop); a short watch is one that ended
  within a second without an event.
- ``reflector_last_resource_version`` (gauge): the last resourceVersion applied, when numeric
  (as it is on every API server, though clients must not rely on it for ordering).
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client import Counter, Gauge, Summary
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

__all__ = ["REFLECTOR_METRICS", "ReflectorMetrics"]


class ReflectorMetrics(Collector):
    """The numbers behind the ``reflector_*`` metrics; a collector for any registry.

    Thread-safe.
    """

    def __init__(self) -> None:
        name = ["name"]
        self._lists = Counter(
            "reflector_lists", "Total number of API lists done by the reflectors",
            name, registry=None)
        self._list_duration = Summary(
            "reflector_list_duration_seconds",
            "How long an API list takes to return and decode for the reflectors",
            name, registry=None)
        self._items_per_list = Summary(
            "reflector_items_per_list", "How many items an API list returns to the reflectors",
            name, registry=None)
        self._watches = Counter(
            "reflector_watches", "Total number of API watches done by the reflectors",
            name, registry=None)
        self._short_watches = Counter(
            "reflector_short_watches",
            "Total number of short API watches done by the reflectors", name, registry=None)
        self._watch_duration = Summary(
            "reflector_watch_duration_seconds", "How long an API watch takes to return and "
            "decode for the reflectors", name, registry=None)
        self._items_per_watch = Summary(
            "reflector_items_per_watch", "How many items an API watch returns to the reflectors",
            name, registry=None)
        self._last_resource_version = Gauge(
            "reflector_last_resource_version", "Last resource version seen for the reflectors",
            name, registry=None)
        self._metrics = (
            self._lists, self._list_duration, self._items_per_list, self._watches,
            self._short_watches, self._watch_duration, self._items_per_watch,
            self._last_resource_version,
        )

    def listed(self, name: str, seconds: float, items: int, resource_version: str) -> None:
        """Reflector ``name`` replaced its store with ``items`` objects listed in ``seconds``."""
        self._lists.labels(name).inc()
        self._list_duration.labels(name).observe(seconds)
        self._items_per_list.labels(name).observe(items)
        self.saw_resource_version(name, resource_version)

    def watched(
        self, name: str, seconds: float, items: int, resource_version: str, *, short: bool
    ) -> None:
        """A watch of reflector ``name`` ended after ``seconds`` and ``items`` events, at
        ``resource_version``."""
        self._watches.labels(name).inc()
        if short:
            self._short_watches.labels(name).inc()
        self._watch_duration.labels(name).observe(seconds)
        self._items_per_watch.labels(name).observe(items)
        self.saw_resource_version(name, resource_version)

    def saw_resource_version(self, name: str, resource_version: str) -> None:
        """Reflector ``name`` is now at ``resource_version`` (kept if numeric)."""
        if resource_version.isdigit():
            self._last_resource_version.labels(name).set(int(resource_version))

    def describe(self) -> Iterator[Metric]:
        for metric in self._metrics:
            yield from metric.describe()

    def collect(self) -> Iterator[Metric]:
        for metric in self._metrics:
            yield from metric.collect()


REFLECTOR_METRICS = ReflectorMetrics()
"""What reflectors record into unless given their own :class:`ReflectorMetrics`."""

"""Event aggregation and spam filtering (client-go's ``tools/record/events_cache.go``).

Before an event is written, the :class:`EventCorrelator` decides how:

1. **Aggregate.** Events that differ only in their message (same source, object, type and
   reason) are counted per such group within ``aggregate_interval`` (10 min). From the
   ``aggregate_max_events``-th (10th) distinct message on, they are folded into one event
   whose message is ``"(combined from similar events): <latest message>"``.
2. **Observe.** An event identical to one already written (same key, message included) is
   not written again: the existing Event's ``count``, ``lastTimestamp`` and ``message`` are
   patched instead.
3. **Filter spam.** Each (source, involved object) pair has a token bucket of
   ``spam_burst`` (25) events refilled at ``spam_qps`` (one per 5 min); events beyond it are
   dropped.

All caches are LRUs of :data:`MAX_LRU_CACHE_ENTRIES` keys. Time comes from ``clock``
(intervals, buckets) and ``now`` (the wall-clock timestamps written on events).
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar

from kgen_runtime.api.core.v1.models import Event, ObjectReference
from kgen_runtime.meta import ObjectMeta, format_time
from kgen_runtime.util.clock import REAL_CLOCK, Clock, wall_clock_now

__all__ = ["MAX_LRU_CACHE_ENTRIES", "CorrelatedEvent", "EventCorrelator"]

MAX_LRU_CACHE_ENTRIES = 4096
DEFAULT_AGGREGATE_MAX_EVENTS = 10
DEFAULT_AGGREGATE_INTERVAL = 600.0
DEFAULT_SPAM_BURST = 25
DEFAULT_SPAM_QPS = 1.0 / 300.0
AGGREGATE_PREFIX = "(combined from similar events): "

K = TypeVar("K")
V = TypeVar("V")


class _LRU(Generic[K, V]):
    """A size-bounded mapping that evicts the least recently used key; not thread-safe."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._data: OrderedDict[K, V] = OrderedDict()

    def get(self, key: K) -> V | None:
        value = self._data.get(key)
        if value is not None:
            self._data.move_to_end(key)
        return value

    def put(self, key: K, value: V) -> None:
        self._data[key] = value
        self._data.move_to_end(key)
        if len(self._data) > self._size:
            self._data.popitem(last=False)


@dataclass(slots=True)
class _Aggregate:
    local_keys: set[str] = field(default_factory=set)
    last_seen: float = float("-inf")


@dataclass(frozen=True, slots=True)
class _Observation:
    count: int
    first_timestamp: str | None
    name: str | None
    resource_version: str | None


@dataclass(slots=True)
class _Bucket:
    tokens: float
    last: float


@dataclass(frozen=True, slots=True)
class CorrelatedEvent:
    """What to write: ``event`` (new, owned by the caller), and ``patch`` if it updates an
    existing Event (``event.count > 1``); ``skip`` when the spam filter dropped it."""

    event: Event | None
    patch: dict[str, Any] | None = None
    skip: bool = False


def _reference_key(ref: ObjectReference | None) -> tuple[Any, ...]:
    ref = ref or ObjectReference()
    return (ref.kind, ref.namespace, ref.name, ref.uid, ref.api_version)


def _source_key(event: Event) -> tuple[Any, ...]:
    source = event.source
    return (source.component, source.host) if source is not None else (None, None)


def spam_key(event: Event) -> tuple[Any, ...]:
    """The spam filter's key: the event's source and involved object."""
    return (*_source_key(event), *_reference_key(event.involved_object))


def aggregate_key(event: Event) -> tuple[Any, ...]:
    """The aggregation group: everything that identifies the event except its message."""
    return (
        *spam_key(event),
        event.type,
        event.reason,
        event.reporting_component,
        event.reporting_instance,
    )


def event_key(event: Event) -> tuple[Any, ...]:
    """Identifies identical events (client-go's ``getEventKey``), message included."""
    ref = event.involved_object or ObjectReference()
    return (
        *_source_key(event),
        *_reference_key(ref),
        ref.field_path,
        event.type,
        event.reason,
        event.message,
    )


class EventCorrelator:
    """Aggregates, deduplicates and rate-limits events (see the module docstring).

    Thread-safe (one lock); meant to be used by one sink-writing thread.
    """

    def __init__(
        self,
        *,
        clock: Clock = REAL_CLOCK,
        now: Callable[[], datetime] = wall_clock_now,
        aggregate_max_events: int = DEFAULT_AGGREGATE_MAX_EVENTS,
        aggregate_interval: float = DEFAULT_AGGREGATE_INTERVAL,
        spam_burst: int = DEFAULT_SPAM_BURST,
        spam_qps: float = DEFAULT_SPAM_QPS,
    ) -> None:
        self._clock = clock
        self._now = now
        self._max_events = aggregate_max_events
        self._interval = aggregate_interval
        self._burst = float(spam_burst)
        self._qps = spam_qps
        self._lock = threading.Lock()
        self._aggregates: _LRU[tuple[Any, ...], _Aggregate] = _LRU(MAX_LRU_CACHE_ENTRIES)
        self._observations: _LRU[tuple[Any, ...], _Observation] = _LRU(MAX_LRU_CACHE_ENTRIES)
        self._buckets: _LRU[tuple[Any, ...], _Bucket] = _LRU(MAX_LRU_CACHE_ENTRIES)

    def correlate(self, event: Event) -> CorrelatedEvent:
        """Decide how to write ``event`` (not modified; the result holds a new Event)."""
        with self._lock:
            aggregated, key = self._aggregate(event)
            observed, patch = self._observe(aggregated, key)
            if not self._allow(observed):
                return CorrelatedEvent(None, skip=True)
            return CorrelatedEvent(observed, patch)

    def update_state(self, event: Event) -> None:
        """Record the Event the server returned (its name, resourceVersion and count)."""
        with self._lock:
            self._observations.put(event_key(event), _observation(event))

    def _aggregate(self, event: Event) -> tuple[Event, tuple[Any, ...]]:
        """client-go's ``EventAggregate``: the event to observe and its observation key."""
        now = self._clock.now()
        group = aggregate_key(event)
        record = self._aggregates.get(group)
        if record is None or now - record.last_seen > self._interval:
            record = _Aggregate()
        record.local_keys.add(event.message or "")
        record.last_seen = now
        self._aggregates.put(group, record)
        if len(record.local_keys) < self._max_events:
            return event.deepcopy(), event_key(event)
        record.local_keys.pop()  # keep the set from growing past the threshold
        wall = self._now()
        ref = event.involved_object or ObjectReference()
        stamp = format_time(wall)
        combined = Event(
            metadata=ObjectMeta(
                name=event_name(ref.name, wall), namespace=event.metadata.namespace
            ),
            count=1,
            first_timestamp=stamp,
            last_timestamp=stamp,
            involved_object=ref.deepcopy(),
            message=AGGREGATE_PREFIX + (event.message or ""),
            type=event.type,
            reason=event.reason,
            source=None if event.source is None else event.source.deepcopy(),
            reporting_component=event.reporting_component,
            reporting_instance=event.reporting_instance,
        )
        return combined, group

    def _observe(
        self, event: Event, key: tuple[Any, ...]
    ) -> tuple[Event, dict[str, Any] | None]:
        """client-go's ``eventObserve``: turn a repeat into a count bump of the existing Event."""
        last = self._observations.get(key)
        patch: dict[str, Any] | None = None
        if last is not None and last.count > 0:
            event.metadata.name = last.name
            event.metadata.resource_version = last.resource_version
            event.first_timestamp = last.first_timestamp
            event.count = last.count + 1
            patch = {
                "count": event.count,
                "lastTimestamp": event.last_timestamp,
                "message": event.message,
            }
        self._observations.put(key, _observation(event))
        return event, patch

    def _allow(self, event: Event) -> bool:
        """The spam filter: take a token from the event's (source, object) bucket if any."""
        now = self._clock.now()
        key = spam_key(event)
        bucket = self._buckets.get(key)
        if bucket is None:
            bucket = _Bucket(self._burst, now)
        bucket.tokens = min(self._burst, bucket.tokens + (now - bucket.last) * self._qps)
        bucket.last = now
        self._buckets.put(key, bucket)
        if bucket.tokens < 1.0:
            return False
        bucket.tokens -= 1.0
        return True


def _observation(event: Event) -> _Observation:
    return _Observation(
        count=event.count or 0,
        first_timestamp=event.first_timestamp,
        name=event.metadata.name,
        resource_version=event.metadata.resource_version,
    )


def event_name(object_name: str | None, wall: datetime) -> str:
    """client-go's Event name: the object's name and the time in Unix nanoseconds, in hex."""
    nanos = int(wall.timestamp()) * 1_000_000_000 + wall.microsecond * 1000
    return f"{object_name}.{nanos:x}"

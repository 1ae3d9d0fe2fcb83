"""Recording Events (client-go's ``tools/record``): a recorder that never blocks its caller.

::

    broadcaster = EventBroadcaster()
    broadcaster.start_recording_to_sink(ClientEventSink(clientset.core_v1.events))
    recorder = broadcaster.new_recorder("foo-controller")
    recorder.event(foo, "Normal", "Synced", "Foo synced successfully")   # returns at once
    ...
    broadcaster.shutdown()

Each watcher (a sink writer, a logger) has a bounded queue of ``queue_size`` events and one
thread. :meth:`EventRecorder.event` builds the Event and offers it to every watcher without
waiting: when a watcher's queue is full the event is dropped for it, as client-go's
``ActionOrDrop``. So a slow or unreachable API server can delay and lose events, never a sync.
Every event lost is counted in ``kgen_events_dropped_total{reason}`` (:data:`EVENT_METRICS`,
served by the Manager's registry): ``queue_full``, ``rejected`` (the server refused it),
``retries_exhausted`` and ``shutdown``. A full queue is logged once per broadcaster, with what
to do about it, rather than once per event (client-go logs each, which floods the log exactly
when the API server is slow).

The sink writer runs each event through an :class:`EventCorrelator` (aggregation, repeat
counting, spam filter), then creates the Event or patches the existing one. Errors the server
answers with (``ApiError``: invalid, already exists, namespace terminating, ...) are final;
other errors (connection problems) are retried up to 12 times, 10 s apart (the first wait
randomised), unless the broadcaster is shut down meanwhile.
"""

from __future__ import annotations

import logging
import random
import threading
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from datetime import datetime
from functools import partial
from typing import Any, Literal, Protocol

from prometheus_client import Counter
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

from kgen_runtime.api.core.v1.models import Event, EventSource, ObjectReference
from kgen_runtime.events._correlator import (
    DEFAULT_AGGREGATE_INTERVAL,
    DEFAULT_AGGREGATE_MAX_EVENTS,
    DEFAULT_SPAM_BURST,
    DEFAULT_SPAM_QPS,
    EventCorrelator,
    event_name,
)
from kgen_runtime.meta import KubeObject, ObjectMeta, format_time
from kgen_runtime.rest import PatchBody, PatchType
from kgen_runtime.rest.errors import ApiError, is_not_found
from kgen_runtime.util.clock import REAL_CLOCK, Clock, wall_clock_now
from kgen_runtime.util.runtime import handle_crash

__all__ = [
    "EVENT_METRICS",
    "EVENT_TYPE_NORMAL",
    "EVENT_TYPE_WARNING",
    "ClientEventSink",
    "EventBroadcaster",
    "EventClient",
    "EventMetrics",
    "EventRecorder",
    "EventSink",
    "EventWatcher",
]

EVENT_TYPE_NORMAL = "Normal"
EVENT_TYPE_WARNING = "Warning"
MAX_QUEUED_EVENTS = 1000
MAX_TRIES_PER_EVENT = 12
RETRY_SLEEP = 10.0

_log = logging.getLogger("kgen_runtime.controller.events")

DropReason = Literal["queue_full", "rejected", "retries_exhausted", "shutdown"]


class EventMetrics(Collector):
    """``kgen_events_dropped_total{reason}``: Events recorded but never written, by why.

    client-go only logs these; a counter lets an operator alert on lost Events without
    reading logs. Thread-safe; a collector for any registry.
    """

    def __init__(self) -> None:
        self._dropped = Counter(
            "kgen_events_dropped",
            "Events recorded but not written, by reason: queue_full (the writer fell behind), "
            "rejected (the API server refused the event), retries_exhausted, shutdown.",
            ["reason"], registry=None)

    def dropped(self, reason: DropReason) -> None:
        """One event was lost for ``reason``."""
        self._dropped.labels(reason).inc()

    def describe(self) -> Iterator[Metric]:
        yield from self._dropped.describe()

    def collect(self) -> Iterator[Metric]:
        yield from self._dropped.collect()


EVENT_METRICS = EventMetrics()
"""Where every :class:`EventBroadcaster` counts the events it loses."""


class EventSink(Protocol):
    """Where Events are written (client-go's ``EventSink``)."""

    def create(self, event: Event) -> Event:
        """Create ``event`` in its namespace; return the server's copy."""
        ...

    def patch(self, event: Event, patch: Mapping[str, Any]) -> Event:
        """Merge-patch the existing Event named like ``event``; return the server's copy."""
        ...


class EventClient(Protocol):
    """The verbs :class:`ClientEventSink` uses of a typed core/v1 Event client."""

    def create(self, obj: Event) -> Event: ...

    def patch(self, name: str, patch: PatchBody, *, patch_type: PatchType = "merge") -> Event: ...


class ClientEventSink:
    """An :class:`EventSink` over a core/v1 Event client per namespace, e.g.
    ``ClientEventSink(clientset.core_v1.events)``."""

    def __init__(self, events_for: Callable[[str], EventClient]) -> None:
        self._events_for = events_for

    def create(self, event: Event) -> Event:
        return self._events_for(event.metadata.namespace or "default").create(event)

    def patch(self, event: Event, patch: Mapping[str, Any]) -> Event:
        client = self._events_for(event.metadata.namespace or "default")
        return client.patch(event.metadata.name or "", patch, patch_type="merge")


class EventWatcher:
    """One consumer of the broadcast: a bounded queue drained by its own thread.

    :meth:`stop` unsubscribes it, lets it finish what is queued, then ends the thread.
    """

    def __init__(
        self,
        handler: Callable[[Event], None],
        capacity: int,
        name: str,
        on_stop: Callable[[EventWatcher], None],
    ) -> None:
        self._handler = handler
        self._capacity = capacity
        self._on_stop = on_stop
        self._items: deque[Event] = deque()
        self._cond = threading.Condition(threading.Lock())
        self._stopping = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def offer(self, event: Event) -> bool:
        """Queue ``event`` without blocking; False if the queue is full or stopping."""
        with self._cond:
            if self._stopping or len(self._items) >= self._capacity:
                return False
            self._items.append(event)
            self._cond.notify()
            return True

    def stop(self) -> None:
        """Stop taking events; the thread ends once the queued ones are handled."""
        with self._cond:
            self._stopping = True
            self._cond.notify()
        self._on_stop(self)

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the thread to end; return whether it has."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._items and not self._stopping:
                    self._cond.wait()
                if not self._items:
                    return
                event = self._items.popleft()
            with handle_crash():
                self._handler(event)


class EventBroadcaster:
    """Fans recorded Events out to watchers (client-go's ``EventBroadcaster``).

    Args:
        queue_size: Capacity of each watcher's queue.
        clock: Time source of correlation and of retry waits.
        now: Wall-clock time written on events.
        rand: Source of the randomised first retry wait.
        aggregate_max_events: See :class:`EventCorrelator` (client-go: 10).
        aggregate_interval: See :class:`EventCorrelator` (600 s).
        spam_burst: See :class:`EventCorrelator` (25).
        spam_qps: See :class:`EventCorrelator` (one per 300 s).

    Thread-safe. Watchers may be added at any time; events recorded before a watcher was
    added are not replayed to it.
    """

    def __init__(
        self,
        *,
        queue_size: int = MAX_QUEUED_EVENTS,
        clock: Clock = REAL_CLOCK,
        now: Callable[[], datetime] = wall_clock_now,
        rand: Callable[[], float] = random.random,
        aggregate_max_events: int = DEFAULT_AGGREGATE_MAX_EVENTS,
        aggregate_interval: float = DEFAULT_AGGREGATE_INTERVAL,
        spam_burst: int = DEFAULT_SPAM_BURST,
        spam_qps: float = DEFAULT_SPAM_QPS,
    ) -> None:
        self._queue_size = queue_size
        self._clock = clock
        self._now = now
        self._rand = rand
        self._new_correlator = partial(
            EventCorrelator,
            clock=clock,
            now=now,
            aggregate_max_events=aggregate_max_events,
            aggregate_interval=aggregate_interval,
            spam_burst=spam_burst,
            spam_qps=spam_qps,
        )
        self._lock = threading.Lock()
        self._watchers: list[EventWatcher] = []
        self._stop = threading.Event()
        self._told_queue_full = False

    def new_recorder(self, component: str, host: str = "") -> EventRecorder:
        """A recorder whose events name ``component`` (and ``host``) as their source."""
        return EventRecorder(self, EventSource(component=component, host=host or None), self._now)

    def start_event_watcher(self, handler: Callable[[Event], None]) -> EventWatcher:
        """Call ``handler`` (on a new thread) with every event recorded from now on."""
        with self._lock:
            if self._stop.is_set():
                raise RuntimeError("the event broadcaster is shut down")
            watcher = EventWatcher(
                handler, self._queue_size, f"kgen-events-{len(self._watchers)}", self._remove
            )
            self._watchers.append(watcher)
            return watcher

    def _remove(self, watcher: EventWatcher) -> None:
        with self._lock:
            if watcher in self._watchers:
                self._watchers.remove(watcher)

    def start_recording_to_sink(self, sink: EventSink) -> EventWatcher:
        """Write every event to ``sink`` through a new :class:`EventCorrelator`."""
        correlator = self._new_correlator()
        return self.start_event_watcher(lambda event: self._record_to_sink(sink, correlator, event))

    def start_logging(self, logger: logging.Logger = _log) -> EventWatcher:
        """Log every event at INFO level."""

        def log(event: Event) -> None:
            ref = event.involved_object or ObjectReference()
            logger.info("Event(%s %s/%s): type: %r reason: %r %s", ref.kind, ref.namespace,
                        ref.name, event.type, event.reason, event.message)

        return self.start_event_watcher(log)

    def shutdown(self, timeout: float | None = None) -> bool:
        """Stop taking events, let each watcher finish its queue (one try per event, no retry
        waits), and join them. Returns whether all ended within ``timeout`` (real seconds)."""
        with self._lock:
            self._stop.set()
            watchers = list(self._watchers)
        for watcher in watchers:
            watcher.stop()
        return all([watcher.join(timeout) for watcher in watchers])

    def action_or_drop(self, event: Event) -> None:
        """Offer ``event`` to every watcher without blocking; count what is dropped.

        After :meth:`shutdown` events are dropped (counted as ``shutdown``) without a log.
        """
        with self._lock:
            if self._stop.is_set():
                EVENT_METRICS.dropped("shutdown")
                return
            watchers = list(self._watchers)
        for watcher in watchers:
            if not watcher.offer(event):
                EVENT_METRICS.dropped("queue_full")
                self._tell_queue_full(event)

    def _tell_queue_full(self, event: Event) -> None:
        """Log the first drop for a full queue, with its likely cause; later ones are counted."""
        with self._lock:
            if self._told_queue_full:
                return
            self._told_queue_full = True
        _log.error(
            "unable to record event: too many queued events (%d), dropped event %s/%s reason %r;"
            " events are written more slowly than they are recorded (a slow API server, or a"
            " client-side rate limit: Config.qps). Further drops are counted in"
            ' kgen_events_dropped_total{reason="queue_full"} and not logged.',
            self._queue_size, event.metadata.namespace, event.metadata.name, event.reason)

    def _record_to_sink(self, sink: EventSink, correlator: EventCorrelator, event: Event) -> None:
        """client-go's ``recordToSink``: correlate, then write with bounded retries."""
        result = correlator.correlate(event)
        if result.skip or result.event is None:
            return
        for tries in range(1, MAX_TRIES_PER_EVENT + 1):
            if _record_event(sink, result.event, result.patch, correlator):
                return
            if tries == MAX_TRIES_PER_EVENT:
                EVENT_METRICS.dropped("retries_exhausted")
                _log.error("unable to write event %s (retry limit exceeded)",
                           result.event.metadata.name)
                return
            delay = RETRY_SLEEP * (self._rand() if tries == 1 else 1.0)
            if self._clock.sleep(self._stop, delay):
                EVENT_METRICS.dropped("shutdown")
                _log.error("dropping event %s: shutting down", result.event.metadata.name)
                return


def _record_event(
    sink: EventSink, event: Event, patch: Mapping[str, Any] | None, correlator: EventCorrelator
) -> bool:
    """One write attempt; True when done (written, or refused for good)."""
    try:
        written = _write(sink, event, patch)
    except ApiError as err:
        EVENT_METRICS.dropped("rejected")
        _log.error("server rejected event %s (will not retry): %s", event.metadata.name, err)
        return True
    except Exception as err:
        _log.error("unable to write event %s (may retry): %s", event.metadata.name, err)
        return False
    correlator.update_state(written)
    return True


def _write(sink: EventSink, event: Event, patch: Mapping[str, Any] | None) -> Event:
    """Patch a repeat of an existing Event; create a new one, or one that expired (404)."""
    if patch is not None and (event.count or 0) > 1:
        try:
            return sink.patch(event, patch)
        except Exception as err:
            if not is_not_found(err):
                raise
    return _create(sink, event)


def _create(sink: EventSink, event: Event) -> Event:
    event = event.deepcopy()
    event.metadata.resource_version = None
    return sink.create(event)


class EventRecorder:
    """Records Events about objects (client-go's ``EventRecorder``); made by
    :meth:`EventBroadcaster.new_recorder`.

    Thread-safe and non-blocking (see the module docstring). Events with a type other than
    ``Normal``/``Warning``, or about an object whose kind, name or apiVersion are unknown,
    are logged as errors and dropped.
    """

    def __init__(
        self, broadcaster: EventBroadcaster, source: EventSource, now: Callable[[], datetime]
    ) -> None:
        self._broadcaster = broadcaster
        self._source = source
        self._now = now

    def event(
        self,
        obj: KubeObject | ObjectReference,
        event_type: str,
        reason: str,
        message: str,
        *,
        annotations: Mapping[str, str] | None = None,
    ) -> None:
        """Record an event about ``obj``; returns at once."""
        if event_type not in (EVENT_TYPE_NORMAL, EVENT_TYPE_WARNING):
            _log.error("unsupported event type: %r", event_type)
            return
        ref = obj.deepcopy() if isinstance(obj, ObjectReference) else _reference(obj)
        if not ref.kind or not ref.name or not ref.api_version:
            _log.error("unable to construct a reference to %r: kind, name and apiVersion are "
                       "needed; will not report event %r %r", obj, reason, message)
            return
        self._broadcaster.action_or_drop(self._make_event(ref, event_type, reason, message,
                                                          annotations))

    def eventf(
        self, obj: KubeObject | ObjectReference, event_type: str, reason: str, fmt: str,
        *args: object,
    ) -> None:
        """:meth:`event` with the message ``fmt % args``."""
        self.event(obj, event_type, reason, fmt % args if args else fmt)

    def _make_event(
        self,
        ref: ObjectReference,
        event_type: str,
        reason: str,
        message: str,
        annotations: Mapping[str, str] | None,
    ) -> Event:
        wall = self._now()
        stamp = format_time(wall)
        return Event(
            metadata=ObjectMeta(
                name=event_name(ref.name, wall),
                namespace=ref.namespace or "default",
                annotations=dict(annotations) if annotations else None,
            ),
            involved_object=ref,
            reason=reason,
            message=message,
            first_timestamp=stamp,
            last_timestamp=stamp,
            count=1,
            type=event_type,
            source=self._source.deepcopy(),
            reporting_component=self._source.component or "",
            reporting_instance=self._source.host or "",
        )


def _reference(obj: KubeObject) -> ObjectReference:
    meta = obj.metadata
    return ObjectReference(
        api_version=obj.api_version or None,
        kind=obj.kind or None,
        name=meta.name,
        namespace=meta.namespace,
        uid=meta.uid,
        resource_version=meta.resource_version,
    )

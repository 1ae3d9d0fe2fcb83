"""Events (client-go's ``tools/record``): a recorder that never blocks its caller, the
broadcaster that queues each event per watcher, the correlator that aggregates and
spam-filters before a write, and the sinks that write (blocking or awaited).

::

    broadcaster = EventBroadcaster()
    broadcaster.start_recording_to_sink(ClientEventSink(clientset.core_v1.events))
    recorder = broadcaster.new_recorder("foo-controller")
    recorder.event(foo, "Normal", "Synced", "Foo synced successfully")   # returns at once

A :class:`~kgen_runtime.controller.Manager` owns one broadcaster for its controllers; the
names are also exported from :mod:`kgen_runtime.controller`. This package imports nothing
of the controller kit, so leader election and the manager both build on it.
"""

from kgen_runtime.events._broadcaster import (
    EVENT_METRICS,
    EVENT_TYPE_NORMAL,
    EVENT_TYPE_WARNING,
    ClientEventSink,
    EventBroadcaster,
    EventClient,
    EventMetrics,
    EventRecorder,
    EventSink,
    EventWatcher,
)
from kgen_runtime.events._broadcaster_aio import (
    AsyncClientEventSink,
    AsyncEventClient,
    AsyncEventSink,
    LoopEventSink,
)
from kgen_runtime.events._correlator import CorrelatedEvent, EventCorrelator

__all__ = [
    "EVENT_METRICS",
    "EVENT_TYPE_NORMAL",
    "EVENT_TYPE_WARNING",
    "AsyncClientEventSink",
    "AsyncEventClient",
    "AsyncEventSink",
    "ClientEventSink",
    "CorrelatedEvent",
    "EventBroadcaster",
    "EventClient",
    "EventCorrelator",
    "EventMetrics",
    "EventRecorder",
    "EventSink",
    "EventWatcher",
    "LoopEventSink",
]

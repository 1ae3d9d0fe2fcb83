"""The public surface of kgen_runtime.events is pinned here."""

from __future__ import annotations

from kgen_runtime import events

API = {
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
}


def test_public_names_are_pinned() -> None:
    assert set(events.__all__) == API
    assert len(events.__all__) == len(API)
    assert all(getattr(events, name) is not None for name in API)


def test_machinery_modules_are_private() -> None:
    assert {n for n in vars(events) if not n.startswith("_")} - API == set()

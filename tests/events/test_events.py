"""Events: correlation (aggregation, repeats, spam filter) on a fake clock, writing through the
fake clientset, retries, and proof that recording never blocks."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import pytest

from kgen_runtime.api.core.v1.models import Event, EventSource, ObjectReference
from kgen_runtime.api.fake import FakeClientset
from kgen_runtime.events import (
    EVENT_METRICS,
    ClientEventSink,
    EventBroadcaster,
    EventCorrelator,
    EventRecorder,
)
from kgen_runtime.meta import ObjectMeta
from kgen_runtime.rest.errors import api_error_from_status
from kgen_runtime.util import FakeClock
from tests.controller._support import eventually, obj

POD = obj("web-1", "ns", uid="pod-uid", resource_version="7")
AGGREGATE = "(combined from similar events): "


def wall(clock: FakeClock) -> datetime:
    return datetime.fromtimestamp(1_700_000_000 + clock.now(), UTC)


def event(message: str, reason: str = "Failed", name: str = "web-1") -> Event:
    return Event(
        metadata=ObjectMeta(name=f"{name}.{message}", namespace="ns"),
        involved_object=ObjectReference(kind="Pod", api_version="v1", name=name, namespace="ns",
                                        uid=f"uid-{name}"),
        reason=reason, message=message, type="Warning", count=1,
        source=EventSource(component="ctl"),
    )


class Setup:
    """A broadcaster on a fake clock writing to a fake clientset's core/v1 Events."""

    def __init__(self, **options: Any) -> None:
        self.clock = FakeClock()
        self.fake = FakeClientset()
        self.broadcaster = EventBroadcaster(clock=self.clock, now=lambda: wall(self.clock),
                                            rand=lambda: 0.5, **options)
        self.sink = ClientEventSink(self.fake.core_v1.events)
        self.broadcaster.start_recording_to_sink(self.sink)
        self.recorder = self.broadcaster.new_recorder("foo-controller", "host-a")

    def writes(self) -> list[tuple[str, str]]:
        return [(a.verb, a.name) for a in self.fake.actions() if a.verb in ("create", "patch")]

    def events(self) -> list[Event]:
        return list(self.fake.core_v1.events("ns").list().items)

    def wait_writes(self, n: int) -> None:
        eventually(lambda: len(self.writes()) >= n)

    def close(self) -> None:
        assert self.broadcaster.shutdown(timeout=5)


# -- the recorder ------------------------------------------------------------------------------


def test_recorded_event_is_created_with_client_go_fields() -> None:
    s = Setup()
    s.recorder.event(POD, "Normal", "Synced", "synced fine", annotations={"a": "b"})
    s.wait_writes(1)
    s.close()
    [written] = s.events()
    stamp = wall(s.clock).strftime("%Y-%m-%dT%H:%M:%SZ")
    nanos = int(wall(s.clock).timestamp()) * 10**9
    assert written.metadata.name == f"web-1.{nanos:x}"
    assert written.metadata.namespace == "ns"
    assert written.metadata.annotations == {"a": "b"}
    assert written.involved_object == ObjectReference(
        api_version="v1", kind="Pod", name="web-1", namespace="ns", uid="pod-uid",
        resource_version="7")
    assert (written.type, written.reason, written.message, written.count) == (
        "Normal", "Synced", "synced fine", 1)
    assert (written.first_timestamp, written.last_timestamp) == (stamp, stamp)
    assert written.source == EventSource(component="foo-controller", host="host-a")
    assert (written.reporting_component, written.reporting_instance) == (
        "foo-controller", "host-a")


def test_cluster_scoped_objects_get_events_in_default_and_eventf_formats() -> None:
    s = Setup()
    s.recorder.eventf(obj("node-1", ""), "Warning", "Pressure", "%d%% used on %s", 93, "sda")
    s.wait_writes(1)
    s.close()
    [written] = s.fake.core_v1.events("default").list().items
    assert written.message == "93% used on sda"


def test_invalid_events_are_dropped(caplog: pytest.LogCaptureFixture) -> None:
    s = Setup()
    with caplog.at_level(logging.ERROR):
        s.recorder.event(POD, "Info", "R", "bad type")
        s.recorder.event(obj("x", kind=""), "Normal", "R", "no kind")
    s.close()
    assert s.writes() == []
    messages = " ".join(r.getMessage() for r in caplog.records)
    assert "unsupported event type: 'Info'" in messages
    assert "unable to construct a reference" in messages


def test_an_identical_event_patches_the_count() -> None:
    s = Setup()
    s.recorder.event(POD, "Warning", "BackOff", "restarting")
    s.wait_writes(1)
    s.clock.step(30)
    s.recorder.event(POD, "Warning", "BackOff", "restarting")
    s.wait_writes(2)
    s.close()
    [written] = s.events()
    assert s.writes() == [("create", ""), ("patch", written.metadata.name)]
    assert written.count == 2
    assert written.last_timestamp == wall(s.clock).strftime("%Y-%m-%dT%H:%M:%SZ")
    assert written.first_timestamp != written.last_timestamp


# -- correlation --------------------------------------------------------------------------------


def test_similar_events_are_aggregated_from_the_tenth_message() -> None:
    clock = FakeClock()
    c = EventCorrelator(clock=clock, now=lambda: wall(clock))
    results = [c.correlate(event(f"m{i}")) for i in range(12)]
    assert [r.event.message for r in results if r.event] == [f"m{i}" for i in range(9)] + [
        AGGREGATE + "m9", AGGREGATE + "m10", AGGREGATE + "m11"]
    assert [r.patch is None for r in results] == [True] * 10 + [False, False]
    combined = results[9].event
    assert combined is not None and combined.count == 1
    assert combined.involved_object == event("x").involved_object
    c.update_state(combined)
    assert results[11].patch == {"count": 3, "lastTimestamp": combined.last_timestamp,
                                 "message": AGGREGATE + "m11"}
    other_reason = c.correlate(event("m12", reason="Other")).event
    assert other_reason is not None and other_reason.message == "m12"


def test_aggregation_restarts_after_the_interval() -> None:
    clock = FakeClock()
    c = EventCorrelator(clock=clock, aggregate_max_events=3)
    assert [c.correlate(event(f"m{i}")).event.message for i in range(3)] == [  # type: ignore[union-attr]
        "m0", "m1", AGGREGATE + "m2"]
    clock.step(601)
    assert c.correlate(event("m3")).event.message == "m3"  # type: ignore[union-attr]


def test_correlate_does_not_modify_its_input() -> None:
    c = EventCorrelator()
    e = event("m")
    c.correlate(e)
    result = c.correlate(e)
    assert result.event is not None and result.event.count == 2
    assert e.count == 1


def test_spam_filter_allows_a_burst_per_object_then_one_per_five_minutes() -> None:
    clock = FakeClock()
    c = EventCorrelator(clock=clock, aggregate_max_events=1000)
    passed = [not c.correlate(event(f"m{i}", reason=f"r{i}")).skip for i in range(30)]
    assert passed == [True] * 25 + [False] * 5
    assert not c.correlate(event("x", name="other")).skip  # another object: its own bucket
    clock.step(299)
    assert c.correlate(event("late", reason="late")).skip
    clock.step(1)
    assert not c.correlate(event("later", reason="later")).skip
    assert c.correlate(event("again", reason="again")).skip


def test_spam_filtered_events_are_not_written() -> None:
    s = Setup(spam_burst=2)
    for i in range(5):
        s.recorder.event(POD, "Normal", f"R{i}", "m")
    s.close()
    assert [v for v, _ in s.writes()] == ["create", "create"]


# -- writing and retrying ---------------------------------------------------------------------


class FlakySink:
    """Fails ``failures`` times with ``error``, then records."""

    def __init__(self, error: Exception, failures: int) -> None:
        self.error = error
        self.failures = failures
        self.calls = 0
        self.created: list[Event] = []

    def create(self, event: Event) -> Event:
        self.calls += 1
        if self.calls <= self.failures:
            raise self.error
        self.created.append(event)
        return event

    def patch(self, event: Event, patch: Mapping[str, Any]) -> Event:
        raise AssertionError("not expected")


def test_connection_errors_are_retried_on_the_clock() -> None:
    clock = FakeClock()
    b = EventBroadcaster(clock=clock, rand=lambda: 0.25)
    sink = FlakySink(ConnectionError("refused"), failures=2)
    b.start_recording_to_sink(sink)
    b.new_recorder("c").event(POD, "Normal", "R", "m")
    assert clock.wait_for_sleepers(1)
    clock.step(2.5)  # the first wait is randomised: 0.25 * 10 s
    eventually(lambda: sink.calls == 2)
    assert clock.wait_for_sleepers(1)
    clock.step(10)
    eventually(lambda: len(sink.created) == 1)
    assert b.shutdown(timeout=5)


def test_server_errors_are_not_retried(caplog: pytest.LogCaptureFixture) -> None:
    clock = FakeClock()
    b = EventBroadcaster(clock=clock)
    invalid = api_error_from_status({"code": 422, "reason": "Invalid", "message": "bad"})
    sink = FlakySink(invalid, failures=5)
    b.start_recording_to_sink(sink)
    rejected_before = events_dropped("rejected")
    with caplog.at_level(logging.ERROR):
        b.new_recorder("c").event(POD, "Normal", "R", "m")
        assert b.shutdown(timeout=5)
    assert sink.calls == 1
    assert any("will not retry" in r.getMessage() for r in caplog.records)
    assert events_dropped("rejected") - rejected_before == 1


def test_shutdown_interrupts_retry_waits() -> None:
    clock = FakeClock()
    b = EventBroadcaster(clock=clock)
    sink = FlakySink(ConnectionError("refused"), failures=100)
    b.start_recording_to_sink(sink)
    b.new_recorder("c").event(POD, "Normal", "R", "m")
    assert clock.wait_for_sleepers(1)
    shutdown_before = events_dropped("shutdown")
    assert b.shutdown(timeout=5)  # no clock step needed
    assert sink.calls == 1
    assert events_dropped("shutdown") - shutdown_before == 1
    with pytest.raises(RuntimeError, match="shut down"):
        b.start_logging()


def test_a_patch_of_an_expired_event_creates_it_again() -> None:
    s = Setup()
    s.recorder.event(POD, "Warning", "BackOff", "restarting")
    s.wait_writes(1)
    [first] = s.events()
    s.fake.core_v1.events("ns").delete(first.metadata.name or "")
    s.recorder.event(POD, "Warning", "BackOff", "restarting")
    s.wait_writes(3)
    s.close()
    assert [v for v, _ in s.writes()] == ["create", "patch", "create"]
    [again] = s.events()
    assert again.count == 2 and again.metadata.name == first.metadata.name


def test_logging_watcher(caplog: pytest.LogCaptureFixture) -> None:
    b = EventBroadcaster()
    b.start_logging()
    with caplog.at_level(logging.INFO, logger="kgen_runtime.controller.events"):
        b.new_recorder("c").event(POD, "Normal", "Synced", "all good")
        assert b.shutdown(timeout=5)
    assert any(r.getMessage() == "Event(Pod ns/web-1): type: 'Normal' reason: 'Synced' all good"
               for r in caplog.records)


def test_recording_never_blocks_even_when_the_sink_hangs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    release = threading.Event()
    entered = threading.Event()
    written: list[str] = []

    class HangingSink:
        def create(self, event: Event) -> Event:
            entered.set()
            release.wait(10)
            written.append(event.message or "")
            return event

        def patch(self, event: Event, patch: Mapping[str, Any]) -> Event:
            raise AssertionError("not expected")

    b = EventBroadcaster(queue_size=50, spam_burst=10_000, aggregate_max_events=10_000)
    b.start_recording_to_sink(HangingSink())
    recorder: EventRecorder = b.new_recorder("c")
    recorder.event(POD, "Normal", "R", "first")
    assert entered.wait(5)  # the sink thread is now stuck in create()

    def emit(n: int) -> None:
        for i in range(500):
            recorder.event(POD, "Normal", "R", f"t{n}-{i}")

    emitters = [threading.Thread(target=emit, args=(n,)) for n in range(8)]
    dropped_before = events_dropped("queue_full")
    with caplog.at_level(logging.ERROR):
        for t in emitters:
            t.start()
        for t in emitters:
            t.join(10)  # all 4,000 calls return although nothing was written meanwhile
        assert not any(t.is_alive() for t in emitters)
        assert written == []
    # Every drop is counted; the log says it once, with the cause and where the count is.
    assert events_dropped("queue_full") - dropped_before == 4000 - 50
    drops = [r for r in caplog.records if "too many queued events" in r.getMessage()]
    assert len(drops) == 1
    assert "Config.qps" in drops[0].getMessage()
    assert 'kgen_events_dropped_total{reason="queue_full"}' in drops[0].getMessage()
    release.set()
    assert b.shutdown(timeout=10)
    assert len(written) == 1 + 50


def test_a_stopped_watcher_is_unsubscribed_and_late_events_are_dropped_quietly(
    caplog: pytest.LogCaptureFixture,
) -> None:
    b = EventBroadcaster()
    seen: list[str] = []
    kept: list[str] = []
    watcher = b.start_event_watcher(lambda e: seen.append(e.message or ""))
    b.start_event_watcher(lambda e: kept.append(e.message or ""))
    recorder = b.new_recorder("c")
    recorder.event(POD, "Normal", "R", "one")
    watcher.stop()
    assert watcher.join(5)
    with caplog.at_level(logging.ERROR):
        recorder.event(POD, "Normal", "R", "two")
        assert b.shutdown(timeout=5)
        recorder.event(POD, "Normal", "R", "three")
    assert seen == ["one"] and kept == ["one", "two"]
    assert caplog.records == []


def events_dropped(reason: str) -> float:
    """The process-wide ``kgen_events_dropped_total`` for ``reason``, as a scrape reads it."""
    for metric in EVENT_METRICS.collect():
        for sample in metric.samples:
            if sample.name == "kgen_events_dropped_total" and sample.labels == {"reason": reason}:
                return sample.value
    return 0.0

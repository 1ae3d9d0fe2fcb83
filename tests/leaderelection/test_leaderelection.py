"""Leader election on a Lease in the fake clientset, with a shared fake clock."""

from __future__ import annotations

import threading
from datetime import UTC, datetime

import pytest

from kgen_runtime.api.coordination.v1.models import Lease, LeaseSpec
from kgen_runtime.api.fake import FakeClientset
from kgen_runtime.events import ClientEventSink, EventBroadcaster
from kgen_runtime.leaderelection import LeaderElectionRecord, LeaderElector, LeaseLock
from kgen_runtime.meta import ObjectMeta
from kgen_runtime.testing import Action, StatusError
from kgen_runtime.util import FakeClock
from tests.util._support import eventually

NS = "kube-system"


class Candidate:
    """One elector running in a thread, with its callbacks recorded."""

    def __init__(self, fake: FakeClientset, clock: FakeClock, identity: str,
                 **options: object) -> None:
        self.leading: threading.Event | None = None
        self.started = threading.Event()
        self.stopped = threading.Event()
        self.leaders: list[str] = []
        self.stop = threading.Event()
        lock = LeaseLock(fake.coordination_v1.leases(NS), "ctl", identity)
        self.elector = LeaderElector(
            lock, on_started_leading=self._started, on_stopped_leading=self.stopped.set,
            on_new_leader=self.leaders.append, clock=clock, rand=lambda: 0.0,
            now=lambda: datetime.fromtimestamp(1_700_000_000 + clock.now(), UTC),
            **options,  # type: ignore[arg-type]
        )
        self.thread = threading.Thread(target=self.elector.run, args=(self.stop,), daemon=True)
        self.thread.start()

    def _started(self, leading: threading.Event) -> None:
        self.leading = leading
        self.started.set()

    def halt(self) -> None:
        self.stop.set()
        self.thread.join(5)
        assert not self.thread.is_alive()


class World:
    def __init__(self) -> None:
        self.clock = FakeClock()
        self.fake = FakeClientset()
        self.leases = self.fake.coordination_v1.leases(NS)

    def candidate(self, identity: str, **options: object) -> Candidate:
        return Candidate(self.fake, self.clock, identity, **options)

    def spec(self) -> LeaseSpec:
        spec = self.leases.get("ctl").spec
        assert spec is not None
        return spec

    def gets(self) -> int:
        return sum(1 for a in self.fake.actions() if a.verb == "get")

    def tick(self, seconds: float = 2.0) -> None:
        """Step once every elector sleeps, and wait until one of them read the Lease."""
        before = self.gets()
        assert self.clock.wait_for_sleepers(1)
        self.clock.step(seconds)
        eventually(lambda: self.gets() > before)


def test_a_single_candidate_acquires_renews_and_stops() -> None:
    w = World()
    a = w.candidate("a")
    assert a.started.wait(5)
    spec = w.spec()
    assert (spec.holder_identity, spec.lease_duration_seconds, spec.lease_transitions) == (
        "a", 15, 0)
    assert spec.acquire_time == spec.renew_time == "2023-11-14T22:30:00.000000Z"
    assert a.elector.is_leader() and a.elector.get_leader() == "a"
    assert w.clock.wait_for_sleepers(1)
    w.clock.step(2)
    eventually(lambda: w.spec().renew_time == "2023-11-14T22:30:02.000000Z")
    assert w.spec().acquire_time == "2023-11-14T22:30:00.000000Z"
    assert a.leading is not None and not a.leading.is_set()
    a.halt()
    assert a.leading.is_set() and a.stopped.is_set()
    assert a.leaders == ["a"]
    assert w.spec().holder_identity == "a"  # not released without release_on_cancel


def test_release_on_cancel_hands_over_at_the_next_retry() -> None:
    w = World()
    a = w.candidate("a", release_on_cancel=True)
    assert a.started.wait(5)
    b = w.candidate("b")
    eventually(lambda: b.leaders == ["a"])
    assert not b.started.is_set()
    a.halt()
    released = w.spec()
    assert (released.holder_identity, released.lease_duration_seconds) == (None, 1)
    w.tick()
    assert b.started.wait(5)
    assert (w.spec().holder_identity, w.spec().lease_transitions) == ("b", 1)
    assert b.leaders == ["a", "b"]  # the empty holder is seen and replaced in one try
    b.halt()


def test_an_unrenewed_lease_is_taken_over_only_after_lease_duration() -> None:
    w = World()
    w.leases.create(Lease(metadata=ObjectMeta(name="ctl"), spec=LeaseSpec(
        holder_identity="dead", lease_duration_seconds=15, lease_transitions=4)))
    b = w.candidate("b")
    eventually(lambda: b.leaders == ["dead"])
    for _ in range(7):  # 14 s after b first saw the record: still the dead holder's
        w.tick()
        assert not b.started.is_set()
    w.tick()  # 16 s
    assert b.started.wait(5)
    assert (w.spec().holder_identity, w.spec().lease_transitions) == ("b", 5)
    b.halt()


def test_leadership_is_lost_when_renewal_fails_past_the_deadline() -> None:
    w = World()
    a = w.candidate("a")
    assert a.started.wait(5)
    assert w.clock.wait_for_sleepers(1)  # renewed at t=0, sleeping until t=2
    lease = w.leases.get("ctl")
    assert lease.spec is not None
    lease.spec.holder_identity = "z"  # another process takes the lease over
    w.leases.update(lease)
    for _ in range(6):  # t=2: conflict, then "held by z" on every retry until t=12
        w.tick()
    a.thread.join(5)
    assert not a.thread.is_alive()  # run returned without stop being set
    assert not a.stop.is_set()
    assert a.leading is not None and a.leading.is_set() and a.stopped.is_set()
    assert a.leaders == ["a", "z"]
    assert not a.elector.is_leader()


def test_health_check_fails_for_a_leader_stuck_past_its_lease() -> None:
    w = World()
    a = w.candidate("a")
    assert a.started.wait(5)
    assert w.clock.wait_for_sleepers(1)  # renewed at t=0, sleeping until t=2
    start = w.clock.now()

    def fail_updates(action: Action) -> tuple[bool, object]:
        raise StatusError.internal("etcd is down")

    w.fake.prepend_reactor("update", "leases", fail_updates)
    for _ in range(6):  # renewals at t=2 .. 12 fail; at 12 the deadline has passed
        w.tick()
    a.thread.join(5)
    assert not a.thread.is_alive()
    assert a.stopped.is_set() and a.elector.is_leader()  # it still believes it leads
    assert w.clock.now() - start == 12
    w.clock.step(3)
    assert a.elector.check()  # 15 s since the last renewal: the lease has just run out
    w.clock.step(0.5)
    assert not a.elector.check()
    assert a.elector.check(max_tolerable_expired_lease=1.0)


def test_stopping_a_waiting_candidate_calls_only_on_stopped_leading() -> None:
    w = World()
    a = w.candidate("a")
    assert a.started.wait(5)
    b = w.candidate("b")
    eventually(lambda: b.leaders == ["a"])
    b.halt()
    assert b.stopped.is_set() and not b.started.is_set()
    a.halt()


def test_configuration_is_validated() -> None:
    lock = LeaseLock(FakeClientset().coordination_v1.leases(NS), "ctl", "a")

    def make(lease_duration: float = 15, renew_deadline: float = 10,
             retry_period: float = 2) -> LeaderElector:
        return LeaderElector(lock, on_started_leading=lambda e: None,
                             on_stopped_leading=lambda: None, lease_duration=lease_duration,
                             renew_deadline=renew_deadline, retry_period=retry_period)

    with pytest.raises(ValueError, match="retry_period must be greater than zero"):
        make(retry_period=0)
    with pytest.raises(ValueError, match="renew_deadline must be greater than retry_period"):
        make(renew_deadline=2.4, retry_period=2.0)
    with pytest.raises(ValueError, match="lease_duration must be greater than renew_deadline"):
        make(lease_duration=10.0)
    with pytest.raises(ValueError, match="non-empty identity"):
        LeaseLock(FakeClientset().coordination_v1.leases(NS), "ctl", "")


def test_lease_lock_round_trips_the_record() -> None:
    fake = FakeClientset()
    lock = LeaseLock(fake.coordination_v1.leases(NS), "ctl", "a")
    with pytest.raises(RuntimeError, match="call get or create first"):
        lock.update(LeaderElectionRecord())
    # MicroTime values as the Lease holds them (kube-apiserver refuses anything else).
    t1, t2, t3, t4 = (f"2026-01-01T00:00:0{i}.000000Z" for i in range(1, 5))
    record = LeaderElectionRecord("a", 15, t1, t2, 3)
    lock.create(record)
    assert lock.get() == record
    lock.update(LeaderElectionRecord("b", 10, t3, t4, 4))
    assert lock.get() == LeaderElectionRecord("b", 10, t3, t4, 4)
    assert lock.describe() == "lease ctl"


def test_taking_and_losing_the_lease_are_recorded_as_events() -> None:
    fake = FakeClientset()
    clock = FakeClock()
    broadcaster = EventBroadcaster()
    broadcaster.start_recording_to_sink(ClientEventSink(fake.core_v1.events))
    lock = LeaseLock(fake.coordination_v1.leases(NS), "ctl", "a",
                     event_recorder=broadcaster.new_recorder("ctl"))
    lock.record_event("ignored")  # the Lease was never read: nothing to record against
    stopped = threading.Event()
    elector = LeaderElector(lock, on_started_leading=lambda leading: None,
                            on_stopped_leading=stopped.set, clock=clock)
    thread = threading.Thread(target=elector.run, args=(threading.Event(),), daemon=True)
    thread.start()
    assert clock.wait_for_sleepers(1)  # leading, renewed once, sleeping

    def fail(action: Action) -> tuple[bool, object]:
        raise StatusError.internal("etcd is down")

    fake.prepend_reactor("update", "leases", fail)
    for _ in range(6):
        gets = sum(1 for a in fake.actions() if a.verb == "get")
        assert clock.wait_for_sleepers(1)
        clock.step(2)
        eventually(lambda: sum(1 for a in fake.actions() if a.verb == "get") > gets)  # noqa: B023
    assert stopped.wait(5)
    assert broadcaster.shutdown(timeout=5)
    events = fake.core_v1.events(NS).list().items
    assert sorted((e.reason, e.message) for e in events) == [
        ("LeaderElection", "a became leader"), ("LeaderElection", "a stopped leading")]
    assert {(e.involved_object.kind, e.involved_object.name) for e in events
            if e.involved_object} == {("Lease", "ctl")}

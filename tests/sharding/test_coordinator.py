"""The sans-I/O shard coordinator: unit cases, and a random walk over joins, leaves, crashes
and pauses with in-flight reconciles, against a simulated linearizable Lease store."""

from __future__ import annotations

import bisect
import itertools
import random
from dataclasses import dataclass, field

import pytest

from kgen_runtime.api.coordination.v1.models import Lease
from kgen_runtime.rest.errors import NotFoundError
from kgen_runtime.sharding import (
    HASH_SPACE,
    HELD_ANNOTATION,
    LEAVING_ANNOTATION,
    RING_LABEL,
    DeleteLease,
    HashRange,
    HashRing,
    ShardCoordinator,
    WriteLease,
    merge,
)
from kgen_runtime.sharding._coordinator import ListLeases, format_held, member_round, parse_held

DURATION, PERIOD = 10.0, 2.0
EVERYTHING = (HashRange(0, HASH_SPACE),)


class Store:
    """Leases with resourceVersion preconditions, every call atomic (as the API server)."""

    def __init__(self) -> None:
        self.leases: dict[str, Lease] = {}
        self.version = 0

    def write(self, lease: Lease) -> Lease:
        assert lease.metadata is not None and lease.metadata.name
        name, rv = lease.metadata.name, lease.metadata.resource_version
        current = self.leases.get(name)
        if rv is None and current is not None:
            raise RuntimeError("AlreadyExists")
        if rv is not None and (current is None or current.metadata.resource_version != rv):
            raise RuntimeError("Conflict")
        self.version += 1
        stored = lease.deepcopy()
        stored.metadata.resource_version = str(self.version)
        self.leases[name] = stored
        return stored.deepcopy()

    def delete(self, name: str, rv: str | None) -> None:
        current = self.leases.get(name)
        if current is None:
            return
        if rv is not None and current.metadata.resource_version != rv:
            raise RuntimeError("Conflict")
        del self.leases[name]

    def list(self) -> list[Lease]:
        return [lease.deepcopy() for lease in self.leases.values()]


@dataclass
class Member:
    """One replica: the coordinator and its driver's round (LIST, deliver, write, ack),
    advanced stage by stage so rounds of different members interleave."""

    coordinator: ShardCoordinator
    stage: str = "idle"
    round_start: float = -1e9
    snapshot: tuple[list[Lease], float] | None = None
    outcome: tuple[Lease | None, bool] | None = None  # (lease written, deleted?) or failure
    waited: int = 0
    in_flight: list[tuple[int, int]] = field(default_factory=list)  # (hash, end step)
    paused_until: int = -1
    crashed: bool = False

    @property
    def name(self) -> str:
        return self.coordinator.identity


class World:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.store = Store()
        self.now = 0.0
        self.step = 0
        self.members: list[Member] = []
        self.serial = 0

    def join(self) -> None:
        self.serial += 1
        coordinator = ShardCoordinator("ring", f"m{self.serial}", lease_duration=DURATION,
                                       renew_period=PERIOD)
        self.members.append(Member(coordinator))

    def running(self) -> list[Member]:
        return [m for m in self.members if not m.crashed and m.paused_until < self.step]

    def advance(self, member: Member) -> None:
        """Move ``member``'s round on by one stage (randomly delayed, never by > 2 steps)."""
        if member.stage == "idle" and self.now < member.round_start + PERIOD:
            return
        if member.waited < 2 and self.rng.random() < 0.4:
            member.waited += 1
            return
        member.waited = 0
        c = member.coordinator
        if member.stage == "idle":
            member.round_start = self.now
            if member.snapshot is None:  # else a LIST that overlapped the last write
                member.snapshot = (self.store.list(), self.now)
            member.stage = "listed"
        elif member.stage == "listed":
            assert member.snapshot is not None
            c.observe(member.snapshot[0], member.snapshot[1], self.now)
            member.snapshot = None
            action = c.next_action(self.now)
            if action is None:
                member.stage = "idle"
                return
            if self.rng.random() < 0.3:  # a driver whose next LIST runs alongside this write
                member.snapshot = (self.store.list(), self.now)
            try:
                if isinstance(action, WriteLease):
                    member.outcome = (self.store.write(action.lease), False)
                else:
                    assert isinstance(action, DeleteLease)
                    self.store.delete(action.name, action.resource_version)
                    member.outcome = (None, True)
            except RuntimeError:
                member.outcome = None
            member.stage = "written"
        else:
            if member.outcome is None:
                c.write_failed(self.now)
            elif member.outcome[1]:
                c.deleted()
            else:
                lease = member.outcome[0]
                assert lease is not None
                c.written(lease, self.now)
            member.stage = "idle"

    def reconcile(self, member: Member) -> None:
        c = member.coordinator
        for entry in [e for e in member.in_flight if e[1] <= self.step]:
            member.in_flight.remove(entry)
            c.end(entry[0])
        if self.rng.random() < 0.5:
            digest = self.rng.getrandbits(64)
            if c.begin(digest, self.now):
                # at most 4 steps (< 1.6 s): shorter than PERIOD, the slack begin() leaves
                member.in_flight.append((digest, self.step + self.rng.randint(0, 4)))

    def check(self) -> None:
        """No hash is held, or reconciled, by two members at once; a member reconciles only
        hashes its Lease claims."""
        alive = [m for m in self.members if not m.crashed]
        held = sorted((r, m.name) for m in alive for r in m.coordinator.ranges(self.now))
        for (before, holder), (after, other) in itertools.pairwise(held):
            assert before.end <= after.start, (self.step, holder, other)
        starts = [r.start for r, _ in held]
        for m in alive:
            claims = _claims(self.store, m.name)
            for digest, _ in m.in_flight:
                index = bisect.bisect_right(starts, digest) - 1
                if index >= 0 and digest in held[index][0]:
                    assert held[index][1] == m.name, (self.step, m.name, hex(digest))
                assert any(digest in r for r in claims), (self.step, m.name, hex(digest))

    def fault(self) -> None:
        roll = self.rng.random()
        running = self.running()
        if roll < 0.02 and len([m for m in self.members if not m.crashed]) < 5:
            self.join()
        elif roll < 0.03 and running:
            self.rng.choice(running).coordinator.leave()
        elif roll < 0.04 and running:
            victim = self.rng.choice(running)
            victim.crashed = True  # the process dies with its reconciles; its Lease stays
        elif roll < 0.06 and running:
            victim = self.rng.choice(running)
            # A pause freezes the process between reconciles: one frozen inside a reconcile
            # past its Lease is the limit Leases cannot fence (see the module docstring).
            for digest, _ in victim.in_flight:
                victim.coordinator.end(digest)
            victim.in_flight.clear()
            victim.paused_until = self.step + self.rng.randint(1, 120)

    def tick(self, faults: bool) -> None:
        self.step += 1
        self.now += self.rng.uniform(0.05, 0.4)
        if faults:
            self.fault()
        running = self.running()
        self.rng.shuffle(running)
        for member in running:
            self.advance(member)
            if faults:
                self.reconcile(member)
            self.check()
        self.members = [m for m in self.members if not m.coordinator.left]


def _claims(store: Store, name: str) -> tuple[HashRange, ...]:
    lease = store.leases.get(name)
    if lease is None or lease.metadata is None:
        return ()
    return parse_held((lease.metadata.annotations or {}).get(HELD_ANNOTATION, ""), name)


# Six seeds in the default run; the slow pass (CI's `pytest -m slow`) walks 34 more.
@pytest.mark.parametrize(
    "seed", [*range(6), *(pytest.param(seed, marks=pytest.mark.slow) for seed in range(6, 40))]
)
def test_random_walk_never_double_owns_and_converges(seed: int) -> None:
    world = World(seed)
    for _ in range(3):
        world.join()
    for _ in range(600):
        world.tick(faults=True)
    # Quiescence: the paused resume, reconciles end, no more faults; the ring settles.
    for member in world.members:
        member.paused_until = -1
        for digest, _ in member.in_flight:
            member.coordinator.end(digest)
        member.in_flight.clear()
    world.join()  # so that someone is left even if every other member crashed or left
    for _ in range(400):
        world.tick(faults=False)
    live = world.running()
    ring = HashRing(m.name for m in live)
    for member in live:
        assert member.coordinator.ranges(world.now) == ring.ranges_of(member.name), member.name
    everything = merge(r for m in live for r in m.coordinator.ranges(world.now))
    assert everything == EVERYTHING


def lease_of(name: str, held: str, rv: str = "1", duration: int = 10) -> Lease:
    return Lease.model_validate({
        "metadata": {"name": name, "resourceVersion": rv, "labels": {RING_LABEL: "ring"},
                     "annotations": {HELD_ANNOTATION: held}},
        "spec": {"holderIdentity": name, "leaseDurationSeconds": duration},
    })


def test_a_lone_member_acquires_everything_only_after_write_then_list() -> None:
    c = ShardCoordinator("ring", "a", lease_duration=DURATION, renew_period=PERIOD)
    c.observe([], started=0.0, now=0.0)
    action = c.next_action(0.0)
    assert isinstance(action, WriteLease)
    lease = action.lease
    assert lease.metadata is not None and lease.spec is not None
    assert lease.metadata.name == "a" and lease.metadata.resource_version is None
    assert lease.metadata.labels == {RING_LABEL: "ring"}
    assert lease.metadata.annotations == {
        HELD_ANNOTATION: "0x0000000000000000-0x10000000000000000"}
    assert lease.spec.holder_identity == "a" and lease.spec.lease_duration_seconds == 10
    assert c.next_action(0.1) is None  # one write at a time
    c.written(lease_of("a", format_held(EVERYTHING)), now=0.5)
    assert c.ranges(0.5) == () and not c.begin(7, 0.5)
    c.observe([lease_of("a", format_held(EVERYTHING))], started=0.4, now=0.6)  # began too early
    assert c.ranges(0.6) == ()
    c.observe([lease_of("a", format_held(EVERYTHING))], started=0.5, now=0.7)
    assert c.ranges(0.7) == EVERYTHING and c.begin(7, 0.7)
    # Held until lease_duration after the write *started* (0.0), unless renewed; new
    # reconciles are refused renew_period before that.
    assert c.begin(8, 7.99) and not c.begin(9, 8.0)
    assert c.ranges(9.99) == EVERYTHING and c.ranges(10.0) == ()
    c.end(8)
    c.end(7)
    with pytest.raises(ValueError, match=r"end\(0x7\) without a matching begin"):
        c.end(7)


def test_a_range_moves_only_after_its_holder_released_it() -> None:
    b = ShardCoordinator("ring", "b", lease_duration=DURATION, renew_period=PERIOD)
    a_holds = lease_of("a", format_held(EVERYTHING), rv="1")
    b.observe([a_holds], started=0.0, now=0.0)
    assert b.members(0.0) == {"a", "b"}
    write = b.next_action(0.0)
    assert isinstance(write, WriteLease)
    wanted = HashRing(["a", "b"]).ranges_of("b")
    assert write.lease.metadata.annotations == {HELD_ANNOTATION: format_held(wanted)}
    b.written(lease_of("b", format_held(wanted), rv="2"), now=0.1)
    b.observe([a_holds, lease_of("b", format_held(wanted), rv="2")], started=0.2, now=0.3)
    assert b.ranges(0.3) == ()  # a still claims all of it
    a_released = lease_of("a", format_held(HashRing(["a", "b"]).ranges_of("a")), rv="3")
    b.observe([a_released, lease_of("b", format_held(wanted), rv="2")], started=0.4, now=0.5)
    assert b.ranges(0.5) == wanted


def test_an_unrenewed_lease_is_taken_over_only_after_it_expired_on_the_observers_clock() -> None:
    b = ShardCoordinator("ring", "b", lease_duration=DURATION, renew_period=PERIOD)
    a_holds = lease_of("a", format_held(EVERYTHING), rv="1")
    b.observe([a_holds], started=0.0, now=0.0)
    write = b.next_action(0.0)
    assert isinstance(write, WriteLease)
    b.written(lease_of("b", "", rv="2"), now=0.1)
    b.observe([a_holds], started=9.0, now=9.9)
    assert b.ranges(9.9) == () and b.members(9.9) == {"a", "b"}
    b.observe([a_holds], started=9.95, now=10.0)  # unchanged for 10 s since first seen at 0
    assert b.members(10.0) == {"b"}
    write = b.next_action(10.0)
    assert isinstance(write, WriteLease)
    b.written(lease_of("b", format_held(EVERYTHING), rv="3"), now=10.1)
    b.observe([a_holds, lease_of("b", format_held(EVERYTHING), rv="3")], started=10.2, now=10.3)
    assert b.ranges(10.3) == EVERYTHING


def test_leaving_drains_in_flight_work_then_deletes_the_lease() -> None:
    c = ShardCoordinator("ring", "a", lease_duration=DURATION, renew_period=PERIOD)
    c.observe([], started=0.0, now=0.0)
    assert isinstance(c.next_action(0.0), WriteLease)
    c.written(lease_of("a", format_held(EVERYTHING), rv="5"), now=0.1)
    c.observe([lease_of("a", format_held(EVERYTHING), rv="5")], started=0.2, now=0.2)
    assert c.begin(42, 0.3)
    c.leave()
    assert not c.begin(43, 0.4) and c.ranges(0.4) == () and c.members(0.4) == frozenset()
    write = c.next_action(0.4)  # 42 is in flight: still claimed, and the others are told
    assert isinstance(write, WriteLease) and write.lease.metadata is not None
    assert write.lease.metadata.annotations == {
        HELD_ANNOTATION: format_held(EVERYTHING), LEAVING_ANNOTATION: "true"}
    c.written(lease_of("a", format_held(EVERYTHING), rv="6"), now=0.45)
    assert c.next_action(0.46) is None
    c.end(42)
    assert c.next_action(0.5) == DeleteLease("a", "6")  # deleting the Lease releases it all
    c.deleted()
    assert c.left and c.next_action(0.8) is None


def test_a_failed_write_relearns_the_version_from_the_next_list() -> None:
    c = ShardCoordinator("ring", "a", lease_duration=DURATION, renew_period=PERIOD)
    c.observe([], started=0.0, now=0.0)
    assert isinstance(c.next_action(0.0), WriteLease)
    c.write_failed(0.1)  # AlreadyExists: a previous incarnation's Lease
    assert c.next_action(0.2) is None
    c.observe([lease_of("a", "", rv="9")], started=0.3, now=0.3)
    write = c.next_action(0.3)
    assert isinstance(write, WriteLease) and write.lease.metadata.resource_version == "9"


def test_held_annotation_round_trips_and_bad_values_are_named() -> None:
    ranges = (HashRange(0, 5), HashRange(9, HASH_SPACE))
    assert parse_held(format_held(ranges), "a") == ranges
    with pytest.raises(ValueError, match=f"lease a: annotation {HELD_ANNOTATION}: bad range 'x'"):
        parse_held("x", "a")
    with pytest.raises(ValueError, match=r"lease a: .* bad range '0x5-0x1'"):
        parse_held("0x5-0x1", "a")
    c = ShardCoordinator("ring", "b", lease_duration=DURATION, renew_period=PERIOD)
    c.observe([lease_of("a", "garbage")], started=0.0, now=0.0)  # blocks: claims everything
    assert isinstance(c.next_action(0.0), WriteLease)
    c.written(lease_of("b", "", rv="2"), now=0.1)
    c.observe([lease_of("a", "garbage")], started=0.2, now=0.2)
    assert c.ranges(0.2) == ()
    with pytest.raises(ValueError, match="renew_period"):
        ShardCoordinator("ring", "a", lease_duration=5, renew_period=5)
    with pytest.raises(ValueError, match="non-empty ring name and identity"):
        ShardCoordinator("", "a")


def test_a_driver_round_lists_writes_and_lists_again_and_handles_failures() -> None:
    c = ShardCoordinator("ring", "a", lease_duration=DURATION, renew_period=PERIOD)
    times = iter([0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8])
    calls = member_round(c, lambda: next(times))
    assert next(calls) == ListLeases(f"{RING_LABEL}=ring")
    write = calls.send([])
    assert isinstance(write, WriteLease)
    assert calls.send(lease_of("a", format_held(EVERYTHING), rv="1")) == ListLeases(
        f"{RING_LABEL}=ring")  # listed again at once: the claim is acquired in this round
    with pytest.raises(StopIteration):
        calls.send([lease_of("a", format_held(EVERYTHING), rv="1")])
    assert c.ranges(0.9) == EVERYTHING

    calls = member_round(c, lambda: 3.0)  # a renewal that conflicts: the version is relearnt
    next(calls)
    assert isinstance(calls.send([lease_of("a", format_held(EVERYTHING), rv="1")]), WriteLease)
    with pytest.raises(StopIteration):
        calls.throw(RuntimeError("Conflict"))
    assert c.next_action(3.1) is None

    calls = member_round(c, lambda: 3.2)  # a LIST that fails ends the round
    next(calls)
    with pytest.raises(StopIteration):
        calls.throw(ConnectionError("refused"))

    c.leave()
    calls = member_round(c, lambda: 3.3)  # the Lease is already gone: the member has left
    next(calls)
    assert calls.send([lease_of("a", format_held(EVERYTHING), rv="2")]) == DeleteLease("a", "2")
    with pytest.raises(StopIteration):
        calls.throw(NotFoundError({"code": 404, "reason": "NotFound", "message": "gone"}))
    assert c.left

"""Three ShardMembers in one process against the test API server, on a shared fake clock: they
split the ring; one whose API calls fail keeps its ranges until its hold lapses and loses them
to the others only after its Lease expired; one that leaves hands over at once; and no two
members hold a hash at any instant a watcher thread observes."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Iterator

import pytest

from kgen_runtime.api.clientset import Clientset
from kgen_runtime.api.coordination.v1.models import Lease, LeaseList
from kgen_runtime.rest import ListOptions, Preconditions
from kgen_runtime.sharding import (
    HASH_SPACE,
    HELD_ANNOTATION,
    RING_LABEL,
    HashRange,
    HashRing,
    ShardLeaseClient,
    ShardMember,
)
from kgen_runtime.sharding._coordinator import parse_held
from kgen_runtime.testing import TestAPIServer
from kgen_runtime.util import FakeClock
from tests.util._support import eventually

NS = "kube-system"
DURATION, PERIOD = 10.0, 2.0
EVERYTHING = (HashRange(0, HASH_SPACE),)


class Counted:
    """A Lease client that counts LISTs (a member's rounds) and can be cut off."""

    def __init__(self, client: ShardLeaseClient) -> None:
        self.client = client
        self.lists = 0
        self.broken = False

    def _check(self) -> None:
        if self.broken:
            raise ConnectionError("cut off from the API server")

    def list(self, options: ListOptions | None = None) -> LeaseList:
        self._check()
        result = self.client.list(options)
        self.lists += 1
        return result

    def create(self, obj: Lease) -> Lease:
        self._check()
        return self.client.create(obj)

    def update(self, obj: Lease) -> Lease:
        self._check()
        return self.client.update(obj)

    def delete(self, name: str, *, preconditions: Preconditions | None = None) -> None:
        self._check()
        self.client.delete(name, preconditions=preconditions)


class Watcher:
    """Samples every member's ranges in a loop; records any instant two overlap."""

    def __init__(self, members: list[ShardMember]) -> None:
        self.members = members
        self.overlaps: list[str] = []
        self.samples = 0
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while not self.done.is_set():
            held = sorted((r, m.coordinator.identity) for m in self.members for r in m.ranges())
            for (before, a), (after, b) in itertools.pairwise(held):
                if before.end > after.start:
                    self.overlaps.append(f"{a} and {b} both hold {after}")
            self.samples += 1
            self.done.wait(0.001)  # pace the sampling; leaves the GIL to the members

    def stop(self) -> None:
        self.done.set()
        self.thread.join(5)


@pytest.fixture
def clientset() -> Iterator[Clientset]:
    with TestAPIServer() as server, Clientset.for_config(server.config()) as clients:
        yield clients


def test_members_split_the_ring_fence_an_expired_member_and_hand_over_on_leave(
    clientset: Clientset,
) -> None:
    clock = FakeClock()
    leases = clientset.coordination_v1.leases(NS)
    clients = {name: Counted(leases) for name in ("a", "b", "c")}
    changes: dict[str, list[tuple[HashRange, ...]]] = {name: [] for name in clients}
    members = {
        name: ShardMember(client, "ring", name, lease_duration=DURATION, renew_period=PERIOD,
                          clock=clock, on_ranges_changed=changes[name].append)
        for name, client in clients.items()
    }
    running = dict(members)  # the members whose rounds a tick waits for
    threads = len(members)  # the member threads alive (each sleeps on the clock between rounds)
    for member in members.values():
        member.start()
    watcher = Watcher(list(members.values()))

    def tick() -> None:
        nonlocal threads
        """Move the clock one period once every running member sleeps; wait for a round each."""
        assert clock.wait_for_sleepers(threads)
        before = {name: clients[name].lists for name in running}
        clock.step(PERIOD)
        for name in running:
            eventually(lambda name=name: clients[name].lists > before[name])  # type: ignore[misc]
        assert clock.wait_for_sleepers(threads)

    def ranges() -> dict[str, tuple[HashRange, ...]]:
        return {name: member.ranges() for name, member in members.items()}

    try:
        three = HashRing(["a", "b", "c"])
        for _ in range(5):
            tick()
        assert ranges() == {name: three.ranges_of(name) for name in members}
        stored = {lease.metadata.name: lease for lease in leases.list().items}
        assert set(stored) == {"a", "b", "c"}
        assert stored["a"].metadata.labels == {RING_LABEL: "ring"}
        spec = stored["a"].spec
        assert spec is not None and spec.holder_identity == "a"
        assert spec.lease_duration_seconds == DURATION
        assert parse_held((stored["a"].metadata.annotations or {})[HELD_ANNOTATION], "a") == (
            three.ranges_of("a"))
        assert changes["a"][-1] == three.ranges_of("a")

        # c is cut off: it renews no more. Its ranges stay with it until its hold lapses and
        # go to a and b only once they count its Lease expired (10 s unchanged).
        clients["c"].broken = True
        cut_at = clock.now()
        del running["c"]  # its rounds still run, but fail: do not wait for its LISTs
        two = HashRing(["a", "b"])
        while clock.now() < cut_at + DURATION - 2 * PERIOD:
            tick()
            assert ranges()["a"] == three.ranges_of("a") and ranges()["b"] == three.ranges_of("b")
        for _ in range(4):
            tick()
        assert ranges() == {"a": two.ranges_of("a"), "b": two.ranges_of("b"), "c": ()}
        assert changes["c"][-1] == ()

        # b leaves: its Lease is deleted at once and a takes everything in its next round,
        # long before b's Lease could have expired.
        members["b"].stop(timeout=5)
        assert "b" not in {lease.metadata.name for lease in leases.list().items}
        del running["b"]
        threads -= 1
        tick()
        assert ranges() == {"a": EVERYTHING, "b": (), "c": ()}
    finally:
        watcher.stop()
        clients["c"].broken = False  # so that c's leave can delete its Lease
        for member in members.values():
            member.stop(timeout=5)
    assert leases.list().items == []
    assert watcher.samples > 0 and watcher.overlaps == []

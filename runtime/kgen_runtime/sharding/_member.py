"""A ring member on a thread: runs a :class:`~kgen_runtime.sharding.ShardCoordinator` against
the API server's Leases (the blocking twin of :class:`~kgen_runtime.sharding.AsyncShardMember`).

Every ``renew_period`` it makes a round (:mod:`._rounds`: LIST the ring's Leases, write its
own), as :class:`~kgen_runtime.controller.LeaderElector` does with its Lease; when stopped it
hands its ranges over and deletes its Lease::

    member = ShardMember(clientset.coordination_v1.leases("my-ns"), "foo-controller", pod_name,
                         on_ranges_changed=informer.set_ranges)
    member.start()
    ...
    if member.begin(digest):        # in a worker, around each reconcile
        try: reconcile(...)
        finally: member.end(digest)
    member.stop()                   # releases every range, deletes the Lease
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import datetime

from kgen_runtime.sharding._coordinator import utc_now
from kgen_runtime.sharding._member_core import RangesCallback
from kgen_runtime.sharding._rounds import MemberRounds, ShardLeaseClient
from kgen_runtime.util.clock import REAL_CLOCK, Clock

__all__ = ["ShardMember"]


class ShardMember(MemberRounds):
    """One member of the ring ``ring`` (see the module docstring).

    Args:
        client: Leases of the namespace the ring lives in.
        ring: The ring's name (the label value of its Leases).
        identity: This member's name (its Lease's name), unique in the ring.
        on_ranges_changed: Called on the member's thread with the ranges held, each time
            they change; must not block for long.
        lease_duration: Seconds a Lease lasts without renewal.
        renew_period: Seconds between rounds (LIST and renewal).
        clock: Monotonic time of rounds and of the holds.
        wall_now: Wall-clock time written into the Lease.

    :meth:`ranges`, :meth:`begin` and :meth:`end` are thread-safe.
    """

    def __init__(
        self,
        client: ShardLeaseClient,
        ring: str,
        identity: str,
        *,
        on_ranges_changed: RangesCallback | None = None,
        lease_duration: float = 15.0,
        renew_period: float = 5.0,
        clock: Clock = REAL_CLOCK,
        wall_now: Callable[[], datetime] = utc_now,
    ) -> None:
        super().__init__(client, ring, identity, clock, on_ranges_changed, lease_duration,
                         renew_period, wall_now)
        self._stop = threading.Event()
        self._ended = threading.Event()  # a reconcile ended: draining may release a range
        self._thread: threading.Thread | None = None

    def end(self, digest: int) -> None:
        """A reconcile :meth:`begin` accepted has ended."""
        self.coordinator.end(digest)
        self._ended.set()

    def run(self, stop: threading.Event) -> None:
        """Take part in the ring until ``stop`` is set, then leave it: release every range
        once its reconciles end (waiting at most ``lease_duration``) and delete the Lease."""
        coordinator = self.coordinator
        while True:
            self._round()
            if self._clock.sleep(stop, coordinator.renew_period):
                break
        coordinator.leave()
        self._report()
        # Past lease_duration the hold has lapsed, so the Lease is deleted regardless.
        deadline = self._clock.now() + coordinator.lease_duration + coordinator.renew_period
        while not coordinator.left and self._clock.now() < deadline:
            self._ended.clear()
            self._round()
            if not coordinator.left:  # woken by end(), or renew and retry after a period
                self._clock.sleep(self._ended, coordinator.renew_period)

    def start(self) -> None:
        """Run :meth:`run` on a daemon thread until :meth:`stop`."""
        self._thread = threading.Thread(target=self.run, args=(self._stop,),
                                        name=f"shard-{self.coordinator.identity}", daemon=True)
        self._thread.start()

    def stop(self, timeout: float | None = None) -> None:
        """Leave the ring and wait (at most ``timeout``) for the thread :meth:`start` began."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)

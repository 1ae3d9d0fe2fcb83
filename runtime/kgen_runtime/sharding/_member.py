"""A ring member on a thread: runs a :class:`~kgen_runtime.sharding.ShardCoordinator` against
the API server's Leases (the blocking twin of :class:`~kgen_runtime.sharding.AsyncShardMember`).

Every ``renew_period`` it LISTs the ring's Leases (by the ring's label), feeds them to the
coordinator and writes its own Lease as asked (create, or update with its
``resourceVersion``), as :class:`~kgen_runtime.controller.LeaderElector` does with its Lease;
when stopped it hands its ranges over and deletes its Lease::

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

import logging
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Protocol

from kgen_runtime.api.coordination.v1.models import Lease, LeaseList
from kgen_runtime.rest import ListOptions, Preconditions
from kgen_runtime.sharding._coordinator import (
    DeleteLease,
    ListLeases,
    Round,
    ShardCall,
    ShardCoordinator,
    member_round,
    utc_now,
)
from kgen_runtime.shardranges import HashRange
from kgen_runtime.util.clock import REAL_CLOCK, Clock
from kgen_runtime.util.runtime import handle_crash

__all__ = ["MemberBase", "RangesCallback", "ShardLeaseClient", "ShardMember"]

_log = logging.getLogger("kgen_runtime.sharding")

RangesCallback = Callable[[tuple[HashRange, ...]], None]
"""Called with the ranges a member holds whenever they change."""


class ShardLeaseClient(Protocol):
    """The verbs :class:`ShardMember` uses of a typed Lease client of one namespace."""

    def list(self, options: ListOptions | None = None) -> LeaseList: ...

    def create(self, obj: Lease) -> Lease: ...

    def update(self, obj: Lease) -> Lease: ...

    def delete(self, name: str, *, preconditions: Preconditions | None = None) -> None: ...


class MemberBase:
    """What the thread and the asyncio member share: the coordinator, the holds read on the
    driver's clock, and reporting their changes."""

    def __init__(
        self,
        ring: str,
        identity: str,
        now: Callable[[], float],
        on_ranges_changed: RangesCallback | None,
        lease_duration: float,
        renew_period: float,
        wall_now: Callable[[], datetime],
    ) -> None:
        self.coordinator = ShardCoordinator(ring, identity, lease_duration=lease_duration,
                                            renew_period=renew_period, wall_now=wall_now)
        self.on_ranges_changed = on_ranges_changed
        self._now = now
        self._reported: tuple[HashRange, ...] = ()

    def ranges(self) -> tuple[HashRange, ...]:
        """The ranges held now."""
        return self.coordinator.ranges(self._now())

    def begin(self, digest: int) -> bool:
        """Whether a reconcile over ``digest`` may start now; if so, call ``end`` after."""
        return self.coordinator.begin(digest, self._now())

    def _report(self) -> None:
        held = self.ranges()
        if held == self._reported:
            return
        self._reported = held
        _log.info("%s/%s: holds %d ranges", self.coordinator.ring, self.coordinator.identity,
                  len(held))
        if self.on_ranges_changed is not None:
            with handle_crash():
                self.on_ranges_changed(held)


class ShardMember(MemberBase):
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
        super().__init__(ring, identity, clock.now, on_ranges_changed, lease_duration,
                         renew_period, wall_now)
        self.client = client
        self._clock = clock
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

    def _round(self) -> None:
        self._perform(member_round(self.coordinator, self._clock.now))
        self._report()

    def _perform(self, calls: Round) -> None:
        """Make the API calls of ``calls``, sending back each result or throwing in its error."""
        try:
            call = next(calls)
            while True:
                try:
                    result = self._call(call)
                except Exception as err:
                    call = calls.throw(err)
                else:
                    call = calls.send(result)
        except StopIteration:
            return

    def _call(self, call: ShardCall) -> object:
        if isinstance(call, ListLeases):
            return self.client.list(ListOptions(label_selector=call.label_selector)).items
        if isinstance(call, DeleteLease):
            precondition = Preconditions(resource_version=call.resource_version)
            self.client.delete(call.name, preconditions=precondition)
            return None
        if call.lease.metadata is not None and call.lease.metadata.resource_version:
            return self.client.update(call.lease)
        return self.client.create(call.lease)

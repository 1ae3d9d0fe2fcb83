"""Leader election on a coordination.k8s.io/v1 Lease (client-go's ``tools/leaderelection``).

Of the candidates sharing a Lease, one — the leader — holds it and renews it every
``retry_period``; the others retry to take it every ``retry_period`` (jittered) and succeed
once the holder has not renewed for ``lease_duration``, measured on their own clock from
when *they* last saw the record change (so clocks need not agree across machines)::

    elector = LeaderElector(
        LeaseLock(clientset.coordination_v1.leases("kube-system"), "foo-controller", identity),
        on_started_leading=lambda leading: controller.run(2, leading),
        on_stopped_leading=lambda: os._exit(1),   # never keep running after losing the lease
    )
    elector.run(stop)        # blocks until stop is set or leadership is lost

Guarantees and limits, as in client-go:

* ``on_started_leading(leading)`` runs on a new thread once the lease is acquired; ``leading``
  is set when leadership ends (lost, or ``stop``). ``on_stopped_leading()`` runs when
  :meth:`LeaderElector.run` returns, even if leadership was never acquired.
* A leader that cannot renew within ``renew_deadline`` gives up. Because the others wait
  ``lease_duration`` (> ``renew_deadline``), there is normally one leader at a time, but this
  is not fencing: a paused process can believe it leads after its lease expired. Work must
  stay safe under brief overlap (optimistic concurrency on every write).
* With ``release_on_cancel`` a leader stopped through ``stop`` clears the holder, so another
  candidate takes over without waiting for the lease to expire.
"""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Callable
from datetime import datetime
from typing import Protocol

from kgen_runtime.api.coordination.v1.models import Lease
from kgen_runtime.events import EventRecorder
from kgen_runtime.leaderelection._core import (
    JITTER_FACTOR,
    Attempt,
    ElectionState,
    LeaderElectionRecord,
    LeaseLockBase,
    call_record,
    check_durations,
)
from kgen_runtime.util.clock import REAL_CLOCK, Clock, wall_clock_now
from kgen_runtime.util.runtime import handle_crash
from kgen_runtime.util.wait import jitter

__all__ = ["LeaderElector", "LeaseClient", "LeaseLock"]

_log = logging.getLogger("kgen_runtime.controller.leaderelection")


class LeaseClient(Protocol):
    """The verbs :class:`LeaseLock` uses of a typed Lease client of one namespace."""

    def get(self, name: str) -> Lease: ...

    def create(self, obj: Lease) -> Lease: ...

    def update(self, obj: Lease) -> Lease: ...


class LeaseLock(LeaseLockBase):
    """A resource lock on one Lease (client-go's ``LeaseLock``).

    :meth:`update` writes over the Lease last read or created, with its ``resourceVersion``,
    so a concurrent change makes it fail with a conflict. With an ``event_recorder``, taking
    and losing the lease are recorded as Events on it. Used by one elector thread.
    """

    def __init__(
        self,
        client: LeaseClient,
        name: str,
        identity: str,
        *,
        event_recorder: EventRecorder | None = None,
    ) -> None:
        super().__init__(name, identity, event_recorder=event_recorder)
        self.client = client

    def get(self) -> LeaderElectionRecord:
        """Read the Lease; raises ``NotFoundError`` if it does not exist."""
        return self._read(self.client.get(self.name))

    def create(self, record: LeaderElectionRecord) -> None:
        """Create the Lease holding ``record``."""
        self._lease = self.client.create(self._new_lease(record))

    def update(self, record: LeaderElectionRecord) -> None:
        """Replace the Lease's spec with ``record``.

        Raises:
            RuntimeError: neither :meth:`get` nor :meth:`create` succeeded before.
        """
        self._lease = self.client.update(self._updated_lease(record))


class LeaderElector:
    """Runs one candidate of a leader election (see the module docstring).

    Args:
        lock: The Lease this candidate competes for.
        on_started_leading: Called on a new thread with an event set when leadership ends.
        on_stopped_leading: Called when :meth:`run` returns.
        on_new_leader: Called on the elector's thread with each newly observed holder
            (this candidate included); must not block.
        lease_duration: Seconds a holder's lease lasts without renewal (client-go: 15).
        renew_deadline: Seconds a leader keeps retrying to renew before giving up (10).
        retry_period: Seconds between tries (2).
        release_on_cancel: Clear the holder when stopped through ``stop``.
        name: Names the election in logs and health errors.
        clock: Monotonic time of all waits and of the lease validity.
        now: Wall-clock time written into the Lease.
        rand: Source of the retry jitter.

    Raises:
        ValueError: the durations do not satisfy lease_duration > renew_deadline >
            JITTER_FACTOR * retry_period > 0.

    :meth:`is_leader`, :meth:`get_leader` and :meth:`check` are thread-safe.
    """

    def __init__(
        self,
        lock: LeaseLock,
        *,
        on_started_leading: Callable[[threading.Event], None],
        on_stopped_leading: Callable[[], None],
        on_new_leader: Callable[[str], None] | None = None,
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        release_on_cancel: bool = False,
        name: str = "",
        clock: Clock = REAL_CLOCK,
        now: Callable[[], datetime] = wall_clock_now,
        rand: Callable[[], float] = random.random,
    ) -> None:
        check_durations(lease_duration, renew_deadline, retry_period)
        self.lock = lock
        self.on_started_leading = on_started_leading
        self.on_stopped_leading = on_stopped_leading
        self.on_new_leader = on_new_leader
        self.lease_duration = lease_duration
        self.renew_deadline = renew_deadline
        self.retry_period = retry_period
        self.release_on_cancel = release_on_cancel
        self.name = name or lock.describe()
        self._clock = clock
        self._now = now
        self._rand = rand
        self._state = ElectionState(lock.identity, lease_duration, clock.now, now)

    def run(self, stop: threading.Event) -> None:
        """Acquire the lease, lead until ``stop`` or until renewal fails, then return.

        Blocks. ``on_stopped_leading`` is always called on the way out.
        """
        leading = threading.Event()
        try:
            if not self._acquire(stop):
                return
            _log.info("%s: %s became leader", self.name, self.lock.identity)
            self.lock.record_event("became leader")
            threading.Thread(
                target=self._lead, args=(leading,), name=f"{self.name}-leading", daemon=True
            ).start()
            self._renew(stop)
            _log.info("%s: %s stopped leading", self.name, self.lock.identity)
            if self.release_on_cancel:
                self._release()
        finally:
            leading.set()
            with handle_crash():
                self.on_stopped_leading()

    def is_leader(self) -> bool:
        """Whether the last observed record names this candidate."""
        return self._state.is_leader()

    def get_leader(self) -> str:
        """The holder in the last observed record (``""`` if none)."""
        return self._state.leader()

    def check(self, max_tolerable_expired_lease: float = 0.0) -> bool:
        """A health check (client-go's ``HealthzAdaptor``): false only for a leader whose
        lease expired more than ``max_tolerable_expired_lease`` seconds ago."""
        return self._state.healthy(max_tolerable_expired_lease)

    # -- the loops ----------------------------------------------------------------------------

    def _lead(self, leading: threading.Event) -> None:
        with handle_crash():
            self.on_started_leading(leading)

    def _acquire(self, stop: threading.Event) -> bool:
        """Try every jittered ``retry_period`` until acquired (True) or ``stop`` (False)."""
        _log.info("%s: attempting to acquire leader lease", self.name)
        while not stop.is_set():
            acquired = self._try_acquire_or_renew()
            self._maybe_report_transition()
            if acquired:
                return True
            delay = jitter(self.retry_period, JITTER_FACTOR, self._rand)
            if self._clock.sleep(stop, delay):
                break
        return False

    def _renew(self, stop: threading.Event) -> None:
        """Renew every ``retry_period`` until a renewal fails for ``renew_deadline``, or stop."""
        while not stop.is_set():
            renewed = self._renew_within_deadline(stop)
            self._maybe_report_transition()
            if not renewed:
                _log.info("%s: failed to renew lease within %ss", self.name, self.renew_deadline)
                self.lock.record_event("stopped leading")
                return
            if self._clock.sleep(stop, self.retry_period):
                return

    def _renew_within_deadline(self, stop: threading.Event) -> bool:
        deadline = self._clock.now() + self.renew_deadline
        while True:
            if self._try_acquire_or_renew():
                return True
            remaining = deadline - self._clock.now()
            if remaining <= 0 or self._clock.sleep(stop, min(self.retry_period, remaining)):
                return False

    # -- one attempt --------------------------------------------------------------------------

    def _try_acquire_or_renew(self) -> bool:
        return self._perform(self._state.try_acquire_or_renew(self.name, self.lock.describe()))

    def _release(self) -> None:
        self._perform(self._state.try_release(self.name))

    def _perform(self, attempt: Attempt) -> bool:
        """Make the lock calls of ``attempt`` (see :class:`ElectionState`); its outcome."""
        try:
            call = next(attempt)
            while True:
                try:
                    result: LeaderElectionRecord | None = None
                    if call.verb == "get":
                        result = self.lock.get()
                    elif call.verb == "create":
                        self.lock.create(call_record(call))
                    else:
                        self.lock.update(call_record(call))
                except Exception as err:
                    call = attempt.throw(err)
                else:
                    call = attempt.send(result)
        except StopIteration as done:
            return bool(done.value)

    def _maybe_report_transition(self) -> None:
        holder = self._state.new_leader()
        if holder is None:
            return
        _log.info("%s: new leader elected: %r", self.name, holder)
        if self.on_new_leader is not None:
            with handle_crash():
                self.on_new_leader(holder)

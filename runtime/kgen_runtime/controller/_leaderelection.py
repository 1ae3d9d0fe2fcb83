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
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Protocol

from kgen_runtime.api.coordination.v1.models import Lease, LeaseSpec
from kgen_runtime.controller._correlator import wall_clock_now
from kgen_runtime.controller._events import EventRecorder
from kgen_runtime.meta import ObjectMeta, format_micro_time
from kgen_runtime.rest.errors import is_not_found
from kgen_runtime.util.clock import REAL_CLOCK, Clock
from kgen_runtime.util.runtime import handle_crash
from kgen_runtime.util.wait import jitter

__all__ = ["JITTER_FACTOR", "LeaderElectionRecord", "LeaderElector", "LeaseClient", "LeaseLock"]

JITTER_FACTOR = 1.2
"""client-go's ``JitterFactor``: candidates wait ``retry_period`` * [1, 2.2) between tries."""

_log = logging.getLogger("kgen_runtime.controller.leaderelection")


@dataclass(frozen=True, slots=True)
class LeaderElectionRecord:
    """The election state a Lease's spec carries (client-go's ``LeaderElectionRecord``)."""

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: str | None = None
    renew_time: str | None = None
    leader_transitions: int = 0


class LeaseClient(Protocol):
    """The verbs :class:`LeaseLock` uses of a typed Lease client of one namespace."""

    def get(self, name: str) -> Lease: ...

    def create(self, obj: Lease) -> Lease: ...

    def update(self, obj: Lease) -> Lease: ...


class LeaseLock:
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
        if not identity:
            raise ValueError("leader election requires a non-empty identity")
        self.client = client
        self.name = name
        self.identity = identity
        self.event_recorder = event_recorder
        self._lease: Lease | None = None

    def get(self) -> LeaderElectionRecord:
        """Read the Lease; raises ``NotFoundError`` if it does not exist."""
        self._lease = self.client.get(self.name)
        return _record_of(self._lease.spec or LeaseSpec())

    def create(self, record: LeaderElectionRecord) -> None:
        """Create the Lease holding ``record``."""
        lease = Lease(metadata=ObjectMeta(name=self.name), spec=_spec_of(record))
        self._lease = self.client.create(lease)

    def update(self, record: LeaderElectionRecord) -> None:
        """Replace the Lease's spec with ``record``.

        Raises:
            RuntimeError: neither :meth:`get` nor :meth:`create` succeeded before.
        """
        if self._lease is None:
            raise RuntimeError("lease not initialized, call get or create first")
        lease = self._lease.deepcopy()
        lease.spec = _spec_of(record)
        self._lease = self.client.update(lease)

    def describe(self) -> str:
        return f"lease {self.name}"

    def record_event(self, message: str) -> None:
        """Record a ``LeaderElection`` Event about the Lease (``"<identity> <message>"``),
        if there is a recorder and the Lease has been read."""
        if self.event_recorder is not None and self._lease is not None:
            self.event_recorder.event(self._lease, "Normal", "LeaderElection",
                                      f"{self.identity} {message}")


def _record_of(spec: LeaseSpec) -> LeaderElectionRecord:
    return LeaderElectionRecord(
        holder_identity=spec.holder_identity or "",
        lease_duration_seconds=spec.lease_duration_seconds or 0,
        acquire_time=spec.acquire_time,
        renew_time=spec.renew_time,
        leader_transitions=spec.lease_transitions or 0,
    )


def _spec_of(record: LeaderElectionRecord) -> LeaseSpec:
    return LeaseSpec(
        holder_identity=record.holder_identity or None,
        lease_duration_seconds=record.lease_duration_seconds,
        acquire_time=record.acquire_time,
        renew_time=record.renew_time,
        lease_transitions=record.leader_transitions,
    )


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
        if retry_period <= 0:
            raise ValueError("retry_period must be greater than zero")
        if renew_deadline <= JITTER_FACTOR * retry_period:
            raise ValueError(f"renew_deadline must be greater than retry_period*{JITTER_FACTOR}")
        if lease_duration <= renew_deadline:
            raise ValueError("lease_duration must be greater than renew_deadline")
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
        self._state = threading.Lock()
        self._observed = LeaderElectionRecord()
        self._observed_time = float("-inf")
        self._reported_leader = ""

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
        with self._state:
            return self._observed.holder_identity == self.lock.identity

    def get_leader(self) -> str:
        """The holder in the last observed record (``""`` if none)."""
        with self._state:
            return self._observed.holder_identity

    def check(self, max_tolerable_expired_lease: float = 0.0) -> bool:
        """A health check (client-go's ``HealthzAdaptor``): false only for a leader whose
        lease expired more than ``max_tolerable_expired_lease`` seconds ago."""
        with self._state:
            leader = self._observed.holder_identity == self.lock.identity
            observed = self._observed_time
        if not leader:
            return True
        return self._clock.now() - observed <= self.lease_duration + max_tolerable_expired_lease

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
        """client-go's ``tryAcquireOrRenew``: one read and at most one write of the Lease."""
        stamp = format_micro_time(self._now())
        record = LeaderElectionRecord(
            holder_identity=self.lock.identity,
            lease_duration_seconds=int(self.lease_duration),
            acquire_time=stamp,
            renew_time=stamp,
        )
        with self._state:
            observed = self._observed
            leading_validly = self._is_leader_locked() and self._lease_valid_locked()
        if leading_validly:  # fast path: renew over the Lease as last seen
            renewal = replace(record, acquire_time=observed.acquire_time,
                              leader_transitions=observed.leader_transitions)
            try:
                self.lock.update(renewal)
            except Exception as err:
                _log.error("%s: failed to update lock optimistically: %s, falling back to "
                           "slow path", self.name, err)
            else:
                self._set_observed(renewal)
                return True
        try:
            current = self.lock.get()
        except Exception as err:
            if not is_not_found(err):
                _log.error("%s: error retrieving %s: %s", self.name, self.lock.describe(), err)
                return False
            try:
                self.lock.create(record)
            except Exception as create_err:
                _log.error("%s: error initially creating leader election record: %s",
                           self.name, create_err)
                return False
            self._set_observed(record)
            return True
        with self._state:
            if current != self._observed:
                self._observed = current
                self._observed_time = self._clock.now()
            held_by_other = (bool(current.holder_identity) and self._lease_valid_locked()
                             and not self._is_leader_locked())
            leader = self._is_leader_locked()
        if held_by_other:
            return False
        if leader:
            record = replace(record, acquire_time=current.acquire_time,
                             leader_transitions=current.leader_transitions)
        else:
            record = replace(record, leader_transitions=current.leader_transitions + 1)
        try:
            self.lock.update(record)
        except Exception as err:
            _log.error("%s: failed to update lock: %s", self.name, err)
            return False
        self._set_observed(record)
        return True

    def _release(self) -> None:
        """Clear the holder (lease duration 1 s) if this candidate holds the lease."""
        if not self.is_leader():
            return
        stamp = format_micro_time(self._now())
        with self._state:
            transitions = self._observed.leader_transitions
        record = LeaderElectionRecord(lease_duration_seconds=1, acquire_time=stamp,
                                      renew_time=stamp, leader_transitions=transitions)
        try:
            self.lock.update(record)
        except Exception as err:
            _log.error("%s: failed to release lock: %s", self.name, err)
            return
        self._set_observed(record)

    def _maybe_report_transition(self) -> None:
        with self._state:
            holder = self._observed.holder_identity
            if holder == self._reported_leader:
                return
            self._reported_leader = holder
        _log.info("%s: new leader elected: %r", self.name, holder)
        if self.on_new_leader is not None:
            with handle_crash():
                self.on_new_leader(holder)

    def _set_observed(self, record: LeaderElectionRecord) -> None:
        with self._state:
            self._observed = record
            self._observed_time = self._clock.now()

    def _is_leader_locked(self) -> bool:
        return self._observed.holder_identity == self.lock.identity

    def _lease_valid_locked(self) -> bool:
        return self._observed_time + self.lease_duration > self._clock.now()

r"""The decisions of leader election, without I/O (client-go's ``tryAcquireOrRenew`` logic).

:class:`~kgen_runtime.controller.LeaderElector` (threads) and
:class:`~kgen_runtime.controller.AsyncLeaderElector` (asyncio) differ only in how they read
and write the Lease and how they wait. What a candidate observed, when the observed record
expires, which record to write for an acquisition, a renewal or a release, the order of the
calls of one attempt and what their failures mean, and when a new leader is reported are
decided here, once, so the two cannot drift. An attempt is a generator of
:class:`LockCall`\ s (sans-I/O): each elector makes the calls its own way (blocking or
awaited) and sends back the result, or throws in the error.

Validity is measured on the candidate's own monotonic clock from when *it* last saw the
record change (client-go's ``observedTime``), so clocks need not agree across machines.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Generator
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Literal

from kgen_runtime.api.coordination.v1.models import Lease, LeaseSpec
from kgen_runtime.events import EventRecorder
from kgen_runtime.meta import ObjectMeta, format_micro_time
from kgen_runtime.rest.errors import is_not_found

__all__ = [
    "JITTER_FACTOR",
    "Attempt",
    "ElectionState",
    "LeaderElectionRecord",
    "LeaseLockBase",
    "LockCall",
    "call_record",
    "check_durations",
]

_log = logging.getLogger("kgen_runtime.controller.leaderelection")

JITTER_FACTOR = 1.2
"""client-go's ``JitterFactor``: candidates wait ``retry_period`` * [1, 2.2) between tries."""


@dataclass(frozen=True, slots=True)
class LeaderElectionRecord:
    """The election state a Lease's spec carries (client-go's ``LeaderElectionRecord``)."""

    holder_identity: str = ""
    lease_duration_seconds: int = 0
    acquire_time: str | None = None
    renew_time: str | None = None
    leader_transitions: int = 0


@dataclass(frozen=True, slots=True)
class LockCall:
    """One call of an attempt on the lock: ``get()`` (answered with the record read),
    ``create(record)`` or ``update(record)`` (answered with ``None``)."""

    verb: Literal["get", "create", "update"]
    record: LeaderElectionRecord | None = None


Attempt = Generator[LockCall, Any, bool]
"""The calls of one attempt; it returns whether it succeeded."""


def call_record(call: LockCall) -> LeaderElectionRecord:
    """The record a ``create`` or ``update`` call writes."""
    if call.record is None:
        raise ValueError(f"a {call.verb} call carries no record")
    return call.record


def record_of(spec: LeaseSpec) -> LeaderElectionRecord:
    """The record a Lease's spec holds."""
    return LeaderElectionRecord(
        holder_identity=spec.holder_identity or "",
        lease_duration_seconds=spec.lease_duration_seconds or 0,
        acquire_time=spec.acquire_time,
        renew_time=spec.renew_time,
        leader_transitions=spec.lease_transitions or 0,
    )


def spec_of(record: LeaderElectionRecord) -> LeaseSpec:
    """The Lease spec holding ``record``."""
    return LeaseSpec(
        holder_identity=record.holder_identity or None,
        lease_duration_seconds=record.lease_duration_seconds,
        acquire_time=record.acquire_time,
        renew_time=record.renew_time,
        lease_transitions=record.leader_transitions,
    )


class LeaseLockBase:
    """What the blocking and the async Lease locks share: the Lease last read or written,
    its conversion to and from records, and the Events about it."""

    def __init__(
        self, name: str, identity: str, *, event_recorder: EventRecorder | None = None
    ) -> None:
        if not identity:
            raise ValueError("leader election requires a non-empty identity")
        self.name = name
        self.identity = identity
        self.event_recorder = event_recorder
        self._lease: Lease | None = None

    def describe(self) -> str:
        return f"lease {self.name}"

    def record_event(self, message: str) -> None:
        """Record a ``LeaderElection`` Event about the Lease (``"<identity> <message>"``),
        if there is a recorder and the Lease has been read."""
        if self.event_recorder is not None and self._lease is not None:
            self.event_recorder.event(self._lease, "Normal", "LeaderElection",
                                      f"{self.identity} {message}")

    def _read(self, lease: Lease) -> LeaderElectionRecord:
        self._lease = lease
        return record_of(lease.spec or LeaseSpec())

    def _new_lease(self, record: LeaderElectionRecord) -> Lease:
        return Lease(metadata=ObjectMeta(name=self.name), spec=spec_of(record))

    def _updated_lease(self, record: LeaderElectionRecord) -> Lease:
        if self._lease is None:
            raise RuntimeError("lease not initialized, call get or create first")
        lease = self._lease.deepcopy()
        lease.spec = spec_of(record)
        return lease


def check_durations(lease_duration: float, renew_deadline: float, retry_period: float) -> None:
    """Refuse settings under which two candidates could lead at once.

    Raises:
        ValueError: not lease_duration > renew_deadline > JITTER_FACTOR * retry_period > 0.
    """
    if retry_period <= 0:
        raise ValueError("retry_period must be greater than zero")
    if renew_deadline <= JITTER_FACTOR * retry_period:
        raise ValueError(f"renew_deadline must be greater than retry_period*{JITTER_FACTOR}")
    if lease_duration <= renew_deadline:
        raise ValueError("lease_duration must be greater than renew_deadline")


class ElectionState:
    """What one candidate observed of the Lease, and the records it decides to write.

    An attempt (:meth:`renewal`, else a read followed by :meth:`observe` and
    :meth:`claim`) yields the record to write, or ``None`` when another candidate validly
    holds the lease; after a successful write the elector calls :meth:`wrote`. Thread-safe.

    Args:
        identity: This candidate's holder identity.
        lease_duration: Seconds a holder's lease lasts without renewal.
        clock_now: Monotonic time of the lease validity.
        now: Wall-clock time written into the records.
    """

    def __init__(
        self,
        identity: str,
        lease_duration: float,
        clock_now: Callable[[], float],
        now: Callable[[], datetime],
    ) -> None:
        self.identity = identity
        self.lease_duration = lease_duration
        self._clock_now = clock_now
        self._now = now
        self._lock = threading.Lock()
        self._observed = LeaderElectionRecord()
        self._observed_time = float("-inf")
        self._reported_leader = ""

    def _fresh(self) -> LeaderElectionRecord:
        stamp = format_micro_time(self._now())
        return LeaderElectionRecord(
            holder_identity=self.identity,
            lease_duration_seconds=int(self.lease_duration),
            acquire_time=stamp,
            renew_time=stamp,
        )

    def renewal(self) -> LeaderElectionRecord | None:
        """The record renewing this candidate's lease over the one last seen (client-go's
        fast path), if it leads and its lease is valid; else ``None`` (read first)."""
        record = self._fresh()
        with self._lock:
            if not (self._is_leader_locked() and self._valid_locked()):
                return None
            observed = self._observed
        return replace(record, acquire_time=observed.acquire_time,
                       leader_transitions=observed.leader_transitions)

    def initial(self) -> LeaderElectionRecord:
        """The record creating a Lease that does not exist yet."""
        return self._fresh()

    def observe(self, current: LeaderElectionRecord) -> None:
        """Note the record just read; a changed record restarts its validity."""
        with self._lock:
            if current != self._observed:
                self._observed = current
                self._observed_time = self._clock_now()

    def claim(self) -> LeaderElectionRecord | None:
        """After :meth:`observe`: the record acquiring or renewing the lease, or ``None`` if
        another candidate holds it and its lease has not expired."""
        record = self._fresh()
        with self._lock:
            current = self._observed
            if current.holder_identity and self._valid_locked() and not self._is_leader_locked():
                return None
            leader = self._is_leader_locked()
        if leader:
            return replace(record, acquire_time=current.acquire_time,
                           leader_transitions=current.leader_transitions)
        return replace(record, leader_transitions=current.leader_transitions + 1)

    def release(self) -> LeaderElectionRecord | None:
        """The record clearing the holder (lease duration 1 s) if this candidate leads."""
        stamp = format_micro_time(self._now())
        with self._lock:
            if not self._is_leader_locked():
                return None
            transitions = self._observed.leader_transitions
        return LeaderElectionRecord(lease_duration_seconds=1, acquire_time=stamp,
                                    renew_time=stamp, leader_transitions=transitions)

    def wrote(self, record: LeaderElectionRecord) -> None:
        """``record`` was written: it is now the observed one."""
        with self._lock:
            self._observed = record
            self._observed_time = self._clock_now()

    def new_leader(self) -> str | None:
        """The holder, if it changed since the last call (a transition to report)."""
        with self._lock:
            holder = self._observed.holder_identity
            if holder == self._reported_leader:
                return None
            self._reported_leader = holder
        return holder

    def try_acquire_or_renew(self, name: str, lock: str) -> Attempt:
        """client-go's ``tryAcquireOrRenew``: at most one read and one write of the Lease
        (a renewal over the record last seen first, when leading); ``name`` and ``lock``
        name the election and the lock in logs."""
        renewal = self.renewal()
        if renewal is not None:  # fast path: renew over the Lease as last seen
            try:
                yield LockCall("update", renewal)
            except Exception as err:
                _log.error("%s: failed to update lock optimistically: %s, falling back to "
                           "slow path", name, err)
            else:
                self.wrote(renewal)
                return True
        try:
            current = yield LockCall("get")
        except Exception as err:
            if not is_not_found(err):
                _log.error("%s: error retrieving %s: %s", name, lock, err)
                return False
            record = self.initial()
            try:
                yield LockCall("create", record)
            except Exception as create_err:
                _log.error("%s: error initially creating leader election record: %s",
                           name, create_err)
                return False
            self.wrote(record)
            return True
        self.observe(current)
        claim = self.claim()
        if claim is None:
            return False
        try:
            yield LockCall("update", claim)
        except Exception as err:
            _log.error("%s: failed to update lock: %s", name, err)
            return False
        self.wrote(claim)
        return True

    def try_release(self, name: str) -> Attempt:
        """Clear the holder (lease duration 1 s) if this candidate holds the lease."""
        record = self.release()
        if record is None:
            return False
        try:
            yield LockCall("update", record)
        except Exception as err:
            _log.error("%s: failed to release lock: %s", name, err)
            return False
        self.wrote(record)
        return True

    def is_leader(self) -> bool:
        """Whether the last observed record names this candidate."""
        with self._lock:
            return self._is_leader_locked()

    def leader(self) -> str:
        """The holder in the last observed record (``""`` if none)."""
        with self._lock:
            return self._observed.holder_identity

    def healthy(self, max_tolerable_expired_lease: float) -> bool:
        """False only for a leader whose lease expired more than
        ``max_tolerable_expired_lease`` seconds ago (client-go's ``HealthzAdaptor``)."""
        with self._lock:
            leader = self._is_leader_locked()
            observed = self._observed_time
        if not leader:
            return True
        return self._clock_now() - observed <= self.lease_duration + max_tolerable_expired_lease

    def _is_leader_locked(self) -> bool:
        return self._observed.holder_identity == self.identity

    def _valid_locked(self) -> bool:
        return self._observed_time + self.lease_duration > self._clock_now()
